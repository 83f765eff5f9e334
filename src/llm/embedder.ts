/**
 * The embedder: node-llama-cpp loaded on first use, one embedding context, native calls in
 * a queue, and a `dispose()` that never frees llama.cpp objects under a running call
 * (`docs/design.md` §1.3 and §5). Measured with
 * `scripts/experiments/dispose-order.ts`: disposing while a loop of embeddings runs killed
 * the process with SIGSEGV in a share of runs; through `dispose()` none did. The loading,
 * the queue and the teardown are `native-model.ts`'s, shared with the reranker and the
 * query expander; a store's three share one `LlmRuntime` (`runtime.ts`).
 */
import type { Llama, LlamaEmbeddingContext, LlamaModel } from 'node-llama-cpp';
import { abortedError, disposedError, LlmError } from './errors.js';
import { EMBED_MODEL_KIND } from './model-choice.js';
import { NativeModel, type NativeModelOptions } from './native-model.js';
import { type LlmRuntime, type RuntimeChoice, runtimeFor } from './runtime.js';

export type { LlamaModule } from './runtime.js';

export interface EmbedderOptions extends NativeModelOptions, RuntimeChoice {
  /**
   * Runs at the start of every embedding call, inside the native section: it counts in
   * `running`, so a hook that never settles looks to `dispose()` exactly like a stuck native
   * call. The caller injects the `llm.embed` failpoint here. `signal` fires when the call's
   * own signal does or when `dispose()` begins.
   */
  beforeEmbed?: (signal: AbortSignal) => Promise<void> | undefined;
}

export interface EmbedOptions {
  /**
   * Calls the call off while it waits (for the model, its turn, or in `beforeEmbed`), with
   * `ABORTED`. Once llama.cpp has started on it, it completes: native work cannot be stopped.
   */
  signal?: AbortSignal;
}

export interface EmbedBatchOptions extends EmbedOptions {
  /** Called after each text with how many are done. */
  onProgress?: (done: number, total: number) => void;
}

export interface Embedder {
  /**
   * The embedding of `text` (mean-pooled as the model defines, not normalized). Loads the
   * model on first use. Texts longer than the context are truncated to fit. Rejects with an
   * `LlmError`: `MODEL_UNAVAILABLE`, `DISPOSED`, `ABORTED` or `EMPTY_INPUT`.
   */
  embed(text: string, options?: EmbedOptions): Promise<Float32Array>;
  /**
   * Embeds `texts` one after another, each through the queue (so another caller's query can
   * slip in between). Stops between items when `signal` fires, rejecting with `ABORTED`.
   */
  embedBatch(texts: readonly string[], options?: EmbedBatchOptions): Promise<Float32Array[]>;
  /** The length of every vector. Loads the model. */
  dimensions(): Promise<number>;
  /**
   * The most tokens a text may have and still be embedded whole (longer texts are truncated).
   * Loads the model. The store's chunker sizes chunks from it.
   */
  maxTokens(): Promise<number>;
  /**
   * Changes when the model file's content changes (see `modelFingerprint`): store it with the
   * vectors and re-embed when it differs. Needs the file (an `hf:` model is resolved, and
   * downloaded if allowed), not llama.cpp.
   */
  fingerprint(): Promise<string>;
  /** Embedding calls in their native section right now (0 or 1: calls are serialized). */
  readonly running: number;
  /** Embedding calls waiting for their turn (`dispose()` rejects them). */
  readonly queued: number;
  /**
   * Rejects queued calls with `DISPOSED`, aborts what can be aborted (a load in progress, the
   * signals given to `beforeEmbed`), waits for the call running natively and for a load in
   * progress to settle, then disposes context → model → llama. Every later call rejects with
   * `DISPOSED`. Idempotent: every call returns the same promise. Never loads anything. With a
   * shared runtime, this is the runtime's `dispose()`: every model of it goes, in order.
   */
  dispose(): Promise<void>;
}

interface Loaded {
  model: LlamaModel;
  context: LlamaEmbeddingContext;
  /** Most tokens a text may have: node-llama-cpp adds BOS and EOS and wants fewer than the context size. */
  maxTokens: number;
}

/**
 * The context is sized for chunks, not for the model's training length (up to 8192 for some
 * embedding models: a KV cache for nothing). The batch is as large as the context because
 * bidirectional embedding models need the whole input in one batch.
 */
const CONTEXT_TOKENS = 2048;

export function createEmbedder(options: EmbedderOptions): Embedder {
  return new LlamaEmbedder(runtimeFor(options), options);
}

class LlamaEmbedder extends NativeModel<Loaded> implements Embedder {
  readonly role = 'embed';
  protected readonly kind = EMBED_MODEL_KIND;

  constructor(
    runtime: LlmRuntime,
    private readonly embedderOptions: EmbedderOptions,
  ) {
    super(runtime, embedderOptions);
  }

  async embed(text: string, options: EmbedOptions = {}): Promise<Float32Array> {
    const { signal } = options;
    if (signal?.aborted) throw abortedError(signal);
    const loaded = await this.ready(signal);
    // The teardown may have begun while we waited; it frees the model only later, so checking
    // here makes the synchronous tokenize below safe.
    if (this.runtime.disposed) throw disposedError();
    const tokens = loaded.model.tokenize(text);
    if (tokens.length === 0) throw new LlmError('EMPTY_INPUT', 'cannot embed an empty text');
    return this.run(
      loaded,
      async ({ context, maxTokens }) => {
        const { vector } = await context.getEmbeddingFor(tokens.slice(0, maxTokens));
        return Float32Array.from(vector);
      },
      signal,
    );
  }

  async embedBatch(texts: readonly string[], options: EmbedBatchOptions = {}): Promise<Float32Array[]> {
    const { signal, onProgress } = options;
    const vectors: Float32Array[] = [];
    for (const text of texts) {
      if (signal?.aborted) throw abortedError(signal);
      vectors.push(await this.embed(text, { signal }));
      onProgress?.(vectors.length, texts.length);
    }
    return vectors;
  }

  async dimensions(): Promise<number> {
    const { model } = await this.ready();
    return model.embeddingVectorSize;
  }

  async maxTokens(): Promise<number> {
    return (await this.ready()).maxTokens;
  }

  protected beforeCall(signal: AbortSignal): Promise<void> | undefined {
    return this.embedderOptions.beforeEmbed?.(signal);
  }

  protected async open(
    model: LlamaModel,
    _llama: Llama,
    keep: <T extends { dispose(): Promise<void> | void }>(context: T) => T,
    signal: AbortSignal,
  ): Promise<Loaded> {
    const contextSize = Math.min(model.trainContextSize, CONTEXT_TOKENS);
    const context = keep(
      await model.createEmbeddingContext({
        contextSize,
        batchSize: contextSize,
        threads: this.runtime.threads,
        createSignal: signal,
      }),
    );
    return { model, context, maxTokens: contextSize - 3 };
  }
}
