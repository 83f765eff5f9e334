/**
 * The folder filter (`SearchOptions.folder`) of BM25 on a real index: `search`, and `query`
 * on an index without vectors (BM25 alone), inline and in the query worker. Every note says
 * "quokka", so without the filter each query finds all of them: the tests fail if the filter
 * is ignored, or if it matches by characters instead of whole segments (`2024x/`, `2024.md`,
 * `2024-old/` sit beside `2024/`). A folder that could leave a collection is refused with the
 * same codes `get` uses, on every path (test/support/path-escape.ts).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore } from '../../src/core/index.js';
import type { SearchHit, Store, StoreOptions } from '../../src/core/types.js';
import type { WorkerScript } from '../../src/search/query-worker-client.js';
import { expectQmdError, type Sandbox, sandbox } from '../store/helpers.js';
import { pathEscapeCases } from '../support/path-escape.js';

const SCRIPT: WorkerScript = {
  file: new URL('../../src/search/query-worker.ts', import.meta.url),
  execArgv: ['--import', 'tsx'],
};

const note = (title: string) => `# ${title}\n\nA quokka was seen here.\n`;

/** Two collections; `2024` is a folder in both, and names that start like it sit beside it. */
const FOLDER_NOTES = {
  notes: {
    '2024/jan.md': note('January'),
    '2024/q1/feb.md': note('February'),
    '2024x/mar.md': note('March'),
    '2024-old/apr.md': note('April'),
    '2024.md': note('The year'),
    'root.md': note('Root'),
  },
  work: {
    '2024/may.md': note('May'),
    'other/jun.md': note('June'),
  },
};

let box: Sandbox;
const stores: Store[] = [];

beforeEach(async () => {
  box = sandbox();
  const store = openStore(box.index);
  await store.addCollection(box.notes('notes', FOLDER_NOTES.notes), { name: 'notes' });
  await store.addCollection(box.notes('work', FOLDER_NOTES.work), { name: 'work' });
  await store.close();
});

afterEach(async () => {
  await Promise.allSettled(stores.splice(0).map((s) => s.close()));
  box.cleanup();
});

function open(options: StoreOptions = {}): Store {
  const store = openStore(box.index, { readonly: true, ...options });
  stores.push(store);
  return store;
}

const files = (hits: SearchHit[]): string[] => hits.map((h) => h.file).sort();

const ALL = [
  'notes/2024-old/apr.md',
  'notes/2024.md',
  'notes/2024/jan.md',
  'notes/2024/q1/feb.md',
  'notes/2024x/mar.md',
  'notes/root.md',
  'work/2024/may.md',
  'work/other/jun.md',
];
const IN_2024 = ['notes/2024/jan.md', 'notes/2024/q1/feb.md', 'work/2024/may.md'];

describe.each([
  ['inline', {}],
  ['in the query worker', { queryWorker: SCRIPT }],
])('BM25 with a folder (%s)', (_where, options: StoreOptions) => {
  it('finds only the notes under the folder, by whole segments, in every collection', async () => {
    const store = open(options);
    // The control: without a folder every note answers.
    expect(files((await store.query('quokka', { limit: 20 })).hits)).toEqual(ALL);
    const result = await store.query('quokka', { folder: '2024', limit: 20 });
    expect(result.mode).toBe('bm25');
    expect(files(result.hits)).toEqual(IN_2024);
    // A trailing slash is the same folder; a deeper folder narrows further.
    expect(files((await store.query('quokka', { folder: '2024/', limit: 20 })).hits)).toEqual(IN_2024);
    expect(files((await store.query('quokka', { folder: '2024/q1', limit: 20 })).hits)).toEqual([
      'notes/2024/q1/feb.md',
    ]);
    expect(files((await store.query('quokka', { folder: '2024x', limit: 20 })).hits)).toEqual(['notes/2024x/mar.md']);
    // A typed lex sub-search takes the same filter.
    const lex = await store.query([{ type: 'lex', query: 'quokka' }], { folder: '2024', limit: 20 });
    expect(files(lex.hits)).toEqual(IN_2024);
  });

  it('combined with collections, both apply', async () => {
    const store = open(options);
    expect(files((await store.query('quokka', { folder: '2024', collections: ['work'], limit: 20 })).hits)).toEqual([
      'work/2024/may.md',
    ]);
    expect(files((await store.query('quokka', { folder: 'other', collections: ['notes'], limit: 20 })).hits)).toEqual(
      [],
    );
    expect(
      files((await store.query('quokka', { folder: '2024', collections: ['notes', 'work'], limit: 20 })).hits),
    ).toEqual(IN_2024);
  });

  it('a folder that holds nothing finds nothing; the limit counts notes inside it', async () => {
    const store = open(options);
    expect((await store.query('quokka', { folder: 'nowhere' })).hits).toEqual([]);
    // Three notes match in 2024: a limit of 2 gives two of those, not notes from elsewhere.
    const two = await store.query('quokka', { folder: '2024', limit: 2 });
    expect(two.hits).toHaveLength(2);
    for (const hit of two.hits) expect(IN_2024).toContain(hit.file);
  });
});

describe('search() (BM25, always inline)', () => {
  it('takes the folder too, and scores relative to the best hit inside it', () => {
    const store = open();
    expect(files(store.search('quokka', { limit: 20 }))).toEqual(ALL);
    const hits = store.search('quokka', { folder: '2024', limit: 20 });
    expect(files(hits)).toEqual(IN_2024);
    expect(hits[0]?.score).toBe(1);
    expect(files(store.search('quokka', { folder: '2024', collections: ['notes'], limit: 20 }))).toEqual([
      'notes/2024/jan.md',
      'notes/2024/q1/feb.md',
    ]);
  });
});

describe('a folder that could leave a collection', () => {
  const outside = pathEscapeCases({ dir: '/tmp/box', notes: '/tmp/box/notes' }).filter((c) => c.verdict === 'outside');

  it.each(outside.map((c) => [c.why, c.input]))('is refused as OUTSIDE_COLLECTIONS: %s', async (_why, folder) => {
    const inline = open();
    const error = await expectQmdError(() => inline.query('quokka', { folder }), 'OUTSIDE_COLLECTIONS');
    expect(error.message).toContain('folder');
    await expectQmdError(() => inline.search('quokka', { folder }), 'OUTSIDE_COLLECTIONS');
    await expectQmdError(() => inline.vsearch('quokka', { folder }), 'OUTSIDE_COLLECTIONS');
  });

  it('is refused the same way through the query worker, before any call reaches it', async () => {
    const store = open({ queryWorker: SCRIPT });
    for (const { input } of outside)
      await expectQmdError(() => store.query('quokka', { folder: input }), 'OUTSIDE_COLLECTIONS');
    await expectQmdError(() => store.query('quokka', { folder: '2024//q1' }), 'BAD_ARGUMENT');
    // The worker still answers afterwards.
    expect(files((await store.query('quokka', { folder: '2024', limit: 20 })).hits)).toEqual(IN_2024);
  });

  it.each([
    ['blank', '   '],
    ['an empty segment', '2024//q1'],
    ['a . segment', '2024/./q1'],
    ['a leading ./', './2024'],
    ['. alone', '.'],
    ['a backslash', '2024\\q1'],
    ['NUL', '2024\0'],
  ])('is refused as BAD_ARGUMENT when it is not a plain folder path: %s', async (_why, folder) => {
    const store = open();
    await expectQmdError(() => store.query('quokka', { folder }), 'BAD_ARGUMENT');
    await expectQmdError(() => store.search('quokka', { folder }), 'BAD_ARGUMENT');
  });
});
