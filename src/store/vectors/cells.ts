/**
 * The cells of the vector index's inverted file (docs/design.md §8.3): centroids that split
 * the vectors into groups of a few hundred, so a search reads only the codes of the cells
 * nearest to its query. Pure arithmetic on unit vectors (cosine = dot product); no SQL.
 *
 * Trained by two-level k-means (spherical: centroids are normalized means) on a sample: first
 * `√cells` groups, then each group's sample split into cells in proportion to its size. The
 * levels make training and assignment cheap in JS: assigning a vector compares it with the
 * group centres and then only with the cells of its nearest groups (at 1,024 cells × 768
 * dims, 128 dot products instead of 1,024), where a flat k-means would compare every sample
 * with every centroid on each round. A query is compared with every centroid (exact, under a
 * millisecond at 1,024 × 768) to choose the cells it reads.
 */

/**
 * How many of a vector's nearest groups `assign` looks inside. Measured on 200k clustered
 * 768-dim vectors and 512 cells (bench/experiments/vec/results-ivf.md): the share of the exact
 * top 10 inside the 32 probed cells is 0.937 with 3 groups, 0.953 with 8, 0.967 with all
 * (exact assignment), at 184, 308 and 762 µs a vector.
 */
const GROUPS_SEARCHED = 8;
const ROUNDS = 6;

export class Cells {
  /** The centre of each group (normalized mean of its cells' centroids), `groups × dims`. */
  private readonly groupCentres: Float32Array;
  private readonly members: number[][];

  constructor(
    readonly dims: number,
    /** `count × dims`, each row a unit vector. */
    readonly centroids: Float32Array,
    /** The group of each cell. */
    readonly groupOf: Int32Array,
  ) {
    const groups = groupOf.reduce((max, g) => Math.max(max, g + 1), 0);
    this.members = Array.from({ length: groups }, () => [] as number[]);
    for (const [cell, group] of groupOf.entries()) this.members[group]?.push(cell);
    this.groupCentres = new Float32Array(groups * dims);
    for (const [group, cells] of this.members.entries()) {
      const centre = this.groupCentres.subarray(group * dims, (group + 1) * dims);
      for (const cell of cells) addInto(centre, centroids, cell * dims);
      normalizeInPlace(centre);
    }
  }

  get count(): number {
    return this.groupOf.length;
  }

  /** The cell a vector belongs to (the nearest centroid among the nearest groups' cells). */
  assign(vector: Float32Array, searched = GROUPS_SEARCHED): number {
    const groups = topIndexes(this.groupCentres, this.members.length, this.dims, vector, searched);
    let best = -Infinity;
    let found = 0;
    for (const group of groups) {
      for (const cell of this.members[group] ?? []) {
        const score = dotAt(vector, this.centroids, cell * this.dims, this.dims);
        if (score > best) {
          best = score;
          found = cell;
        }
      }
    }
    return found;
  }

  /** The `n` cells whose centroids are nearest to `query`, nearest first. */
  nearest(query: Float32Array, n: number): number[] {
    return topIndexes(this.centroids, this.count, this.dims, query, n);
  }

  /**
   * Trains `count` cells on `sample` (unit vectors, `size × dims`), deterministically: the
   * same sample gives the same cells.
   */
  static train(sample: Float32Array, dims: number, count: number, rounds = ROUNDS): Cells {
    const size = Math.floor(sample.length / dims);
    const groups = Math.max(1, Math.min(size, Math.round(Math.sqrt(count))));
    const top = kmeans(sample, dims, allIndexes(size), groups, rounds);
    const centroids: Float32Array[] = [];
    const groupOf: number[] = [];
    for (const [group, points] of membersOf(top.assignment, groups).entries()) {
      if (points.length === 0) continue;
      const wanted = Math.max(1, Math.min(points.length, Math.round((count * points.length) / size)));
      const inner = kmeans(sample, dims, points, wanted, rounds);
      for (let c = 0; c < wanted; c++) {
        centroids.push(inner.centroids.slice(c * dims, (c + 1) * dims));
        groupOf.push(group);
      }
    }
    // Renumber groups densely (a group with no point was skipped).
    const dense = new Map<number, number>();
    const flat = new Float32Array(centroids.length * dims);
    for (const [cell, centroid] of centroids.entries()) flat.set(centroid, cell * dims);
    const ids = Int32Array.from(groupOf, (g) => {
      if (!dense.has(g)) dense.set(g, dense.size);
      return dense.get(g) as number;
    });
    return new Cells(dims, flat, ids);
  }
}

/**
 * Spherical k-means over the rows `points` of `data`: starts at `k` evenly spaced points,
 * then `ROUNDS` rounds of assignment and normalized means. A cell left empty keeps its centroid.
 */
function kmeans(
  data: Float32Array,
  dims: number,
  points: readonly number[],
  k: number,
  rounds: number,
): { centroids: Float32Array; assignment: Int32Array } {
  const centroids = new Float32Array(k * dims);
  for (let c = 0; c < k; c++) {
    const at = points[Math.floor((c * points.length) / k)] as number;
    centroids.set(data.subarray(at * dims, (at + 1) * dims), c * dims);
  }
  const assignment = new Int32Array(points.length);
  for (let round = 0; round < rounds; round++) {
    for (const [i, at] of points.entries()) {
      assignment[i] = topIndexes(centroids, k, dims, data.subarray(at * dims, (at + 1) * dims), 1)[0] as number;
    }
    const sums = new Float32Array(k * dims);
    const counts = new Int32Array(k);
    for (const [i, at] of points.entries()) {
      const c = assignment[i] as number;
      counts[c] = (counts[c] as number) + 1;
      addInto(sums.subarray(c * dims, (c + 1) * dims), data, at * dims);
    }
    for (let c = 0; c < k; c++) {
      if (counts[c] === 0) continue;
      const sum = sums.subarray(c * dims, (c + 1) * dims);
      normalizeInPlace(sum);
      centroids.set(sum, c * dims);
    }
  }
  // The final assignment, in terms of the caller's point indexes.
  const byPoint = new Int32Array(points.length);
  for (const [i, at] of points.entries()) {
    byPoint[i] = topIndexes(centroids, k, dims, data.subarray(at * dims, (at + 1) * dims), 1)[0] as number;
  }
  return { centroids, assignment: byPoint };
}

function membersOf(assignment: Int32Array, groups: number): number[][] {
  const members = Array.from({ length: groups }, () => [] as number[]);
  for (const [point, group] of assignment.entries()) members[group]?.push(point);
  return members;
}

function allIndexes(n: number): number[] {
  return Array.from({ length: n }, (_, i) => i);
}

/** The indexes of the `n` rows of `rows` (`count × dims`) with the largest dot product with `v`. */
function topIndexes(rows: Float32Array, count: number, dims: number, v: Float32Array, n: number): number[] {
  if (n === 1) {
    let best = -Infinity;
    let found = 0;
    for (let r = 0; r < count; r++) {
      const score = dotAt(v, rows, r * dims, dims);
      if (score > best) {
        best = score;
        found = r;
      }
    }
    return [found];
  }
  const scores = new Float64Array(count);
  for (let r = 0; r < count; r++) scores[r] = dotAt(v, rows, r * dims, dims);
  return allIndexes(count)
    .sort((a, b) => (scores[b] as number) - (scores[a] as number) || a - b)
    .slice(0, n);
}

function dotAt(v: Float32Array, rows: Float32Array, offset: number, dims: number): number {
  let sum = 0;
  for (let d = 0; d < dims; d++) sum += (v[d] as number) * (rows[offset + d] as number);
  return sum;
}

function addInto(target: Float32Array, source: Float32Array, offset: number): void {
  for (let d = 0; d < target.length; d++) target[d] = (target[d] as number) + (source[offset + d] as number);
}

function normalizeInPlace(v: Float32Array): void {
  let sum = 0;
  for (const x of v) sum += x * x;
  const norm = Math.sqrt(sum);
  if (norm === 0) return;
  for (let d = 0; d < v.length; d++) v[d] = (v[d] as number) / norm;
}
