/**
 * The naive way to dispose llama.cpp, kept only as a contender for the disposal benchmarks
 * (`bench/embed.ts`, `bench/benchmarks/disposal.ts`): it frees the Llama, the model and the
 * embedding context at once or one after the other — `ordered`: context → model → llama,
 * each awaited; `all`: all three together — without waiting for the embedding call running
 * natively. docs/design.md §5: disposing under a running call segfaulted in 20–50% of
 * in-process runs. The product never does this: it is wired in through
 * `StoreOptions.createEmbedder`, which only code can set (`naive-server.ts`).
 *
 * How, without touching `src/llm/`: the real embedder takes the node-llama-cpp module through
 * its `importLlama` option; this wraps `getLlama` so the Llama, the model and the context it
 * creates are captured, and the returned embedder's `dispose()` frees them directly before
 * the real `dispose()` runs (and finds them disposed).
 */
import type { Llama, LlamaEmbeddingContext, LlamaModel } from 'node-llama-cpp';
import { createEmbedder, type Embedder, type EmbedderOptions, type LlamaModule } from '../../src/llm/index.js';
import type { Log } from '../../src/log.js';

export type NaiveOrder = 'ordered' | 'all';

/** What the contender prints on stderr at start-up, so a benchmark knows it runs the naive order. */
export const NAIVE_BANNER = 'naive-dispose contender';

/** A `StoreOptions.createEmbedder` whose embedders dispose llama.cpp the naive way. */
export function naiveEmbedderFactory(order: NaiveOrder, log: Log): (options: EmbedderOptions) => Embedder {
  return (options) => {
    let llama: Llama | undefined;
    let model: LlamaModel | undefined;
    let context: LlamaEmbeddingContext | undefined;
    let module: Promise<LlamaModule> | undefined;

    const load = async (): Promise<LlamaModule> => {
      const real = await import('node-llama-cpp');
      const getLlama = (async (llamaOptions: Parameters<typeof real.getLlama>[0]) => {
        const created = await real.getLlama(llamaOptions as never);
        llama = created;
        const loadModel = created.loadModel.bind(created);
        created.loadModel = async (modelOptions) => {
          const loaded = await loadModel(modelOptions);
          model = loaded;
          const createContext = loaded.createEmbeddingContext.bind(loaded);
          loaded.createEmbeddingContext = async (contextOptions) => {
            context = await createContext(contextOptions);
            return context;
          };
          return loaded;
        };
        return created;
      }) as typeof real.getLlama;
      return { getLlama, resolveModelFile: real.resolveModelFile };
    };

    const embedder = createEmbedder({
      ...options,
      importLlama: () => {
        module ??= load();
        return module;
      },
    });
    let disposal: Promise<void> | undefined;
    const disposeNow = async (): Promise<void> => {
      log.warn(`${NAIVE_BANNER}: disposing llama.cpp (${order}) without waiting for running calls`);
      if (order === 'all') await Promise.all([llama?.dispose(), model?.dispose(), context?.dispose()]);
      else {
        await context?.dispose();
        await model?.dispose();
        await llama?.dispose();
      }
      await embedder.dispose();
    };
    return {
      embed: (text, embedOptions) => embedder.embed(text, embedOptions),
      embedBatch: (texts, batchOptions) => embedder.embedBatch(texts, batchOptions),
      dimensions: () => embedder.dimensions(),
      maxTokens: () => embedder.maxTokens(),
      fingerprint: () => embedder.fingerprint(),
      get running() {
        return embedder.running;
      },
      get queued() {
        return embedder.queued;
      },
      dispose: () => {
        disposal ??= disposeNow();
        return disposal;
      },
    };
  };
}
