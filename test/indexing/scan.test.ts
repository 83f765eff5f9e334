import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { maxBatchBytes, type ReadFile, type ScanInput, scanCollection } from '../../src/indexing/scan.js';
import { type Sandbox, sandbox } from '../store/helpers.js';

let box: Sandbox;

beforeEach(() => {
  box = sandbox();
});

afterEach(() => {
  box.cleanup();
});

/** Scans `root` and records each batch handed to `onBatch` (its file count, text bytes and paths seen). */
async function batchesOf(
  root: string,
  known: ScanInput['known'] = () => undefined,
): Promise<{ files: number; bytes: number; seen: string[] }[]> {
  const batches: { files: number; bytes: number; seen: string[] }[] = [];
  const scan = await scanCollection({
    collection: 'notes',
    root,
    mask: '**/*.md',
    known,
    onBatch: (files: ReadFile[], seen: string[]) => {
      batches.push({ files: files.length, bytes: files.reduce((sum, f) => sum + f.size, 0), seen: [...seen] });
    },
  });
  expect(scan.found).toBe(batches.reduce((sum, b) => sum + b.seen.length, 0));
  // The scan itself keeps no text and no paths: what it returns is counts, and at most three
  // example folders per ignore reason (docs/design.md §8.5).
  expect(Object.keys(scan).sort()).toEqual([
    'collection',
    'errors',
    'found',
    'ignored',
    'listed',
    'skipped',
    'stopped',
    'unchangedByStat',
  ]);
  expect(typeof scan.found).toBe('number');
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

  it('hands over every file found as seen, unread ones too, at most 256 paths a batch', async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 600; i++) files[`n${String(i).padStart(3, '0')}.md`] = `# Note ${i}\n`;
    const root = box.notes('notes', files);
    // Every file unchanged by stat: none is read, yet each must be seen (or update deletes it).
    const batches = await batchesOf(root, (relative) => {
      const stat = fs.statSync(path.join(root, relative));
      return { mtimeMs: stat.mtimeMs, size: stat.size, hash: 'unused' };
    });
    expect(batches.map((b) => b.files)).toEqual([0, 0, 0]);
    expect(batches.map((b) => b.seen.length)).toEqual([256, 256, 88]);
    expect(batches.flatMap((b) => b.seen)).toEqual(Object.keys(files));
  });
});

describe('an aborted listing is never taken for the whole folder', () => {
  // tinyglobby returns what it has listed (even nothing) when its signal fires: a scan that
  // went on with it would have every other file of the collection deleted by the write phase.
  const input = (root: string, options: Partial<ScanInput>): ScanInput => ({
    collection: 'notes',
    root,
    mask: '**/*.md',
    known: () => undefined,
    onBatch: () => {
      throw new Error('nothing may be handed on');
    },
    ...options,
  });

  it('cancelled (signal): rejects with ABORTED', async () => {
    const root = box.notes('notes', { 'a.md': 'alpha\n' });
    await expect(scanCollection(input(root, { signal: AbortSignal.abort() }))).rejects.toMatchObject({
      code: 'ABORTED',
    });
  });

  it('stopped (stop): returns stopped with nothing found', async () => {
    const root = box.notes('notes', { 'a.md': 'alpha\n' });
    const scan = await scanCollection(input(root, { stop: AbortSignal.abort() }));
    expect(scan).toMatchObject({ stopped: true, found: 0, skipped: false });
  });
});
