/**
 * `stop` (Ctrl-C, issue 31) for indexing: `collection add` and `update` end after the batch of
 * files being read, write what was read, and say so in their report; the next run goes on from
 * there. Real SQLite files; `stop` is fired from the work's own progress, so no timing.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/core/index.js';
import { Sqlite } from '../../src/store/sqlite.js';
import { type Sandbox, sandbox } from '../store/helpers.js';

let box: Sandbox;
const stores: Store[] = [];
const open = (options: Parameters<typeof openStore>[1] = {}) => {
  const store = openStore(box.index, options);
  stores.push(store);
  return store;
};

beforeEach(() => {
  box = sandbox();
});
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
  box.cleanup();
});

/** `n` one-line notes, `n000.md`…, each with its own word. */
function manyNotes(n: number, word = 'note'): Record<string, string> {
  const files: Record<string, string> = {};
  for (let i = 0; i < n; i++) files[`n${String(i).padStart(3, '0')}.md`] = `# ${word} ${i}\n\n${word}${i}\n`;
  return files;
}

function integrity(): { check: string; documents: number; fts: number } {
  const db = new Sqlite(box.index, { readOnly: true });
  try {
    return {
      check: db.pragmaValue<string>('integrity_check') ?? '',
      documents: db.column<[], number>('SELECT count(*) FROM documents').get() ?? -1,
      fts: db.column<[], number>('SELECT count(*) FROM documents_fts').get() ?? -1,
    };
  } finally {
    db.close();
  }
}

describe('collection add with stop', () => {
  it('stopped after the first batch of files: the collection is added with them, and update adds the rest', async () => {
    const root = box.notes('notes', manyNotes(600));
    const stop = new AbortController();
    const store = open();
    const report = await store.addCollection(root, {
      name: 'notes',
      stop: stop.signal,
      onProgress: (p) => {
        if (p.stage === 'reading' && p.done === 256) stop.abort();
      },
    });
    expect(report).toMatchObject({ added: 256, removed: 0 });
    expect(report.stopped).toEqual({
      complete: [],
      partial: { collection: 'notes', read: 256, listed: 600 },
      untouched: [],
    });
    expect(store.listCollections()).toMatchObject([{ name: 'notes', documents: 256 }]);
    expect(await store.update()).toMatchObject({ added: 344, unchanged: 256, removed: 0 });
    expect(integrity()).toEqual({ check: 'ok', documents: 600, fts: 600 });
  });

  it('stopped before any file was read: nothing is added', async () => {
    const root = box.notes('notes', manyNotes(3));
    const store = open();
    const report = await store.addCollection(root, { name: 'notes', stop: AbortSignal.abort() });
    expect(report).toMatchObject({ added: 0, stopped: { complete: [], untouched: ['notes'] } });
    expect(report.stopped?.partial).toBeUndefined();
    expect(store.listCollections()).toEqual([]);
  });
});

describe('update with stop', () => {
  it('keeps the collections read in full and the files read of the one being read; deletes nothing there', async () => {
    const a = box.notes('a', { 'x.md': 'xray\n' });
    const b = box.notes('b', manyNotes(600, 'old'));
    const c = box.notes('c', { 'y.md': 'yankee\n' });
    const store = open();
    for (const [name, root] of [
      ['a', a],
      ['b', b],
      ['c', c],
    ] as const)
      await store.addCollection(root, { name });
    fs.rmSync(path.join(a, 'x.md'));
    fs.writeFileSync(path.join(a, 'z.md'), 'zulu\n');
    for (const [file, text] of Object.entries(manyNotes(600, 'new'))) fs.writeFileSync(path.join(b, file), text);
    fs.rmSync(path.join(b, 'n599.md'));
    fs.rmSync(path.join(c, 'y.md'));

    const stop = new AbortController();
    const report = await store.update({
      stop: stop.signal,
      onProgress: (p) => {
        if (p.stage === 'reading' && p.collection === 'b' && p.done === 256) stop.abort();
      },
    });
    expect(report.stopped).toEqual({
      complete: ['a'],
      partial: { collection: 'b', read: 256, listed: 599 },
      untouched: ['c'],
    });
    // a in full: x.md gone, z.md added; b: the first 256 files rewritten, n599.md still there; c untouched.
    expect(report).toMatchObject({ added: 1, updated: 256, removed: 1 });
    expect(store.search('xray')).toEqual([]);
    expect(store.search('new255').map((h) => h.file)).toEqual(['b/n255.md']);
    expect(store.search('old256').map((h) => h.file)).toEqual(['b/n256.md']);
    expect(store.search('old599').map((h) => h.file)).toEqual(['b/n599.md']);
    expect(store.search('yankee').map((h) => h.file)).toEqual(['c/y.md']);
    expect(integrity().check).toBe('ok');

    const rest = await store.update();
    expect(rest.stopped).toBeUndefined();
    expect(rest).toMatchObject({ updated: 599 - 256, removed: 2 });
    expect(integrity()).toEqual({ check: 'ok', documents: 1 + 599, fts: 600 });
  });
});
