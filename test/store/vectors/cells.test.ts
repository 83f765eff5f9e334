/**
 * The inverted file's cells on their own (no SQL): two-level k-means on unit vectors,
 * assignment, and the probe order a search reads cells in.
 */
import { describe, expect, it } from 'vitest';
import { Cells } from '../../../src/store/vectors/cells.js';
import { normalize } from '../../../src/store/vectors/vectors.js';

/** Deterministic pseudo-random numbers in [0, 1). */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

/** `n` unit vectors around `centres` (vector i near centre i % centres.length). */
function around(centres: Float32Array[], n: number, spread: number, seed: number): Float32Array[] {
  const next = random(seed);
  return Array.from({ length: n }, (_, i) => {
    const centre = centres[i % centres.length]!;
    return normalize(centre.map((x) => x + spread * (next() - 0.5)));
  });
}

function flat(vectors: Float32Array[], dims: number): Float32Array {
  const out = new Float32Array(vectors.length * dims);
  for (const [i, v] of vectors.entries()) out.set(v, i * dims);
  return out;
}

function dot(a: Float32Array, b: Float32Array): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += a[i]! * b[i]!;
  return sum;
}

const DIMS = 24;
const next = random(7);
const centres = Array.from({ length: 12 }, () => normalize(Float32Array.from({ length: DIMS }, () => next() - 0.5)));

describe('Cells', () => {
  it('trains unit centroids, the same ones from the same sample', () => {
    const sample = flat(around(centres, 600, 0.3, 1), DIMS);
    const a = Cells.train(sample, DIMS, 12);
    const b = Cells.train(sample, DIMS, 12);
    expect(a.count).toBeGreaterThan(1);
    expect([...a.centroids]).toEqual([...b.centroids]);
    for (let c = 0; c < a.count; c++) {
      const centroid = a.centroids.subarray(c * DIMS, (c + 1) * DIMS);
      expect(dot(centroid, centroid)).toBeCloseTo(1, 5);
    }
  });

  it('puts well-separated clusters each in one cell, and a vector in the cell nearest to it', () => {
    const sample = flat(around(centres, 1200, 0.2, 2), DIMS);
    const cells = Cells.train(sample, DIMS, 12);
    const members = around(centres, 240, 0.2, 3);
    const cellsOfCentre = centres.map(() => new Set<number>());
    for (const [i, v] of members.entries()) cellsOfCentre[i % centres.length]!.add(cells.assign(v));
    // Each cluster in one cell (with as many cells as clusters, k-means may still merge two).
    for (const found of cellsOfCentre) expect(found.size).toBe(1);
    // … and the clusters spread over the cells, not all in one.
    expect(new Set(cellsOfCentre.map((found) => [...found][0])).size).toBeGreaterThanOrEqual(8);
    // Searching every group is the exact nearest centroid.
    for (const v of members) {
      const exact = cells.nearest(v, 1)[0]!;
      expect(cells.assign(v, cells.count)).toBe(exact);
      const score = (c: number) => dot(v, cells.centroids.subarray(c * DIMS, (c + 1) * DIMS));
      for (let c = 0; c < cells.count; c++) expect(score(c)).toBeLessThanOrEqual(score(exact) + 1e-6);
    }
  });

  it('lists the n nearest cells, nearest first, each once', () => {
    const cells = Cells.train(flat(around(centres, 600, 0.3, 4), DIMS), DIMS, 12);
    const query = around(centres, 1, 0.3, 5)[0]!;
    const order = cells.nearest(query, 5);
    expect(order).toHaveLength(5);
    expect(new Set(order).size).toBe(5);
    const scores = order.map((c) => dot(query, cells.centroids.subarray(c * DIMS, (c + 1) * DIMS)));
    expect([...scores].sort((x, y) => y - x)).toEqual(scores);
    expect(cells.nearest(query, cells.count + 3)).toHaveLength(cells.count);
  });
});
