import type { Llama, LlamaModel } from 'node-llama-cpp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEmbedder, type Embedder, type EmbedderOptions, type LlamaModule } from '../../src/llm/index.js';
import { silentLog } from '../../src/log.js';
import { deferred } from '../support/deferred.js';
import { flush } from '../support/fake-clock.js';
import { tinyModelPath } from '../support/gguf.js';
import { settled } from './helpers.js';

const DISPOSED = { name: 'LlmError', code: 'DISPOSED' };

function embedder(options: Partial<EmbedderOptions> = {}): Embedder {
  return createEmbedder({ model: tinyModelPath(), log: silentLog, maxThreads: 2, ...options });
}

// Holds the process's one Llama for the whole file (src/llm/llama.ts): each test's embedder
// shares it instead of starting llama.cpp again (~1 s each, and a second start in one process
// can send llama.cpp's lines to stdout). The load test below brings its own on purpose.
const keeper = embedder();
beforeAll(() => keeper.dimensions());
afterAll(() => keeper.dispose());

/** A hook that holds the first call in its native section until `release()`, ignoring its signal (like `hang`). */
function holdFirstCall() {
  const entered = deferred();
  const gate = deferred();
  let calls = 0;
  return {
    entered: entered.promise,
    release: () => gate.resolve(),
    calls: () => calls,
    beforeEmbed: (): Promise<void> | undefined => {
      calls++;
      if (calls > 1) return undefined;
      entered.resolve();
      return gate.promise;
    },
  };
}

describe('dispose()', () => {
  it('returns the same promise every time, and calls after it reject with DISPOSED', async () => {
    const e = embedder();
    await e.embed('the note');
    const first = e.dispose();
    expect(e.dispose()).toBe(first);
    await first;
    await expect(e.embed('the note')).rejects.toMatchObject(DISPOSED);
    await expect(e.embedBatch(['a'])).rejects.toMatchObject(DISPOSED);
    await expect(e.dimensions()).rejects.toMatchObject(DISPOSED);
    await expect(e.fingerprint()).rejects.toMatchObject(DISPOSED);
  });

  it('of an embedder never used loads nothing', async () => {
    let imports = 0;
    const e = embedder({
      importLlama: () => {
        imports++;
        return import('node-llama-cpp');
      },
    });
    await e.dispose();
    expect(imports).toBe(0);
  });

  it('rejects queued calls at once and waits for the running one', async () => {
    const hold = holdFirstCall();
    const e = embedder({ beforeEmbed: hold.beforeEmbed });
    const running = settled(e.embed('the note'));
    await hold.entered;
    const queued = [settled(e.embed('a')), settled(e.embed('b'))];
    await flush();
    expect([e.running, e.queued]).toEqual([1, 2]);

    let disposed = false;
    const disposal = e.dispose().then(() => {
      disposed = true;
    });
    for (const call of queued) expect((await call).error).toMatchObject(DISPOSED);
    expect(e.queued).toBe(0);
    await flush();
    expect(disposed).toBe(false); // the running call still holds it
    expect(e.running).toBe(1);

    hold.release();
    await disposal;
    expect(e.running).toBe(0);
    // Disposal began before llama.cpp was reached: the held call is called off, not run.
    expect((await running).error).toMatchObject(DISPOSED);
    expect(hold.calls()).toBe(1);
  });

  it('aborts the signal given to beforeEmbed, so a well-behaved hook lets disposal through', async () => {
    let seen: AbortSignal | undefined;
    const e = embedder({
      beforeEmbed: (signal) => {
        seen = signal;
        return new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason)));
      },
    });
    const call = settled(e.embed('the note'));
    await e.dimensions();
    while (seen === undefined) await flush();
    await e.dispose();
    expect(seen.aborted).toBe(true);
    expect((await call).error).toMatchObject(DISPOSED);
  });

  it('during the import of node-llama-cpp waits for it, then creates nothing', async () => {
    const imported = deferred<LlamaModule>();
    const importStarted = deferred();
    let getLlamaCalls = 0;
    const e = embedder({
      importLlama: () => {
        importStarted.resolve();
        return imported.promise;
      },
    });
    const call = settled(e.embed('the note'));
    await importStarted.promise;
    let disposed = false;
    const disposal = e.dispose().then(() => {
      disposed = true;
    });
    await flush();
    expect(disposed).toBe(false);
    const real = await import('node-llama-cpp');
    imported.resolve({
      resolveModelFile: real.resolveModelFile,
      getLlama: ((...args: Parameters<typeof real.getLlama>) => {
        getLlamaCalls++;
        return real.getLlama(...args);
      }) as typeof real.getLlama,
    });
    await disposal;
    expect((await call).error).toMatchObject(DISPOSED);
    expect(getLlamaCalls).toBe(0);
  });

  // Its wrapped getLlama starts a second Llama beside the keeper's, which is what sends a few
  // llama.cpp lines to the test's stdout afterwards (src/llm/llama.ts): noise, not a failure.
  it('while the model is loading waits for the load, then disposes the model and llama.cpp', async () => {
    const real = await import('node-llama-cpp');
    const loadStarted = deferred();
    let llama: Llama | undefined;
    let loading: Promise<LlamaModel> | undefined;
    const getLlama = (async (...args: Parameters<typeof real.getLlama>) => {
      const created = (await real.getLlama(...args)) as Llama;
      const loadModel = created.loadModel.bind(created);
      created.loadModel = (options) => {
        loading = loadModel(options);
        loadStarted.resolve();
        return loading;
      };
      llama = created;
      return created;
    }) as typeof real.getLlama;
    const e = embedder({ importLlama: async () => ({ resolveModelFile: real.resolveModelFile, getLlama }) });

    const call = settled(e.embed('the note'));
    await loadStarted.promise;
    await e.dispose(); // the load is in flight: llama.cpp is reading the file right now
    expect((await call).error).toMatchObject(DISPOSED);
    expect(llama?.disposed).toBe(true);
    const model = await loading?.catch(() => undefined); // aborted loads reject; completed ones were disposed
    expect(model === undefined || model.disposed).toBe(true);
  });
});

describe('abort signals', () => {
  it('an aborted signal rejects with ABORTED before anything runs', async () => {
    let hooks = 0;
    const e = embedder({
      beforeEmbed: () => {
        hooks++;
        return undefined;
      },
    });
    try {
      await expect(e.embed('the note', { signal: AbortSignal.abort() })).rejects.toMatchObject({ code: 'ABORTED' });
      expect(hooks).toBe(0);
    } finally {
      await e.dispose();
    }
  });

  it('embedBatch stops between items when the signal fires', async () => {
    let hooks = 0;
    const e = embedder({
      beforeEmbed: () => {
        hooks++;
        return undefined;
      },
    });
    const controller = new AbortController();
    const progress: number[] = [];
    try {
      const batch = e.embedBatch(['the note', 'search', 'notes'], {
        signal: controller.signal,
        onProgress: (done) => {
          progress.push(done);
          if (done === 1) controller.abort();
        },
      });
      await expect(batch).rejects.toMatchObject({ code: 'ABORTED' });
      expect(progress).toEqual([1]);
      expect(hooks).toBe(1);
    } finally {
      await e.dispose();
    }
  });

  it('a signal fired while the hook runs calls the item off before llama.cpp', async () => {
    const controller = new AbortController();
    let hooks = 0;
    const e = embedder({
      beforeEmbed: () => {
        if (++hooks === 2) controller.abort();
        return undefined;
      },
    });
    try {
      const batch = e.embedBatch(['the note', 'search', 'notes'], { signal: controller.signal });
      await expect(batch).rejects.toMatchObject({ code: 'ABORTED' });
      expect(hooks).toBe(2);
    } finally {
      await e.dispose();
    }
  });

  it('a queued call whose signal fires leaves the queue; the running one completes', async () => {
    const hold = holdFirstCall();
    const e = embedder({ beforeEmbed: hold.beforeEmbed });
    try {
      const running = e.embed('the note');
      await hold.entered;
      const controller = new AbortController();
      const queued = settled(e.embed('search', { signal: controller.signal }));
      await flush();
      expect(e.queued).toBe(1);
      controller.abort();
      expect((await queued).error).toMatchObject({ code: 'ABORTED' });
      expect(e.queued).toBe(0);
      hold.release();
      expect(await running).toHaveLength(64);
    } finally {
      await e.dispose();
    }
  });

  it('an error thrown by the hook (the llm.embed=throw failpoint) is the call’s error', async () => {
    const failure = new Error('failpoint llm.embed: throw');
    let hooks = 0;
    const e = embedder({ beforeEmbed: () => (++hooks === 1 ? Promise.reject(failure) : undefined) });
    try {
      await expect(e.embed('the note')).rejects.toBe(failure);
      expect(e.running).toBe(0);
      expect(await e.embed('the note')).toHaveLength(64);
    } finally {
      await e.dispose();
    }
  });
});
