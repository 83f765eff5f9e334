/**
 * EXPERIMENT HOOK — NOT A FEATURE. Inert unless `QMD_UNSAFE_DISPOSE` is set (read only in
 * `src/cli/embed-model.ts`, which also prints a warning when it is). It exists so
 * `bench/embed.ts` can count how often a *spawned* `qmd mcp` crashes when the llama.cpp
 * objects are disposed the naive way, without waiting for the embedding call running
 * natively — `ordered` (`=1`): context → model → llama, each awaited; `all` (`=all`): all
 * three at once — against the real `Embedder.dispose()`, which waits for the call
 * (lifecycle.md §3: naive disposal segfaulted in 20–50% of in-process runs).
 *
 * How, without touching `src/llm/`: the embedder takes the node-llama-cpp module through its
 * `importLlama` option; this wraps `getLlama` so the Llama, the model and the embedding
 * context it creates are captured, and `disposeNow()` frees them directly. The embedder's own
 * `dispose()` still runs afterwards (and finds them disposed).
 */
import type { Llama, LlamaEmbeddingContext, LlamaModel } from 'node-llama-cpp';
import type { LlamaModule } from '../llm/index.js';
import type { Log } from '../log.js';

export type NaiveOrder = 'ordered' | 'all';

export interface NaiveDisposal {
  importLlama: () => Promise<LlamaModule>;
  /** Disposes the llama.cpp objects now, whatever is running. */
  disposeNow(log: Log): Promise<void>;
}

export function naiveDisposal(order: NaiveOrder): NaiveDisposal {
  let llama: Llama | undefined;
  let model: LlamaModel | undefined;
  let context: LlamaEmbeddingContext | undefined;
  let module: Promise<LlamaModule> | undefined;

  const load = async (): Promise<LlamaModule> => {
    const real = await import('node-llama-cpp');
    const getLlama = (async (options: Parameters<typeof real.getLlama>[0]) => {
      const created = await real.getLlama(options as never);
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

  return {
    importLlama: () => {
      module ??= load();
      return module;
    },
    async disposeNow(log) {
      log.warn(`QMD_UNSAFE_DISPOSE: disposing llama.cpp (${order}) without waiting for running calls (experiment)`);
      if (order === 'all') {
        await Promise.all([llama?.dispose(), model?.dispose(), context?.dispose()]);
        return;
      }
      await context?.dispose();
      await model?.dispose();
      await llama?.dispose();
    },
  };
}
