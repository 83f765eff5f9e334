/**
 * The reranker and the query expander on the tiny generated models (test/support/gguf-models.ts:
 * random weights, so what they answer means nothing; that they answer, in shape, and leave in
 * order, is what is checked), and the three models of one runtime torn down together while
 * one of them runs natively.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createEmbedder,
  createExpander,
  createReranker,
  type Embedder,
  type Expander,
  LlmRuntime,
  MAX_EXPANSION_LINES,
  type Reranker,
} from '../../src/llm/index.js';
import { silentLog } from '../../src/log.js';
import { deferred } from '../support/deferred.js';
import { flush } from '../support/fake-clock.js';
import { tinyModelPath } from '../support/gguf.js';
import { tinyGeneratorPath, tinyRerankerPath } from '../support/gguf-models.js';
import { settled } from './helpers.js';

const DISPOSED = { name: 'LlmError', code: 'DISPOSED' };
const DOCUMENTS = [
  'Sourdough needs a starter, flour, water and salt.',
  'WAL mode lets readers and one writer share the index file.',
  'Tomatoes and basil grow together in summer.',
];

// Holds the process's one Llama for the whole file (src/llm/llama.ts).
const keeper = createEmbedder({ model: tinyModelPath(), log: silentLog, maxThreads: 1 });
beforeAll(() => keeper.dimensions());
afterAll(() => keeper.dispose());

describe('the reranker on the tiny model', () => {
  let reranker: Reranker;
  beforeAll(() => {
    reranker = createReranker({ model: tinyRerankerPath(), log: silentLog, maxThreads: 1 });
  });
  afterAll(() => reranker.dispose());

  it('scores each document in (0, 1), in order, the same way every time', async () => {
    const scores = await reranker.rank('sourdough bread', DOCUMENTS);
    expect(scores).toHaveLength(3);
    for (const score of scores) expect(score > 0 && score < 1).toBe(true);
    expect(new Set(scores).size).toBe(3);
    expect(await reranker.rank('sourdough bread', [...DOCUMENTS].reverse())).toEqual([...scores].reverse());
  });

  it('cuts a document longer than its context instead of failing', async () => {
    const long = 'zq xv wk sourdough '.repeat(1500); // far over 4,096 tokens
    const [score] = await reranker.rank('sourdough', [long]);
    expect(score).toBeGreaterThan(0);
  });

  it('a fired signal rejects with ABORTED before anything runs', async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(reranker.rank('q', DOCUMENTS, { signal: controller.signal })).rejects.toMatchObject({
      code: 'ABORTED',
    });
  });
});

describe('the query expander on the tiny chat model', () => {
  let expander: Expander;
  beforeAll(() => {
    expander = createExpander({ model: tinyGeneratorPath(), log: silentLog, maxThreads: 1 });
  });
  afterAll(() => expander.dispose());

  it('writes typed lines only (the grammar), at most eight, and the same ones for the same query', async () => {
    const lines = await expander.expand('sourdough bread');
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.length).toBeLessThanOrEqual(MAX_EXPANSION_LINES);
    for (const line of lines) {
      expect(['lex', 'vec', 'hyde']).toContain(line.type);
      expect(line.text.trim()).not.toBe('');
      expect(line.text).not.toContain('\n');
    }
    expect(await expander.expand('sourdough bread')).toEqual(lines);
  }, 60_000);
});

/** A hook that holds the first call it sees in its native section until `release()`, ignoring its signal. */
function holdFirst() {
  const entered = deferred();
  const gate = deferred();
  let calls = 0;
  return {
    entered: entered.promise,
    release: () => gate.resolve(),
    hook: (): Promise<void> | undefined => {
      if (++calls > 1) return undefined;
      entered.resolve();
      return gate.promise;
    },
  };
}

describe('three models on one runtime leave together, in order', () => {
  function models(hooks: { embed?: () => Promise<void> | undefined; rank?: () => Promise<void> | undefined }) {
    const runtime = new LlmRuntime({ log: silentLog, threads: 1 });
    const embedder: Embedder = createEmbedder({ model: tinyModelPath(), runtime, beforeEmbed: hooks.embed });
    const reranker = createReranker({ model: tinyRerankerPath(), runtime, beforeRank: hooks.rank });
    const expander = createExpander({ model: tinyGeneratorPath(), runtime });
    return { runtime, embedder, reranker, expander };
  }

  it('a ranking running natively holds every model until it returns; then all go, and calls are refused', async () => {
    const held = holdFirst();
    const { runtime, embedder, reranker, expander } = models({ rank: held.hook });
    await embedder.embed('warm up');
    await expander.load();
    const ranking = settled(reranker.rank('bread', DOCUMENTS));
    await held.entered;
    let disposed = false;
    const disposal = embedder.dispose().then(() => {
      disposed = true;
    });
    for (let i = 0; i < 10; i++) await flush();
    expect(disposed).toBe(false);
    const report = await runtime.report();
    expect(report.models.map((m) => [m.role, m.loaded])).toEqual([
      ['embed', true],
      ['expand', true],
      ['rerank', true],
    ]);
    held.release();
    await disposal;
    expect((await runtime.report()).models.every((m) => !m.loaded)).toBe(true);
    // The held document finished; the ones queued behind it were refused.
    expect((await ranking).error).toMatchObject(DISPOSED);
    await expect(embedder.embed('x')).rejects.toMatchObject(DISPOSED);
    await expect(reranker.rank('x', ['y'])).rejects.toMatchObject(DISPOSED);
    await expect(expander.expand('x')).rejects.toMatchObject(DISPOSED);
    expect(reranker.dispose()).toBe(expander.dispose());
  });

  it('a generation is stopped at its next token by the teardown, which then disposes everything', async () => {
    const { runtime, expander } = models({});
    await expander.load();
    const generation = settled(expander.expand('sourdough bread'));
    while (expander.running === 0) await flush();
    await runtime.dispose();
    expect((await generation).error).toMatchObject(DISPOSED);
    expect((await runtime.report()).models.every((m) => !m.loaded)).toBe(true);
  });
});
