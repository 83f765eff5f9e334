/**
 * What the embedder, the reranker and the query expander share: a model file resolved from
 * its spec, loaded on first use into the runtime's `Llama`, one context, native calls run one
 * at a time through a queue (so "running natively" is a count the teardown can wait for),
 * and the teardown steps the runtime calls in order (`runtime.ts`).
 */
import type { Llama, LlamaModel } from 'node-llama-cpp';
import { untilAborted } from '../settle.js';
import { abortedError, disposedError, LlmError } from './errors.js';
import { isRemoteSpec, type ModelKind } from './model-choice.js';
import { type DownloadProgress, defaultModelsDir, modelFingerprint, resolveModelPath } from './model-file.js';
import { SerialQueue } from './queue.js';
import type { LlmRuntime, ModelReport, ModelRole, RuntimePart } from './runtime.js';

export interface NativeModelOptions {
  /** A local `.gguf` path, or an `hf:` URI cached in (or downloaded to) `modelsDir`. */
  model: string;
  /** Where `hf:` models live. Default: `defaultModelsDir()`. */
  modelsDir?: string;
  /** Download an `hf:` model that is not cached. Default true; off, it is `MODEL_UNAVAILABLE`. */
  download?: boolean;
  /** How a download goes (a progress bar's feed); the start and end are also lines on the log. */
  onDownloadProgress?: (progress: DownloadProgress) => void;
}

/** A context, or anything else a model creates that must go before the model does. */
interface Disposable {
  dispose(): Promise<void> | void;
}

export abstract class NativeModel<Loaded> implements RuntimePart {
  abstract readonly role: ModelRole;
  /** How messages name it ("embedding model", "reranking model", "query expansion model"), its flag and variable. */
  protected abstract readonly kind: ModelKind;
  protected readonly queue = new SerialQueue();
  #path: Promise<string> | undefined;
  #fingerprint: Promise<string> | undefined;
  #loading: Promise<Loaded> | undefined;
  // What the load created, so that the teardown frees it even when the load failed halfway.
  #model: LlamaModel | undefined;
  #contexts: Disposable[] = [];

  constructor(
    protected readonly runtime: LlmRuntime,
    protected readonly options: NativeModelOptions,
  ) {}

  /** Calls in their native section right now (0 or 1: calls are serialized). */
  get running(): number {
    return this.queue.running;
  }

  /** Calls waiting for their turn (the teardown rejects them). */
  get queued(): number {
    return this.queue.pending;
  }

  /**
   * Changes when the model file's content changes (`modelFingerprint`). Needs the file (an
   * `hf:` model is resolved, and downloaded if allowed), not llama.cpp.
   */
  fingerprint(): Promise<string> {
    if (this.runtime.disposed) return Promise.reject(disposedError());
    this.#fingerprint ??= this.modelPath().then(modelFingerprint);
    return this.#fingerprint;
  }

  /** Disposes the runtime this model belongs to: all of its models, in order (`runtime.ts`). */
  dispose(): Promise<void> {
    return this.runtime.dispose();
  }

  report(): ModelReport {
    const model = this.#model;
    return {
      role: this.role,
      spec: this.options.model,
      loaded: model !== undefined && !model.disposed,
      ...(model !== undefined && {
        gpuLayers: model.gpuLayers,
        layers: model.fileInsights.totalLayers,
        sizeBytes: model.size,
      }),
    };
  }

  async quiesce(): Promise<void> {
    await Promise.allSettled([this.queue.close(disposedError), this.#loading]);
  }

  async disposeContexts(): Promise<void> {
    const contexts = this.#contexts.splice(0).reverse();
    for (const context of contexts) await context.dispose();
  }

  async disposeModels(): Promise<void> {
    const model = this.#model;
    this.#model = undefined;
    await model?.dispose();
  }

  /** What the load makes of the model: its context(s), kept with `keep` so the teardown frees them. */
  protected abstract open(
    model: LlamaModel,
    llama: Llama,
    keep: <T extends Disposable>(context: T) => T,
    signal: AbortSignal,
  ): Promise<Loaded>;

  /** Runs at the start of every call, inside the native section (a failpoint, a debug line). */
  protected abstract beforeCall(signal: AbortSignal): Promise<void> | undefined;

  /** The loaded model; the first caller starts the load, everyone shares it. */
  protected async ready(signal?: AbortSignal): Promise<Loaded> {
    if (this.runtime.disposed) throw disposedError();
    this.#loading ??= this.#load();
    // The caller may give up waiting; the load goes on for the others.
    return signal === undefined ? this.#loading : untilAborted(this.#loading, signal, () => abortedError(signal));
  }

  /**
   * Runs `task` as one native call: in the queue, after the `beforeCall` hook, unless the call
   * was cancelled or the runtime began its teardown meanwhile (the last points where it can
   * be called off; once `task` starts, llama.cpp runs, and the teardown waits for it).
   * `task` gets the signal that fires on either, for work it can stop between native steps.
   */
  protected run<T>(loaded: Loaded, task: (loaded: Loaded, signal: AbortSignal) => Promise<T>, signal?: AbortSignal) {
    const disposing = this.runtime.signal;
    return this.queue.add(
      async () => {
        const callSignal = signal ? AbortSignal.any([signal, disposing]) : disposing;
        try {
          await this.beforeCall(callSignal);
        } catch (error) {
          // A hook that honoured the signal rejects with its reason: say which signal it was.
          throw disposing.aborted ? disposedError() : signal?.aborted ? abortedError(signal) : error;
        }
        if (disposing.aborted) throw disposedError();
        if (signal?.aborted) throw abortedError(signal);
        return task(loaded, callSignal);
      },
      signal,
      abortedError,
    );
  }

  protected modelPath(): Promise<string> {
    this.#path ??= resolveModelPath(this.options.model, {
      modelsDir: this.options.modelsDir ?? defaultModelsDir(),
      download: this.options.download ?? true,
      resolver: async () => (await this.runtime.import()).resolveModelFile,
      log: this.runtime.log,
      signal: this.runtime.signal,
      kind: this.kind,
      ...(this.options.onDownloadProgress !== undefined && { onDownloadProgress: this.options.onDownloadProgress }),
    });
    return this.#path;
  }

  async #load(): Promise<Loaded> {
    const signal = this.runtime.signal;
    const check = (): void => {
      if (signal.aborted) throw disposedError();
    };
    let modelPath: string | undefined;
    try {
      this.runtime.add(this);
      // The file first: a missing model fails before paying ~1 s for node-llama-cpp. No
      // native object is involved yet, so the teardown need not wait for it: node-llama-cpp's
      // resolver can sit out network retries for minutes, ignoring its signal.
      modelPath = await untilAborted(this.modelPath(), signal, disposedError);
      const llama = await this.runtime.llama();
      check();
      this.#model = await llama.loadModel({ modelPath, loadSignal: signal });
      check();
      const keep = <T extends Disposable>(context: T): T => {
        this.#contexts.push(context);
        return context;
      };
      const loaded = await this.open(this.#model, llama, keep, signal);
      check();
      // One line per load: `qmd mcp --shared` counts them (one model however many clients).
      this.runtime.log.line(`${this.kind.noun} loaded: ${modelPath}`);
      return loaded;
    } catch (error) {
      if (signal.aborted) throw disposedError();
      await this.#release();
      if (error instanceof LlmError) throw error;
      // The file passed the header check (`gguf-check.ts`) but llama.cpp refused it: say which
      // file, and how to fetch a downloaded one again should its data be damaged.
      const from = modelPath === undefined || modelPath === this.options.model ? '' : ` from ${modelPath}`;
      const again = isRemoteSpec(this.options.model)
        ? '; if that file is damaged, qmd pull --refresh fetches it again'
        : '';
      throw new LlmError(
        'MODEL_UNAVAILABLE',
        `could not load the ${this.kind.noun} ${this.options.model}${from}: ${(error as Error).message ?? error}${again}`,
        { cause: error },
      );
    }
  }

  /** After a failed load: free what it created. Later calls get the same error. */
  async #release(): Promise<void> {
    await this.disposeContexts().catch(() => {});
    await this.disposeModels().catch(() => {});
  }
}
