/**
 * `query` with its two other models (search/query.ts, query-models.ts): the expansion's lines
 * searched beside the query's own, the reranker's scores blended with the fused rank, and
 * what happens when either is off or missing. Real indexes; the expander and reranker are
 * recording fakes passed through `StoreOptions.createExpander`/`createReranker` where a test
 * checks what the pipeline asks of them, and real generated models where it checks what
 * llama.cpp does with it (a reranker built to prefer one word, and the three tiny models).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore, type Store, type StoreOptions } from '../../src/core/index.js';
import { createEmbedder, type Expander, type ExpanderOptions, type Reranker } from '../../src/llm/index.js';
import { silentLog } from '../../src/log.js';
import { type Sandbox, sandbox } from '../store/helpers.js';
import { tinyModelPath } from '../support/gguf.js';
import { keywordRerankerPath, tinyGeneratorPath, tinyRerankerPath } from '../support/gguf-models.js';
import { recordingLog } from '../support/recording-log.js';

// Holds the process's one Llama for the whole file, as in embeddings.test.ts.
const keeper = createEmbedder({ model: tinyModelPath(), log: silentLog, maxThreads: 1 });

let box: Sandbox;
const stores: Store[] = [];

beforeEach(() => {
  box = sandbox();
});

afterEach(async () => {
  await Promise.allSettled(stores.splice(0).map((s) => s.close()));
  box.cleanup();
});

async function indexed(notes: Record<string, string>, options: StoreOptions = {}): Promise<Store> {
  const writer = openStore(box.index);
  await writer.addCollection(box.notes('notes', notes), { name: 'notes' });
  await writer.close();
  return reopened(options);
}

/** Another read-only store on the same index. */
function reopened(options: StoreOptions = {}): Store {
  const store = openStore(box.index, { readonly: true, embedThreads: 1, ...options });
  stores.push(store);
  return store;
}

const files = (result: { hits: Array<{ file: string }> }): string[] => result.hits.map((h) => h.file);

interface Asked {
  expand: string[];
  rank: Array<{ query: string; documents: readonly string[] }>;
}

/** An expander that writes `lines`, and a reranker that scores by `score(document)`, recording what they are asked. */
function fakes(lines: Array<{ type: 'lex' | 'vec' | 'hyde'; text: string }>, score: (document: string) => number) {
  const asked: Asked = { expand: [], rank: [] };
  const idle = { running: 0, queued: 0, load: async () => {}, dispose: async () => {} };
  const expander: Expander = {
    ...idle,
    expand: async (query) => {
      asked.expand.push(query);
      return lines;
    },
  };
  const reranker: Reranker = {
    ...idle,
    rank: async (query, documents) => {
      asked.rank.push({ query, documents });
      return documents.map(score);
    },
  };
  const options: StoreOptions = {
    expandModel: 'fake-expander.gguf',
    rerankModel: 'fake-reranker.gguf',
    createExpander: (_options: ExpanderOptions) => expander,
    createReranker: () => reranker,
  };
  return { asked, options };
}

/** Six notes BM25 ranks in this order for "bread"; the last says "sourdough" four times. */
const BREAD: Record<string, string> = {
  'a.md': '# A\n\nbread bread bread bread bread.\n',
  'b.md': '# B\n\nbread bread bread bread, and a knife.\n',
  'c.md': '# C\n\nbread bread bread, a knife and a board.\n',
  'd.md': '# D\n\nbread bread, a knife, a board and a cloth.\n',
  'e.md': '# E\n\nbread, a knife, a board, a cloth and a tin.\n',
  'f.md': `# F\n\nA loaf of bread. ${'sourdough '.repeat(4)}starter, flour, water and salt, a knife, a board, a cloth and a tin.\n`,
};

describe('the query expansion', () => {
  it('a plain query searches the lines that share a word with it, at half weight, marked expanded', async () => {
    const { asked, options } = fakes(
      [
        { type: 'lex', text: 'bread knife' }, // kept
        { type: 'lex', text: 'bread' }, // the query's own lex: dropped
        { type: 'vec', text: 'what tools cut a loaf of bread' }, // kept (vectors skipped: nothing embedded)
        { type: 'hyde', text: 'Gardens need water at dawn.' }, // no word of the query: dropped
      ],
      () => 0.5,
    );
    const store = await indexed(BREAD, { ...options, rerankModel: undefined });
    const result = await store.query('bread');
    expect(asked.expand).toEqual(['bread']);
    expect(result.searches).toEqual([
      { type: 'lex', query: 'bread', ran: 'bm25', candidates: 6 },
      { type: 'vec', query: 'bread', ran: 'skipped', candidates: 0 },
      { type: 'lex', query: 'bread knife', expanded: true, ran: 'bm25', candidates: 5 },
      { type: 'vec', query: 'what tools cut a loaf of bread', expanded: true, ran: 'skipped', candidates: 0 },
    ]);
    expect(result.expansionNote).toBeUndefined();
    // Typed searches are never expanded, and expand: false skips it.
    await store.query([{ type: 'lex', query: 'bread' }]);
    await store.query('bread', { expand: false });
    expect(asked.expand).toEqual(['bread']);
  });

  it('an expansion that keeps nothing is said; none configured is said only when asked for', async () => {
    const { options } = fakes([{ type: 'lex', text: 'gardens at dawn' }], () => 0.5);
    const store = await indexed(BREAD, { ...options, rerankModel: undefined });
    expect((await store.query('bread')).expansionNote).toBe(
      'the expansion kept none of its 1 line(s): none was new and shared a word with the query',
    );
    const none = reopened();
    expect((await none.query('bread')).expansionNote).toBeUndefined();
    expect((await none.query('bread', { expand: true })).expansionNote).toBe(
      'not expanded: no query expansion model is configured',
    );
  });
});

describe('the reranker', () => {
  it('reads one chunk per candidate with the intent first; its score is blended with the fused rank', async () => {
    // Scores that reverse BM25's order: the blend lets the tail rise, but not past the top three's protection.
    const reverse = (doc: string) => (doc.includes('sourdough') ? 1 : doc.includes('tin') ? 0.9 : 0.1);
    const { asked, options } = fakes([], reverse);
    const store = await indexed(BREAD, { ...options, expandModel: undefined });
    const plain = await store.query('bread', { rerank: false });
    expect(files(plain)).toEqual(['notes/a.md', 'notes/b.md', 'notes/c.md', 'notes/d.md', 'notes/e.md', 'notes/f.md']);
    expect(asked.rank).toEqual([]);
    const result = await store.query('bread', { intent: 'baking at home' });
    expect(result.reranked).toBe(true);
    expect(asked.rank).toHaveLength(1);
    expect(asked.rank[0]?.query).toBe('baking at home\n\nbread');
    expect(asked.rank[0]?.documents).toHaveLength(6);
    expect(asked.rank[0]?.documents[0]).toBe(BREAD['a.md']);
    // rank 1: .75·1 + .25·.1 = .775; 2: .75·.5 + .025 = .4; 3: .75/3 + .025 = .275;
    // 4: .6/4 + .4·.1 = .19; 5 (tin): .6/5 + .4·.9 = .48; 6 (sourdough): .6/6 + .4·1 = .5
    expect(files(result)).toEqual(['notes/a.md', 'notes/f.md', 'notes/e.md', 'notes/b.md', 'notes/c.md', 'notes/d.md']);
    expect(result.hits[0]?.score).toBe(1);
    expect(result.hits[1]?.score).toBeCloseTo(0.5 / 0.775, 6);
  });

  it('candidateLimit bounds what it reads and what comes back', async () => {
    const { asked, options } = fakes([], () => 0.5);
    const store = await indexed(BREAD, { ...options, expandModel: undefined });
    const result = await store.query('bread', { candidateLimit: 3 });
    expect(asked.rank[0]?.documents).toHaveLength(3);
    expect(files(result)).toEqual(['notes/a.md', 'notes/b.md', 'notes/c.md']);
  });

  it('a model file that is not there: one warning, and each answer says why it was not reranked', async () => {
    const log = recordingLog();
    const store = await indexed(BREAD, { log, rerankModel: `${box.dir}/missing.gguf` });
    const first = await store.query('bread');
    const second = await store.query('bread');
    expect(first.reranked).toBe(false);
    expect(first.rerankNote).toMatch(/^not reranked: the reranking model is unavailable \(no reranking model file at /);
    expect(second.rerankNote).toBe(first.rerankNote);
    expect(log.warnings).toHaveLength(1);
    expect(files(first)).toEqual(files(await store.query('bread', { rerank: false })));
  });

  it('an hf: model not downloaded yet: a note that says how to get it, no warning, llama.cpp not loaded', async () => {
    const log = recordingLog();
    const spec = 'hf:ggml-org/Qwen3-Reranker-0.6B-Q8_0-GGUF/qwen3-reranker-0.6b-q8_0.gguf';
    const saved = process.env.XDG_CACHE_HOME;
    process.env.XDG_CACHE_HOME = box.dir; // an empty models directory
    const store = await indexed(BREAD, { log, rerankModel: spec });
    const result = await store.query('bread').finally(() => {
      if (saved === undefined) delete process.env.XDG_CACHE_HOME;
      else process.env.XDG_CACHE_HOME = saved;
    });
    expect(result.rerankNote).toBe(`not reranked: the reranking model ${spec} is not downloaded (qmd pull fetches it)`);
    expect(log.warnings).toEqual([]);
    expect((await store.models()).backend).toBeUndefined();
  });
});

describe('real generated models', () => {
  it('a reranker built to prefer "sourdough" lifts that note from sixth to third; rerank: false keeps the fusion’s order', async () => {
    const store = await indexed(BREAD, { rerankModel: keywordRerankerPath('sourdough') });
    const fused = await store.query('bread', { rerank: false });
    expect(fused.reranked).toBe(false);
    expect(files(fused)).toEqual(['notes/a.md', 'notes/b.md', 'notes/c.md', 'notes/d.md', 'notes/e.md', 'notes/f.md']);
    const reranked = await store.query('bread');
    expect(reranked.reranked).toBe(true);
    // Measured: P(yes) 0.5 for the notes without the word, ~0.87 for f's four in its ~60 tokens,
    // so f (rank 6) blends to .6/6 + .4·.87 ≈ .45, past c (.75/3 + .25·.5 = .375), short of b (.5).
    expect(files(reranked)).toEqual([
      'notes/a.md',
      'notes/b.md',
      'notes/f.md',
      'notes/c.md',
      'notes/d.md',
      'notes/e.md',
    ]);
  });

  it('the three tiny models answer a plain query: expanded, hybrid, reranked; the store closes them in order', async () => {
    await keeper.dimensions();
    const lines: string[] = [];
    const notes = { ...BREAD, 'g.md': '# Garden\n\nTomatoes and basil grow together in summer.\n' };
    const writer = openStore(box.index, { embedModel: tinyModelPath(), embedThreads: 1 });
    await writer.addCollection(box.notes('notes', notes), { name: 'notes' });
    await writer.embed();
    await writer.close();
    const store = openStore(box.index, {
      readonly: true,
      embedThreads: 1,
      embedModel: tinyModelPath(),
      rerankModel: tinyRerankerPath(),
      expandModel: tinyGeneratorPath(),
      trace: (line) => lines.push(line),
    });
    const result = await store.query('bread knife');
    expect(result.mode).toBe('hybrid');
    expect(result.reranked).toBe(true);
    expect(result.searches.slice(0, 2).map((s) => [s.type, s.ran])).toEqual([
      ['lex', 'bm25'],
      ['vec', 'vector'],
    ]);
    // Random weights write lines that rarely share a word with the query: either way it says what it kept.
    const expanded = result.searches.filter((s) => s.expanded);
    if (expanded.length === 0) expect(result.expansionNote).toMatch(/^the expansion kept none of its \d+ line/);
    expect(lines).toEqual(
      expect.arrayContaining(['generation call entering llama.cpp', 'embedding call entering llama.cpp']),
    );
    expect(lines.filter((l) => l === 'ranking call entering llama.cpp')).toHaveLength(result.hits.length);
    const report = await store.models();
    expect(report.models.map((m) => [m.role, m.loaded]).sort()).toEqual([
      ['embed', true],
      ['expand', true],
      ['rerank', true],
    ]);
    await store.close();
    expect(lines.slice(-4)).toEqual([
      'closing: 0 ranking call(s) running natively, 0 queued',
      'closing: 0 generation call(s) running natively, 0 queued',
      'closing: 0 embedding call(s) running natively, 0 queued',
      'embedding model disposed',
    ]);
    await keeper.dispose();
  }, 120_000);
});
