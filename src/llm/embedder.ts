/**
 * The embedder: node-llama-cpp loaded on first use, one embedding context, native calls in
 * a queue, and a `dispose()` that never frees llama.cpp objects under a running call
 * (`docs/design.md` §1.3 and §5). Measured with
 * `scripts/experiments/dispose-order.ts`: disposing while a loop of embeddings runs killed
 * the process with SIGSEGV in a share of runs; through `dispose()` none did.
 */
import { availableParallelism } from 'node:os';
import type { LlamaEmbeddingContext, LlamaModel } from 'node-llama-cpp';
import { createLog, type Log } from '../log.js';
import { runEvery, untilAborted } from '../settle.js';
import { abortedError, disposedError, LlmError } from './errors.js';
import { acquireLlama, type LlamaLease } from './llama.js';
import { type DownloadProgress, defaultModelsDir, modelFingerprint, resolveModelPath } from './model-file.js';
import { SerialQueue } from './queue.js';

/** What the embedder uses of node-llama-cpp; `import('node-llama-cpp')` provides it. */
export type LlamaModule = Pick<typeof import('node-llama-cpp'), 'getLlama' | 'resolveModelFile'>;

export interface EmbedderOptions {
  /** A local `.gguf` path, or an `hf:` URI cached in (or downloaded to) `modelsDir`. */
  model: string;
  /** Where `hf:` models live. Default: `defaultModelsDir()`. */
  modelsDir?: string;
  /** Download an `hf:` model that is not cached. Default true; off, it is `MODEL_UNAVAILABLE`. */
  download?: boolean;
  /** How a download goes (a progress bar's feed); the start and end are also lines on `log`. */
  onDownloadProgress?: (progress: DownloadProgress) => void;
  /** Receives llama.cpp's log lines and download notes. Default: stderr. Never stdout. */
  log?: Log;
  /**
   * Threads for llama.cpp. Default `os.availableParallelism()`: node-llama-cpp's own default
   * is at least 4, and 4 threads on 2 cores measured 300–490 ms per embedding against
   * 2–10 ms with 2.
   */
  maxThreads?: number;
  /**
   * Runs at the start of every embedding call, inside the native section: it counts in
   * `running`, so a hook that never settles looks to `dispose()` exactly like a stuck native
   * call. The caller injects the `llm.embed` failpoint here. `signal` fires when the call's
   * own signal does or when `dispose()` begins.
   */
  beforeEmbed?: (signal: AbortSignal) => Promise<void> | undefined;
  /** How node-llama-cpp is loaded. Default: `import('node-llama-cpp')`, on first use only. */
  importLlama?: () => Promise<LlamaModule>;
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
   * `DISPOSED`. Idempotent: every call returns the same promise. Never loads anything.
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
  return new LlamaEmbedder(options);
}

class LlamaEmbedder implements Embedder {
  readonly #options: EmbedderOptions;
  readonly #log: Log;
  readonly #queue = new SerialQueue();
  /** Fires when `dispose()` begins: aborts the load and the hooks' signals. */
  readonly #disposing = new AbortController();
  #module: Promise<LlamaModule> | undefined;
  #path: Promise<string> | undefined;
  #loading: Promise<Loaded> | undefined;
  #fingerprint: Promise<string> | undefined;
  #disposal: Promise<void> | undefined;
  // What the load created, so that `dispose()` frees it even when the load failed halfway.
  #lease: LlamaLease | undefined;
  #model: LlamaModel | undefined;
  #context: LlamaEmbeddingContext | undefined;

  constructor(options: EmbedderOptions) {
    this.#options = options;
    this.#log = options.log ?? createLog(process.stderr);
  }

  get running(): number {
    return this.#queue.running;
  }

  get queued(): number {
    return this.#queue.pending;
  }

  async embed(text: string, options: EmbedOptions = {}): Promise<Float32Array> {
    const { signal } = options;
    if (signal?.aborted) throw abortedError(signal);
    const loaded = await this.#ready(signal);
    // `dispose()` may have begun while we waited; it frees the model only later, so checking
    // here makes the synchronous tokenize below safe.
    if (this.#disposing.signal.aborted) throw disposedError();
    const tokens = loaded.model.tokenize(text);
    if (tokens.length === 0) throw new LlmError('EMPTY_INPUT', 'cannot embed an empty text');
    return this.#queue.add(
      async () => {
        const hookSignal = signal ? AbortSignal.any([signal, this.#disposing.signal]) : this.#disposing.signal;
        try {
          await this.#options.beforeEmbed?.(hookSignal);
        } catch (error) {
          // A hook that honoured the signal rejects with its reason: say which signal it was.
          throw this.#disposing.signal.aborted ? disposedError() : signal?.aborted ? abortedError(signal) : error;
        }
        // The last point where the call can still be called off: past it, llama.cpp runs.
        if (this.#disposing.signal.aborted) throw disposedError();
        if (signal?.aborted) throw abortedError(signal);
        const { vector } = await loaded.context.getEmbeddingFor(tokens.slice(0, loaded.maxTokens));
        return Float32Array.from(vector);
      },
      signal,
      abortedError,
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
    const { model } = await this.#ready();
    return model.embeddingVectorSize;
  }

  async maxTokens(): Promise<number> {
    return (await this.#ready()).maxTokens;
  }

  fingerprint(): Promise<string> {
    if (this.#disposal !== undefined) return Promise.reject(disposedError());
    this.#fingerprint ??= this.#modelPath().then(modelFingerprint);
    return this.#fingerprint;
  }

  dispose(): Promise<void> {
    this.#disposal ??= this.#dispose();
    return this.#disposal;
  }

  async #dispose(): Promise<void> {
    this.#disposing.abort(disposedError());
    // Queued calls are rejected now; the running one (and a load) are waited for, never
    // abandoned: freeing the context under them is the segfault this file exists to avoid.
    await Promise.allSettled([this.#queue.close(disposedError), this.#loading]);
    await runEvery('disposing llama.cpp failed', [
      () => this.#context?.dispose(),
      () => this.#model?.dispose(),
      () => this.#lease?.release(),
    ]);
  }

  /** The loaded model; the first caller starts the load, everyone shares it. */
  async #ready(signal?: AbortSignal): Promise<Loaded> {
    if (this.#disposal !== undefined) throw disposedError();
    this.#loading ??= this.#load();
    // The caller may give up waiting; the load goes on for the others.
    return signal === undefined ? this.#loading : untilAborted(this.#loading, signal, () => abortedError(signal));
  }

  #import(): Promise<LlamaModule> {
    this.#module ??= (this.#options.importLlama ?? (() => import('node-llama-cpp')))();
    return this.#module;
  }

  #modelPath(): Promise<string> {
    this.#path ??= resolveModelPath(this.#options.model, {
      modelsDir: this.#options.modelsDir ?? defaultModelsDir(),
      download: this.#options.download ?? true,
      resolver: async () => (await this.#import()).resolveModelFile,
      log: this.#log,
      signal: this.#disposing.signal,
      ...(this.#options.onDownloadProgress !== undefined && { onDownloadProgress: this.#options.onDownloadProgress }),
    });
    return this.#path;
  }

  async #load(): Promise<Loaded> {
    const signal = this.#disposing.signal;
    const check = (): void => {
      if (signal.aborted) throw disposedError();
    };
    try {
      // The file first: a missing model fails before paying ~1 s for node-llama-cpp. No
      // native object is involved yet, so disposal need not wait for it: node-llama-cpp's
      // resolver can sit out network retries for minutes, ignoring its signal.
      const modelPath = await untilAborted(this.#modelPath(), signal, disposedError);
      const { getLlama } = await this.#import();
      check();
      const threads = this.#options.maxThreads ?? availableParallelism();
      this.#lease = acquireLlama(getLlama, { maxThreads: threads, log: this.#log });
      const llama = await this.#lease.llama;
      check();
      this.#model = await llama.loadModel({ modelPath, loadSignal: signal });
      check();
      const contextSize = Math.min(this.#model.trainContextSize, CONTEXT_TOKENS);
      this.#context = await this.#model.createEmbeddingContext({
        contextSize,
        batchSize: contextSize,
        threads,
        createSignal: signal,
      });
      check();
      // One line per load: `qmd mcp --shared` counts them (one model however many clients).
      this.#log.line(`embedding model loaded: ${modelPath}`);
      return { model: this.#model, context: this.#context, maxTokens: contextSize - 3 };
    } catch (error) {
      if (signal.aborted) throw disposedError();
      await this.#release();
      if (error instanceof LlmError) throw error;
      throw new LlmError(
        'MODEL_UNAVAILABLE',
        `could not load the embedding model ${this.#options.model}: ${(error as Error).message ?? error}`,
        { cause: error },
      );
    }
  }

  /** After a failed load: free what it created. Later calls get the same error. */
  async #release(): Promise<void> {
    const [context, model, lease] = [this.#context, this.#model, this.#lease];
    this.#context = this.#model = this.#lease = undefined;
    await context?.dispose().catch(() => {});
    await model?.dispose().catch(() => {});
    await lease?.release().catch(() => {});
  }
}
