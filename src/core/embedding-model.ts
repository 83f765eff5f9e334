import { QmdError } from '../errors.js';
import type { Failpoints } from '../failpoints.js';
import {
  chooseModel,
  createEmbedder,
  type DownloadProgress,
  type Embedder,
  type EmbedderOptions,
  isLlmError,
  type LlmRuntime,
  type ModelChoice,
} from '../llm/index.js';
import type { Log } from '../log.js';
import { untilAborted } from '../settle.js';
import { normalize } from '../store/vectors/vectors.js';

export const EMBED_FAILPOINT = 'llm.embed';

export interface EmbeddingModelOptions {
  /** The model a person named (a flag or a variable); it beats the index's. */
  given: ModelChoice | undefined;
  /** The model the index remembers (`embedding_state.model`), read when the model is chosen. */
  remembered: () => string | null;
  /** When none is named and the index remembers none; undefined too: no vectors (BM25 only). */
  fallback: string | undefined;
  log: Log;
  failpoints: Failpoints;
  trace: ((line: string) => void) | undefined;
  /** Default `createEmbedder`; see `StoreOptions.createEmbedder` (code only, for a benchmark). */
  createEmbedder: ((options: EmbedderOptions) => Embedder) | undefined;
  /** The store's runtime, shared with the reranker and the expander (`src/llm/runtime.ts`). */
  runtime: LlmRuntime;
  /**
   * Download an `hf:` model that is not cached. Only `qmd embed` (a writable store) does: a
   * search never starts a 300 MB download inside a tool call; without the file it is BM25.
   */
  download: boolean;
  onDownloadProgress: ((progress: DownloadProgress) => void) | undefined;
}

/**
 * The store's one embedder, created on first need and never again after `dispose()`: a
 * second llama.cpp instance in a process sends llama.cpp's own lines to stdout
 * (`src/llm/llama.ts`). Creating it loads nothing; node-llama-cpp is imported by the first
 * call that needs a vector or the model file, so BM25 commands and `qmd mcp` start-up never
 * pay for it. Errors come out as QmdErrors (`MODEL_UNAVAILABLE`, `CLOSED`, `ABORTED`).
 */
export class EmbeddingModel {
  private embedder: Embedder | undefined;
  /** Fixed when the embedder is made: one process, one model (a second `Llama` is unsafe, llama.ts). */
  private chosen: ModelChoice | undefined;
  private disposal: Promise<void> | undefined;

  constructor(private readonly options: EmbeddingModelOptions) {}

  /**
   * The model this store uses (`chooseModel`): the one named, else the index's, else the
   * default. Until the embedder is made it follows the index (another process may embed
   * meanwhile); from then on it is that embedder's.
   */
  choice(): ModelChoice | undefined {
    if (this.chosen !== undefined) return this.chosen;
    const { given, remembered, fallback } = this.options;
    return chooseModel(given, given === undefined ? remembered() : null, fallback);
  }

  get spec(): string | undefined {
    return this.choice()?.spec;
  }

  /** Embedding calls in llama.cpp right now (0 or 1). */
  get running(): number {
    return this.embedder?.running ?? 0;
  }

  /** The model file's fingerprint (no llama.cpp). With `signal`, stops waiting when it fires. */
  fingerprint(signal?: AbortSignal): Promise<string> {
    const fingerprint = this.call((embedder) => embedder.fingerprint());
    if (signal === undefined) return fingerprint;
    fingerprint.catch(() => {});
    return untilAborted(fingerprint, signal, cancelled);
  }

  dimensions(): Promise<number> {
    return this.call((embedder) => embedder.dimensions());
  }

  maxTokens(): Promise<number> {
    return this.call((embedder) => embedder.maxTokens());
  }

  /**
   * The normalized embedding of `text`. When `signal` fires this rejects with ABORTED at
   * once, even if llama.cpp is already computing: the native call runs on, counted by the
   * embedder, and `dispose()` waits for it. So a cancelled handler settles at once and the
   * lifecycle's drain stays short, without ever freeing the model under the running call.
   */
  async embed(text: string, signal?: AbortSignal): Promise<Float32Array> {
    const vector = this.call((embedder) => embedder.embed(text, signal ? { signal } : {}));
    if (signal === undefined) return normalize(await vector);
    vector.catch(() => {}); // if we stop waiting, its outcome is nobody's business
    return normalize(await untilAborted(vector, signal, cancelled));
  }

  /**
   * Disposes the embedder if one was made (it waits for the call running natively), and
   * prevents any later one. Idempotent.
   */
  dispose(): Promise<void> {
    this.disposal ??= (async () => {
      const embedder = this.embedder;
      if (embedder === undefined) return;
      this.options.trace?.(
        `closing: ${embedder.running} embedding call(s) running natively, ${embedder.queued} queued`,
      );
      await embedder.dispose();
      this.options.trace?.('embedding model disposed');
    })();
    return this.disposal;
  }

  private async call<T>(work: (embedder: Embedder) => Promise<T>): Promise<T> {
    try {
      return await work(this.get());
    } catch (error) {
      throw fromLlmError(error);
    }
  }

  private get(): Embedder {
    if (this.disposal !== undefined) throw new QmdError('CLOSED', 'The index is closed');
    if (this.embedder !== undefined) return this.embedder;
    const { failpoints, trace, runtime, download, onDownloadProgress } = this.options;
    const choice = this.choice();
    if (choice === undefined) throw new QmdError('MODEL_UNAVAILABLE', 'no embedding model is configured');
    const create = this.options.createEmbedder ?? createEmbedder;
    this.embedder = create({
      model: choice.spec,
      runtime,
      download,
      ...(onDownloadProgress !== undefined && { onDownloadProgress }),
      beforeEmbed: async (signal) => {
        const pending = failpoints.hit(EMBED_FAILPOINT, signal);
        if (pending !== undefined) await pending;
        // `QMD_DEBUG_EMBED`: the last line before llama.cpp starts on it, so a test can send
        // its trigger while the call runs natively (a failpoint delay runs before this point).
        trace?.('embedding call entering llama.cpp');
      },
    });
    this.chosen = choice;
    return this.embedder;
  }
}

function fromLlmError(error: unknown): unknown {
  if (!isLlmError(error)) return error;
  const message = error.message.replace(/\s+/g, ' ').trim();
  switch (error.code) {
    case 'MODEL_UNAVAILABLE':
      return new QmdError('MODEL_UNAVAILABLE', message, { cause: error });
    case 'DISPOSED':
      return new QmdError('CLOSED', 'The index is closed', { cause: error });
    case 'ABORTED':
      return new QmdError('ABORTED', 'The embedding was cancelled', { cause: error });
    case 'EMPTY_INPUT':
      return new QmdError('BAD_ARGUMENT', message, { cause: error });
  }
}

const cancelled = (): QmdError => new QmdError('ABORTED', 'The embedding was cancelled');
