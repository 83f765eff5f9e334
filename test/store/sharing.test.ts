import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/core/index.js';
import { type Sandbox, sandbox } from './helpers.js';

// Two stores on one file are two connections, as two processes would have.
let box: Sandbox;
let writer: Store;
let reader: Store;

beforeEach(() => {
  box = sandbox();
  writer = openStore(box.index);
  reader = openStore(box.index, { readonly: true });
});

afterEach(async () => {
  await reader.close();
  await writer.close();
  box.cleanup();
});

describe('one index, several connections', () => {
  it('a reader sees an update once it commits', async () => {
    const root = box.notes('notes', { 'a.md': 'alpha\n' });
    expect(reader.search('alpha')).toEqual([]);
    await writer.addCollection(root);
    expect(reader.search('alpha').map((hit) => hit.file)).toEqual(['notes/a.md']);
    fs.writeFileSync(path.join(root, 'b.md'), 'bravo\n');
    await writer.update();
    expect(reader.status().documents).toBe(2);
  });

  it('two writers updating the same collection both succeed and agree', async () => {
    const root = box.notes('notes', { 'a.md': 'alpha\n' });
    await writer.addCollection(root);
    const second = openStore(box.index);
    try {
      fs.writeFileSync(path.join(root, 'b.md'), 'bravo\n');
      // Both read before either writes; the second applies its scan over the first's rows.
      const [one, two] = await Promise.all([writer.update(), second.update()]);
      expect(one.added + two.added).toBeGreaterThanOrEqual(1);
      expect(reader.status().documents).toBe(2);
      expect(reader.search('bravo')).toHaveLength(1);
    } finally {
      await second.close();
    }
  });

  it('a collection added by another connection is refused here with COLLECTION_EXISTS', async () => {
    const root = box.notes('notes', { 'a.md': 'alpha\n' });
    const second = openStore(box.index);
    try {
      const results = await Promise.allSettled([writer.addCollection(root), second.addCollection(root)]);
      expect(results.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
      const rejected = results.find((r) => r.status === 'rejected');
      expect((rejected as PromiseRejectedResult).reason).toMatchObject({ code: 'COLLECTION_EXISTS' });
      expect(reader.listCollections()).toHaveLength(1);
    } finally {
      await second.close();
    }
  });
});
