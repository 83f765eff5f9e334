import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { maxBatchBytes, type ReadFile, scanCollection } from '../../src/store/scan.js';
import { type Sandbox, sandbox } from './helpers.js';

let box: Sandbox;

beforeEach(() => {
  box = sandbox();
});

afterEach(() => {
  box.cleanup();
});

/** Scans `root` and records each batch handed to `onBatch` (its file count and text bytes). */
async function batchesOf(root: string): Promise<{ files: number; bytes: number }[]> {
  const batches: { files: number; bytes: number }[] = [];
  const scan = await scanCollection({
    collection: 'notes',
    root,
    mask: '**/*.md',
    known: () => undefined,
    onBatch: (files: ReadFile[]) => {
      batches.push({ files: files.length, bytes: files.reduce((sum, f) => sum + f.size, 0) });
    },
  });
  expect(scan.found.size).toBe(batches.reduce((sum, b) => sum + b.files, 0));
  // The scan itself keeps no text: what it returns is paths and counts.
  expect(Object.keys(scan).sort()).toEqual(['collection', 'errors', 'found', 'listed', 'skipped', 'unchangedByStat']);
  return batches;
}

describe('the read phase hands files over in bounded batches (docs/design.md §8.5)', () => {
  it('at most 256 files a batch', async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 600; i++) files[`n${String(i).padStart(3, '0')}.md`] = `# Note ${i}\n\ntext ${i}\n`;
    const batches = await batchesOf(box.notes('notes', files));
    expect(batches.map((b) => b.files)).toEqual([256, 256, 88]);
  });

  it('a batch is handed over as soon as its text reaches the byte bound', async () => {
    const big = `# Big\n\n${'word '.repeat(Math.ceil(maxBatchBytes / 2 / 5))}\n`;
    const batches = await batchesOf(box.notes('notes', { 'a.md': big, 'b.md': big, 'c.md': big, 'd.md': 'small\n' }));
    // a + b reach the bound; c and d go together at the end.
    expect(batches.map((b) => b.files)).toEqual([2, 2]);
    for (const batch of batches.slice(0, -1)) expect(batch.bytes).toBeGreaterThanOrEqual(maxBatchBytes);
    expect(batches.every((b) => b.bytes < 2 * maxBatchBytes)).toBe(true);
  });
});
