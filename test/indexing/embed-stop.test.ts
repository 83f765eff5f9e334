/**
 * `stop` (Ctrl-C, issue 31) for `embed`: the chunk in flight finishes, its batch is saved,
 * and `embed()` resolves with `stopped`; the next run embeds the rest. The real tiny model.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/core/index.js';
import type { Failpoints } from '../../src/failpoints.js';
import { type ChunkEmbedder, embedIndex } from '../../src/indexing/embed.js';
import { createEmbedder } from '../../src/llm/index.js';
import { silentLog } from '../../src/log.js';
import { openDatabase } from '../../src/store/database.js';
import { Vectors } from '../../src/store/vectors/vectors.js';
import { expectQmdError, type Sandbox, sandbox } from '../store/helpers.js';
import { tinyModelPath } from '../support/gguf.js';

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

describe('embed with stop', () => {
  // One Llama for the file, as test/indexing/embeddings.test.ts does.
  const keeper = createEmbedder({ model: tinyModelPath(), log: silentLog, maxThreads: 1 });
  beforeAll(() => keeper.dimensions());
  afterAll(() => keeper.dispose());

  /** Fires `stop` from inside the `call`-th embedding, which then completes: the chunk in flight. */
  function stopInside(call: number, stop: AbortController): Failpoints {
    let calls = 0;
    return {
      names: ['llm.embed'],
      has: (name) => name === 'llm.embed',
      carry: () => undefined,
      hit: (name) => {
        if (name === 'llm.embed' && ++calls === call) stop.abort();
        return undefined;
      },
    };
  }

  it('finishes the chunk in flight, saves its batch, resolves stopped; the next run embeds the rest', async () => {
    const root = box.notes('notes', manyNotes(8));
    await open().addCollection(root, { name: 'notes' });
    const stop = new AbortController();
    const store = open({ embedModel: tinyModelPath(), embedThreads: 1, failpoints: stopInside(3, stop) });
    const report = await store.embed({ stop: stop.signal, batchSize: 2 });
    expect(report).toMatchObject({ stopped: true, embedded: 3, chunks: 8 });
    const rest = await open({ embedModel: tinyModelPath(), embedThreads: 1 }).embed();
    expect(rest).toMatchObject({ embedded: 5, skipped: 3 });
    expect(rest.stopped).toBeUndefined();
  });

  it('stopped before the model is read: rejects ABORTED (nothing to keep), chunks nothing, embeds nothing', async () => {
    const root = box.notes('notes', manyNotes(4));
    await open().addCollection(root, { name: 'notes' });
    const store = open({ embedModel: tinyModelPath(), embedThreads: 1 });
    await expectQmdError(() => store.embed({ stop: AbortSignal.abort() }), 'ABORTED');
    expect(store.status().embeddings).toMatchObject({ chunks: 0, embeddedChunks: 0 });
  });
});

describe('embed stopped before its model is loaded', () => {
  /**
   * An embedder that records what it is asked, with its loading (the first `dimensions()`)
   * as a step the test finishes: llama.cpp's load, which nothing can cut short.
   */
  function recordingEmbedder(onLoad: () => void = () => {}) {
    const asked: string[] = [];
    const model: ChunkEmbedder = {
      spec: '/models/tiny.gguf',
      fingerprint: async () => {
        asked.push('fingerprint');
        return 'fp-recording';
      },
      dimensions: async () => {
        asked.push('load');
        onLoad();
        return 8;
      },
      maxTokens: async () => 512,
      embed: async () => {
        asked.push('embed');
        return new Float32Array(8).fill(Math.SQRT1_2 / 2);
      },
    };
    return { model, asked };
  }

  async function indexed() {
    await open().addCollection(box.notes('notes', manyNotes(4)), { name: 'notes' });
    const { db } = openDatabase(box.index, { readonly: false, busyTimeoutMs: 2000, quickCheck: false });
    return { db, vectors: new Vectors(db, { extension: true, log: silentLog }) };
  }

  it('Ctrl-C while the model file is read: ABORTED, the model never loaded, nothing chunked or embedded', async () => {
    const { db, vectors } = await indexed();
    try {
      const stop = new AbortController();
      const { model, asked } = recordingEmbedder();
      const fingerprint = model.fingerprint;
      model.fingerprint = async (signal) => {
        stop.abort(); // pressed while the file is read: the fingerprint still comes back
        return fingerprint(signal);
      };
      await expectQmdError(() => embedIndex(db, vectors, model, { stop: stop.signal }), 'ABORTED');
      expect(asked).toEqual(['fingerprint']);
      expect(db.value('SELECT count(*) FROM chunks')).toBe(0);
      expect(db.value('SELECT model FROM embedding_state')).toBeNull();
    } finally {
      db.close();
    }
  });

  it('Ctrl-C while the model loads: ABORTED once it is loaded, before anything is chunked or embedded', async () => {
    const { db, vectors } = await indexed();
    try {
      const stop = new AbortController();
      const { model, asked } = recordingEmbedder(() => stop.abort());
      await expectQmdError(() => embedIndex(db, vectors, model, { stop: stop.signal }), 'ABORTED');
      expect(asked).toEqual(['fingerprint', 'load']);
      expect(db.value('SELECT count(*) FROM chunks')).toBe(0);
      expect(db.value('SELECT count(*) FROM embeddings')).toBe(0);
    } finally {
      db.close();
    }
  });

  it('not stopped: the same embedder loads and embeds every chunk (the fake is a working one)', async () => {
    const { db, vectors } = await indexed();
    try {
      const { model, asked } = recordingEmbedder();
      const report = await embedIndex(db, vectors, model, {});
      expect(report).toMatchObject({ embedded: 4, chunks: 4 });
      expect(asked.slice(0, 2)).toEqual(['fingerprint', 'load']);
    } finally {
      db.close();
    }
  });
});
