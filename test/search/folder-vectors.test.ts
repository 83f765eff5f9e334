/**
 * The folder filter (`SearchOptions.folder`) of vector and hybrid search, with the real tiny
 * model on a real index: `vsearch`, `query` with a `vec` sub-search and a plain (hybrid)
 * query, inline with sqlite-vec, inline without it (the JS scan), and in the query worker.
 * Vector search ranks every embedded note, and the query is the text of `2024x/mar.md`, so
 * without the filter that note comes first and all eight answer: each test fails if the
 * folder is ignored or matched by characters instead of whole segments.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/core/index.js';
import type { SearchHit, Store, StoreOptions } from '../../src/core/types.js';
import { createEmbedder } from '../../src/llm/index.js';
import { silentLog } from '../../src/log.js';
import type { WorkerScript } from '../../src/search/query-worker-client.js';
import { type Sandbox, sandbox } from '../store/helpers.js';
import { tinyModelPath } from '../support/gguf.js';

// Holds the process's one Llama for the whole file (src/llm/llama.ts).
const keeper = createEmbedder({ model: tinyModelPath(), log: silentLog, maxThreads: 1 });

const SCRIPT: WorkerScript = {
  file: new URL('../../src/search/query-worker.ts', import.meta.url),
  execArgv: ['--import', 'tsx'],
};

const MARCH = 'Quokka tracks by the river after the March rain; the pond overflowed.';
const NOTES = {
  notes: {
    '2024/jan.md': '# January\n\nA quokka ate the sourdough starter in the kitchen.\n',
    '2024/q1/feb.md': '# February\n\nThe quokka server restarted after the index was rebuilt.\n',
    '2024x/mar.md': `# March\n\n${MARCH}\n`,
    '2024-old/apr.md': '# April\n\nQuokka tracks by the river after rain, and the pond overflowed again.\n',
    '2024.md': '# The year\n\nEvery quokka sighting of the year, by month.\n',
    'root.md': '# Root\n\nA quokka in the garden among the tomatoes and basil.\n',
  },
  work: {
    '2024/may.md': '# May\n\nQuokka meeting notes: the weekly review of the pond project.\n',
    'other/jun.md': '# June\n\nThe quokka river survey after the rain.\n',
  },
};
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

let box: Sandbox;
const stores: Store[] = [];

beforeAll(async () => {
  await keeper.dimensions();
  box = sandbox();
  const store = openStore(box.index, { embedModel: tinyModelPath(), embedThreads: 1 });
  await store.addCollection(box.notes('notes', NOTES.notes), { name: 'notes' });
  await store.addCollection(box.notes('work', NOTES.work), { name: 'work' });
  await store.embed();
  await store.close();
});

afterAll(async () => {
  await Promise.allSettled(stores.splice(0).map((s) => s.close()));
  box?.cleanup();
  await keeper.dispose();
});

function open(options: StoreOptions): Store {
  const store = openStore(box.index, { readonly: true, embedModel: tinyModelPath(), embedThreads: 1, ...options });
  stores.push(store);
  return store;
}

const files = (hits: SearchHit[]): string[] => hits.map((h) => h.file).sort();

describe.each([
  ['inline, sqlite-vec', {}],
  ['inline, without sqlite-vec', { vectorExtension: false }],
  ['in the query worker', { queryWorker: SCRIPT }],
])('vectors with a folder (%s)', (_where, options: StoreOptions) => {
  let store: Store;
  beforeAll(() => {
    store = open(options);
  });

  it('vsearch and a vec sub-search find only the notes under the folder, by whole segments', async () => {
    // The control: unfiltered, the query's own note is nearest and every note answers.
    const all = await store.vsearch(MARCH, { limit: 20 });
    expect(all.hits[0]?.file).toBe('notes/2024x/mar.md');
    expect(files(all.hits)).toEqual(ALL);

    const filtered = await store.vsearch(MARCH, { folder: '2024', limit: 20 });
    expect(filtered.mode).toBe('vector');
    expect(files(filtered.hits)).toEqual(IN_2024);
    expect(filtered.hits[0]?.score).toBe(1);
    const vec = await store.query([{ type: 'vec', query: MARCH }], { folder: '2024', limit: 20 });
    expect(vec.searches).toEqual([{ type: 'vec', query: MARCH, ran: 'vector', candidates: 3 }]);
    expect(files(vec.hits)).toEqual(IN_2024);
    expect(files((await store.vsearch(MARCH, { folder: '2024x/', limit: 20 })).hits)).toEqual(['notes/2024x/mar.md']);
    expect(files((await store.vsearch(MARCH, { folder: '2024/q1', limit: 20 })).hits)).toEqual([
      'notes/2024/q1/feb.md',
    ]);
  });

  it('a plain query is hybrid inside the folder: both rankings filtered', async () => {
    const all = await store.query(MARCH, { limit: 20 });
    expect(all.mode).toBe('hybrid');
    expect(files(all.hits)).toEqual(ALL);
    const result = await store.query(MARCH, { folder: '2024', limit: 20 });
    expect(result.mode).toBe('hybrid');
    expect(result.searches.map((s) => [s.type, s.ran, s.candidates])).toEqual([
      ['lex', 'bm25', 3],
      ['vec', 'vector', 3],
    ]);
    expect(files(result.hits)).toEqual(IN_2024);
  });

  it('combined with collections, both apply', async () => {
    const vec = await store.vsearch(MARCH, { folder: '2024', collections: ['notes'], limit: 20 });
    expect(files(vec.hits)).toEqual(['notes/2024/jan.md', 'notes/2024/q1/feb.md']);
    const hybrid = await store.query(MARCH, { folder: '2024', collections: ['work'], limit: 20 });
    expect(files(hybrid.hits)).toEqual(['work/2024/may.md']);
    expect((await store.vsearch(MARCH, { folder: 'other', collections: ['notes'], limit: 20 })).hits).toEqual([]);
  });
});

it('the worker answers a folder query exactly as the inline store does', async () => {
  const inline = open({});
  const worker = open({ queryWorker: SCRIPT });
  for (const folder of ['2024', '2024x', 'other']) {
    expect(await worker.query(MARCH, { folder, limit: 5 })).toEqual(await inline.query(MARCH, { folder, limit: 5 }));
    expect(await worker.vsearch(MARCH, { folder })).toEqual(await inline.vsearch(MARCH, { folder }));
  }
});
