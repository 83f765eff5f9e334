/**
 * `query` with typed sub-searches, on a real index with the real tiny model. The
 * only fake is a hand-written embedder wrapper passed through `StoreOptions.createEmbedder`
 * that records each text sent to the model, so a test can see what `intent` and `hyde` do.
 */
import * as path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openStore, type Store, type StoreOptions } from '../../src/core/index.js';
import { createEmbedder, type Embedder, type EmbedderOptions } from '../../src/llm/index.js';
import { silentLog } from '../../src/log.js';
import { expectQmdError, type Sandbox, sandbox } from '../store/helpers.js';
import { tinyModelPath, writeTinyModel } from '../support/gguf.js';
import { recordingLog } from '../support/recording-log.js';

// Holds the process's one Llama for the whole file, as in embeddings.test.ts.
const keeper = createEmbedder({ model: tinyModelPath(), log: silentLog, maxThreads: 1 });
beforeAll(() => keeper.dimensions());
afterAll(() => keeper.dispose());

const NOTES: Record<string, string> = {
  'bread.md': '# Bread\n\nSourdough needs a starter, flour, water and salt. Bake it hot.\n',
  'garden.md': '# Garden\n\nTomatoes and basil grow together in summer. Water them at dawn.\n',
  'server.md': '# Server\n\nA server must never outlive its client. Orphans hold the index.\n',
  'sqlite.md': '# SQLite\n\nWAL mode lets readers and one writer share the index file.\n',
  'oven.md': '# Oven\n\nPreheat the oven before the bread goes in; steam makes the crust.\n',
};

let box: Sandbox;
const stores: Store[] = [];
let embedded: string[];

/** The real embedder, with every text it is asked to embed recorded in `embedded`. */
function recording(options: EmbedderOptions): Embedder {
  const real = createEmbedder(options);
  return new Proxy(real, {
    get(target, property) {
      if (property === 'embed') {
        return (text: string, o?: Parameters<Embedder['embed']>[1]) => {
          embedded.push(text);
          return target.embed(text, o);
        };
      }
      const value = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

function open(options: StoreOptions = {}): Store {
  const store = openStore(box.index, {
    embedModel: tinyModelPath(),
    embedThreads: 1,
    createEmbedder: recording,
    ...options,
  });
  stores.push(store);
  return store;
}

beforeEach(async () => {
  box = sandbox();
  embedded = [];
  const store = openStore(box.index);
  await store.addCollection(box.notes('notes', NOTES), { name: 'notes' });
  await store.close();
});

afterEach(async () => {
  await Promise.allSettled(stores.splice(0).map((s) => s.close()));
  box.cleanup();
});

async function embeddedStore(options: StoreOptions = {}): Promise<Store> {
  const store = open(options);
  await store.embed();
  embedded = [];
  return store;
}

const files = (result: { hits: Array<{ file: string }> }): string[] => result.hits.map((h) => h.file);

describe('sub-searches on an embedded index', () => {
  it('lex alone is BM25: the same hits and scores as search', async () => {
    const store = await embeddedStore();
    const result = await store.query([{ type: 'lex', query: 'bread oven' }]);
    expect(result).toMatchObject({
      mode: 'bm25',
      searches: [{ type: 'lex', query: 'bread oven', ran: 'bm25', candidates: 1 }],
      reranked: false,
    });
    expect(result.note).toBeUndefined();
    expect(result.hits).toEqual(store.search('bread oven'));
    expect(embedded).toEqual([]); // the model is never asked
  });

  it('vec alone ranks as vsearch does, by meaning', async () => {
    const store = await embeddedStore();
    const garden = (NOTES['garden.md'] as string).trim();
    const result = await store.query([{ type: 'vec', query: garden }], { limit: 3 });
    const direct = await store.vsearch(garden, { limit: 3 });
    expect(result.mode).toBe('vector');
    expect(result.hits.map((h) => [h.file, h.score])).toEqual(direct.hits.map((h) => [h.file, h.score]));
    // Each sub-search ranks as deep as the candidates (40 by default): here every note.
    expect(result.searches).toEqual([{ type: 'vec', query: garden, ran: 'vector', candidates: 5 }]);
  });

  it('lex and vec of one text are exactly the plain query of that text', async () => {
    const store = await embeddedStore();
    const text = 'server client index';
    const plain = await store.query(text, { limit: 4 });
    const typed = await store.query(
      [
        { type: 'lex', query: text },
        { type: 'vec', query: text },
      ],
      { limit: 4 },
    );
    expect(plain.mode).toBe('hybrid');
    expect(typed).toEqual(plain);
  });

  it('fuses any number of rankings: a note found by more of them ranks higher, the best scores 1', async () => {
    const store = await embeddedStore();
    const result = await store.query(
      [
        { type: 'lex', query: 'sourdough' },
        { type: 'lex', query: 'bread' },
        { type: 'vec', query: 'what does dough need to rise' },
        { type: 'hyde', query: 'Preheat the oven; steam makes a crisp crust on the bread.' },
      ],
      { limit: 5 },
    );
    expect(result.mode).toBe('hybrid');
    expect(result.searches.map((s) => s.ran)).toEqual(['bm25', 'bm25', 'vector', 'vector']);
    // bread.md is the only note both keyword rankings find.
    expect(result.hits[0]).toMatchObject({ file: 'notes/bread.md', score: 1 });
    expect(result.hits[0]?.snippet).toContain('**'); // a keyword ranking's highlighted snippet
    for (const hit of result.hits) {
      expect(hit.score).toBeGreaterThan(0);
      expect(hit.score).toBeLessThanOrEqual(1);
    }
    const top = result.hits[1]?.score ?? 0;
    const strong = await store.query(
      [
        { type: 'lex', query: 'sourdough' },
        { type: 'lex', query: 'bread' },
      ],
      { minScore: 0.99 },
    );
    expect(files(strong)).toEqual(['notes/bread.md']);
    expect(top).toBeLessThan(1);
  });

  it('intent is folded into the vec text only, and ranks as that text would', async () => {
    const store = await embeddedStore();
    const withIntent = await store.query(
      [
        { type: 'lex', query: 'water' },
        { type: 'vec', query: 'watering' },
      ],
      { intent: 'tomato plants in summer', limit: 5 },
    );
    expect(embedded).toEqual(['watering (tomato plants in summer)']);
    const spelledOut = await store.query(
      [
        { type: 'lex', query: 'water' },
        { type: 'vec', query: 'watering (tomato plants in summer)' },
      ],
      { limit: 5 },
    );
    expect(withIntent.hits).toEqual(spelledOut.hits);
    expect(withIntent.note).toBeUndefined();
    // The plain query's vector half gets it too; its BM25 half does not.
    embedded = [];
    const plain = await store.query('watering', { intent: 'tomato plants in summer' });
    expect(embedded).toEqual(['watering (tomato plants in summer)']);
    expect(plain.searches[0]).toMatchObject({ type: 'lex', query: 'watering', ran: 'bm25' });
  });

  it('intent with no vec search to shape is said to be unused', async () => {
    const store = await embeddedStore();
    const result = await store.query([{ type: 'lex', query: 'bread' }], { intent: 'baking' });
    expect(result.note).toBe('intent unused: it shapes vec searches and the reranker, and neither ran');
    expect(result.hits).toEqual(store.search('bread'));
  });

  it('candidateLimit bounds the candidates: the best of the fusion, as deep as the limit asks', async () => {
    const store = await embeddedStore();
    const searches = [
      { type: 'lex' as const, query: 'the' },
      { type: 'vec' as const, query: 'the index' },
    ];
    const all = await store.query(searches, { limit: 10 });
    expect(all.hits).toHaveLength(5);
    const two = await store.query(searches, { candidateLimit: 2, limit: 10 });
    expect(files(two)).toEqual(files(all).slice(0, 2));
    // Each sub-search still ranks as deep as a page needs (3 × limit, at least 30).
    expect(two.searches.map((s) => s.candidates)).toEqual(all.searches.map((s) => s.candidates));
  });

  it('rerank: true with no reranking model configured is reported as not reranked; the ranking is the fusion’s', async () => {
    const store = await embeddedStore();
    const asked = await store.query('bread oven', { rerank: true });
    const plain = await store.query('bread oven');
    expect(asked).toEqual({ ...plain, rerankNote: 'not reranked: no reranking model is configured' });
    expect(plain.rerankNote).toBeUndefined();
    expect((await store.query('bread oven', { rerank: false })).rerankNote).toBeUndefined();
  });
});

describe('hyde: a passage, embedded as the notes are', () => {
  it('goes to the model in the document prompt, vec in the query prompt (EmbeddingGemma)', async () => {
    // The prompt format follows the model's name: the tiny model under EmbeddingGemma's name.
    const gemma = path.join(box.dir, 'embeddinggemma-tiny.gguf');
    writeTinyModel(gemma);
    const store = await embeddedStore({ embedModel: gemma });
    const passage = 'Preheat the oven before the bread goes in; steam makes the crust.';
    await store.query(
      [
        { type: 'vec', query: 'how to bake' },
        { type: 'hyde', query: passage },
      ],
      { intent: 'home baking' },
    );
    expect(embedded).toEqual([
      'task: search result | query: how to bake (home baking)',
      `title: none | text: ${passage}`,
    ]);
  });

  it('a passage that is a note, embedded as that note was, finds it first', async () => {
    const gemma = path.join(box.dir, 'embeddinggemma-tiny.gguf');
    writeTinyModel(gemma);
    const store = await embeddedStore({ embedModel: gemma });
    const oven = (NOTES['oven.md'] as string).trim();
    const result = await store.query([{ type: 'hyde', query: oven }], { limit: 5 });
    expect(result.hits[0]).toMatchObject({ file: 'notes/oven.md', score: 1 });
    // The same text as a question is another vector: its scores differ.
    const asQuestion = await store.query([{ type: 'vec', query: oven }], { limit: 5 });
    expect(asQuestion.hits.map((h) => h.score)).not.toEqual(result.hits.map((h) => h.score));
  });
});

describe('when vectors cannot answer', () => {
  it('nothing embedded: vector sub-searches are skipped and said to be; lex answers', async () => {
    const store = open();
    const result = await store.query([
      { type: 'lex', query: 'bread' },
      { type: 'vec', query: 'what to bake' },
      { type: 'hyde', query: 'A loaf of bread.' },
    ]);
    expect(result).toMatchObject({
      mode: 'bm25',
      note: 'nothing is embedded yet: BM25 only (run qmd embed)',
      searches: [
        { type: 'lex', ran: 'bm25' },
        { type: 'vec', ran: 'skipped', candidates: 0 },
        { type: 'hyde', ran: 'skipped', candidates: 0 },
      ],
    });
    expect(result.hits).toEqual(store.search('bread'));
    expect(embedded).toEqual([]);
  });

  it('nothing embedded and only vector sub-searches: each runs as BM25 over its text', async () => {
    const store = open();
    const result = await store.query([
      { type: 'vec', query: 'sourdough starter' },
      { type: 'hyde', query: 'Tomatoes and basil' },
    ]);
    expect(result.mode).toBe('bm25');
    expect(result.searches.map((s) => [s.type, s.ran])).toEqual([
      ['vec', 'bm25'],
      ['hyde', 'bm25'],
    ]);
    expect(files(result).sort()).toEqual(['notes/bread.md', 'notes/garden.md']);
    expect(result.note).toContain('nothing is embedded yet');
  });

  it('the model file is gone: one warning, BM25, and the note says why', async () => {
    await embeddedStore();
    const log = recordingLog();
    const store = open({ embedModel: path.join(box.dir, 'missing.gguf'), log });
    const result = await store.query([
      { type: 'lex', query: 'bread' },
      { type: 'vec', query: 'baking' },
    ]);
    expect(result.mode).toBe('bm25');
    expect(result.note).toMatch(/^the embedding model is unavailable: BM25 only/);
    expect(result.searches[1]).toMatchObject({ ran: 'skipped' });
    expect(log.warnings).toHaveLength(1);
  });
});

describe('bad requests', () => {
  it.each([
    ['no sub-search', [], /searches is empty/],
    ['a blank sub-search', [{ type: 'lex', query: '  ' }], /searches\[0\]\.query is blank/],
    ['an unknown type', [{ type: 'sql', query: 'x' }], /searches\[0\]\.type must be lex, vec or hyde/],
    ['eleven sub-searches', Array.from({ length: 11 }, () => ({ type: 'lex', query: 'x' })), /At most 10/],
  ])('refuses %s', async (_label, searches, message) => {
    const store = open();
    const error = await expectQmdError(() => store.query(searches as never), 'BAD_ARGUMENT');
    expect(error.message).toMatch(message);
  });

  it('refuses a candidateLimit that is not a positive integer, and an unknown collection', async () => {
    const store = open();
    await expectQmdError(() => store.query('bread', { candidateLimit: 0 }), 'BAD_ARGUMENT');
    await expectQmdError(() => store.query('bread', { candidateLimit: 1.5 }), 'BAD_ARGUMENT');
    await expectQmdError(
      () => store.query([{ type: 'lex', query: 'bread' }], { collections: ['nope'] }),
      'UNKNOWN_COLLECTION',
    );
  });

  it('a cancelled request stops before it searches', async () => {
    const store = await embeddedStore();
    const controller = new AbortController();
    controller.abort();
    await expectQmdError(
      () => store.query([{ type: 'vec', query: 'bread' }], { signal: controller.signal }),
      'ABORTED',
    );
    expect(embedded).toEqual([]);
  });
});
