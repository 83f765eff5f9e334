import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/core/index.js';
import { expectQmdError, type Sandbox, sandbox } from './helpers.js';

let box: Sandbox;
let store: Store;

beforeEach(() => {
  box = sandbox();
  store = openStore(box.index);
});

afterEach(async () => {
  await store.close();
  box.cleanup();
});

describe('collections', () => {
  it('adds a collection, indexes it at once, lists it and removes it', async () => {
    const root = box.notes('notes', {
      'a.md': '# Alpha\n\nfirst note\n',
      'sub/b.md': 'second note\n',
      'c.txt': 'not markdown',
    });
    const report = await store.addCollection(root);
    expect(report).toMatchObject({
      collections: 1,
      scanned: 2,
      added: 2,
      updated: 0,
      removed: 0,
      unchanged: 0,
      errors: [],
    });

    const [info] = store.listCollections();
    expect(info).toMatchObject({ name: 'notes', root: fs.realpathSync(root), mask: '**/*.md', documents: 2 });
    expect(Number.isNaN(Date.parse(info?.updatedAt ?? ''))).toBe(false);
    expect(store.search('note').map((hit) => hit.file)).toEqual(
      expect.arrayContaining(['notes/a.md', 'notes/sub/b.md']),
    );

    store.removeCollection('notes');
    expect(store.listCollections()).toEqual([]);
    expect(store.search('note')).toEqual([]);
    expect(store.status().documents).toBe(0);
  });

  it('takes the title from the first heading, else from the file name', async () => {
    const root = box.notes('notes', {
      'heading.md': '---\ntitle: ignored\n---\n\nintro\n\n## Second Level *Title*  \n\n# Later\n',
      'setext.md': 'Setext Title\n============\n\nbody\n',
      'fenced.md': '```\n# not a heading\n```\n\nplain text only\n',
      'plain-name.md': 'no heading here\n',
    });
    await store.addCollection(root);
    expect(store.get('notes/heading.md').title).toBe('Second Level *Title*');
    expect(store.get('notes/setext.md').title).toBe('Setext Title');
    expect(store.get('notes/fenced.md').title).toBe('fenced');
    expect(store.get('notes/plain-name.md').title).toBe('plain-name');
  });

  it('names a collection after its directory, made valid and unique', async () => {
    const first = box.notes('a/My Notes!', { 'x.md': 'x\n' });
    const second = box.notes('b/My Notes!', { 'y.md': 'y\n' });
    await store.addCollection(first);
    await store.addCollection(second);
    expect(store.listCollections().map((c) => c.name)).toEqual(['My-Notes', 'My-Notes-2']);
  });

  it('refuses a duplicate name or root with COLLECTION_EXISTS', async () => {
    const root = box.notes('notes', { 'a.md': 'a\n' });
    const other = box.notes('other', { 'b.md': 'b\n' });
    await store.addCollection(root, { name: 'work' });
    const byRoot = await expectQmdError(() => store.addCollection(path.join(root, '.')), 'COLLECTION_EXISTS');
    expect(byRoot.message).toContain('"work"');
    await expectQmdError(() => store.addCollection(other, { name: 'work' }), 'COLLECTION_EXISTS');
    expect(store.listCollections()).toHaveLength(1);
  });

  it('refuses a missing directory, a file, a bad name and a mask that climbs out', async () => {
    const root = box.notes('notes', { 'a.md': 'a\n' });
    await expectQmdError(() => store.addCollection(path.join(box.dir, 'missing')), 'NO_SUCH_DIRECTORY');
    await expectQmdError(() => store.addCollection(path.join(root, 'a.md')), 'NO_SUCH_DIRECTORY');
    await expectQmdError(() => store.addCollection(root, { name: 'a/b' }), 'BAD_ARGUMENT');
    await expectQmdError(() => store.addCollection(root, { name: '..' }), 'BAD_ARGUMENT');
    await expectQmdError(() => store.addCollection(root, { mask: '../**/*.md' }), 'BAD_ARGUMENT');
    await expectQmdError(() => store.addCollection(root, { mask: '/etc/*' }), 'BAD_ARGUMENT');
    expect(store.listCollections()).toEqual([]);
  });

  it('indexes only what the mask matches', async () => {
    const root = box.notes('notes', { 'a.md': 'alpha\n', 'b.txt': 'beta\n', 'deep/c.txt': 'gamma\n' });
    await store.addCollection(root, { mask: '**/*.txt' });
    expect(store.status().documents).toBe(2);
    expect(store.search('alpha')).toEqual([]);
    expect(store.search('gamma')[0]?.file).toBe('notes/deep/c.txt');
  });

  it('gives each document a stable docid: 8 hex of sha256(collection/path)', async () => {
    const root = box.notes('notes', { 'a.md': 'alpha\n' });
    await store.addCollection(root);
    const expected = createHash('sha256').update('notes/a.md').digest('hex').slice(0, 8);
    expect(store.get('notes/a.md').docid).toBe(`#${expected}`);
    store.removeCollection('notes');
    await store.addCollection(root);
    expect(store.get('notes/a.md').docid).toBe(`#${expected}`);
  });

  it('refuses to remove an unknown collection', async () => {
    await expectQmdError(() => store.removeCollection('nope'), 'UNKNOWN_COLLECTION');
  });

  it('reports status', async () => {
    const root = box.notes('notes', { 'a.md': 'alpha\n', 'b.md': 'beta\n' });
    await store.addCollection(root);
    const status = store.status();
    expect(status).toMatchObject({
      index: box.index,
      documents: 2,
      embeddings: { model: null, chunks: 0, embeddedChunks: 0, vectorBackend: 'none' },
    });
    expect(status.collections.map((c) => [c.name, c.documents])).toEqual([['notes', 2]]);
    expect(status.sizeBytes).toBeGreaterThan(0);
  });
});
