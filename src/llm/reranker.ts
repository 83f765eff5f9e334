/**
 * The reranker: node-llama-cpp's ranking context over a cross-encoder (the default, Qwen3
 * Reranker 0.6B, reads the query and a document together and answers P("yes": relevant)).
 * Each document is one native call through the queue, so the teardown waits for one
 * document's evaluation at most, never for a whole list (`native-model.ts`, `runtime.ts`).
 */
import type { Llama, LlamaModel, LlamaRankingContext } from 'node-llama-cpp';
import { abortedError, disposedError } from './errors.js';
import { RERANK_MODEL_KIND } from './model-defaults.js';
import { NativeModel, type NativeModelOptions } from './native-model.js';
import { type LlmRuntime, type RuntimeChoice, runtimeFor } from './runtime.js';

export { DEFAULT_RERANK_MODEL } from './model-defaults.js';

/**
 * The ranking context holds the query, the document and the template (~100 tokens for Qwen3's):
 * 4,096 tokens fit the largest chunk (1,800 bytes, so at most ~1,800 tokens) with a long query,
 * as the peer sizes it. The batch is the whole context: a ranked input is scored in one batch.
 */
const CONTEXT_TOKENS = 4096;

export interface RerankerOptions extends NativeModelOptions, RuntimeChoice {
  /**
   * Runs at the start of every document's evaluation, inside the native section (the
   * `llm.rerank` failpoint, the debug line): a hook that never settles looks to the teardown
   * exactly like a stuck native call.
   */
  beforeRank?: (signal: AbortSignal) => Promise<void> | undefined;
}

export interface Reranker {
  /**
   * How relevant each document is to `query`, in (0, 1), in the documents' order. A document
   * too long for the context is cut to fit. Stops between documents when `signal` fires
   * (`ABORTED`) or the teardown begins (`DISPOSED`); `MODEL_UNAVAILABLE` when it cannot load.
   */
  rank(query: string, documents: readonly string[], options?: { signal?: AbortSignal }): Promise<number[]>;
  /** Loads the model now (what `query` does first, so its failure is known before any work). */
  load(): Promise<void>;
  readonly running: number;
  readonly queued: number;
  /** The runtime's `dispose()` (`runtime.ts`). */
  dispose(): Promise<void>;
}

interface Loaded {
  model: LlamaModel;
  context: LlamaRankingContext;
}

export function createReranker(options: RerankerOptions): Reranker {
  return new LlamaReranker(runtimeFor(options), options);
}

class LlamaReranker extends NativeModel<Loaded> implements Reranker {
  readonly role = 'rerank';
  protected readonly kind = RERANK_MODEL_KIND;

  constructor(
    runtime: LlmRuntime,
    private readonly rerankerOptions: RerankerOptions,
  ) {
    super(runtime, rerankerOptions);
  }

  async load(): Promise<void> {
    await this.ready();
  }

  async rank(query: string, documents: readonly string[], options: { signal?: AbortSignal } = {}): Promise<number[]> {
    const { signal } = options;
    if (signal?.aborted) throw abortedError(signal);
    const loaded = await this.ready(signal);
    const scores: number[] = [];
    for (const document of documents) {
      if (signal?.aborted) throw abortedError(signal);
      // The model is freed only after the teardown's quiesce: checked, the tokenizing is safe.
      if (this.runtime.disposed) throw disposedError();
      const text = fitted(loaded.context, query, document);
      scores.push(await this.run(loaded, ({ context }) => context.rank(query, text), signal));
    }
    return scores;
  }

  protected beforeCall(signal: AbortSignal): Promise<void> | undefined {
    return this.rerankerOptions.beforeRank?.(signal);
  }

  protected async open(
    model: LlamaModel,
    _llama: Llama,
    keep: <T extends { dispose(): Promise<void> | void }>(context: T) => T,
    signal: AbortSignal,
  ): Promise<Loaded> {
    const contextSize = Math.min(model.trainContextSize, CONTEXT_TOKENS);
    const context = keep(
      await model.createRankingContext({
        contextSize,
        batchSize: contextSize,
        threads: this.runtime.threads,
        createSignal: signal,
      }),
    );
    return { model, context };
  }
}

/** `document`, cut (by tokens) so that the query, the document and the template fit the context. */
function fitted(context: LlamaRankingContext, query: string, document: string): string {
  const room = context.contextSize - 1;
  const length = context.calculateInputLength(query, document);
  if (length <= room) return document;
  const tokens = context.model.tokenize(document);
  const keep = Math.max(1, tokens.length - (length - room) - 8);
  return context.model.detokenize(tokens.slice(0, keep));
}
