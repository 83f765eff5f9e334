/**
 * The models of one store, and the order they leave in. A store runs up to three models on
 * one llama.cpp backend (`llama.ts`: one `Llama` per process): the embedding model, the
 * reranker and the query expansion model, each loaded on first use. They are torn down
 * together, in the order docs/design.md §1.3 asks for: no model, context or `Llama` is
 * disposed while any native call of any of them runs (disposing under a running call
 * segfaults, §5), so
 *
 *   1. every model refuses new calls, rejects its queued ones and aborts its load,
 *   2. every native call still running (an embedding, a ranking, a generation) and every
 *      load in progress is waited for,
 *   3. then every context is disposed, then every model, then the `Llama` (the last holder
 *      of the process's instance disposes it).
 *
 * Disposing any one model of a runtime disposes the runtime: the store closes all three at
 * once, and a part torn down alone could free a buffer another part's call is using.
 */
import { availableParallelism } from 'node:os';
import type { Llama } from 'node-llama-cpp';
import { createLog, type Log } from '../log.js';
import { runEvery } from '../settle.js';
import { disposedError } from './errors.js';
import type { GpuChoice } from './gpu.js';
import { acquireLlama, type Backend, type LlamaLease } from './llama.js';

/** What qmd uses of node-llama-cpp; `import('node-llama-cpp')` provides it (tests may wrap parts). */
export type LlamaModule = Pick<typeof import('node-llama-cpp'), 'getLlama' | 'resolveModelFile'> &
  Partial<Pick<typeof import('node-llama-cpp'), 'getLlamaGpuTypes' | 'LlamaChatSession' | 'resolveChatWrapper'>>;

/** The three models of a query, by what they do. */
export type ModelRole = 'embed' | 'rerank' | 'expand';

/** One model as `status` shows it. */
export interface ModelReport {
  role: ModelRole;
  /** The spec it was given (a path or an `hf:` URI). */
  spec: string;
  /** Loaded into llama.cpp (models load on first use). */
  loaded: boolean;
  /** Layers llama.cpp put on the GPU, of `layers` (0 on the CPU). Set once loaded. */
  gpuLayers?: number;
  layers?: number;
  /** Bytes of weights, once loaded. */
  sizeBytes?: number;
}

export interface RuntimeReport {
  /** What `--gpu`/`QMD_GPU` asked for. */
  requested: GpuChoice;
  /** llama.cpp threads per context (before the backend loads: what it will be, from the CPU count). */
  threads: number;
  /** The backend, once llama.cpp is loaded (undefined before: nothing loads until needed). */
  backend?: Backend;
  /** The GPU's memory in bytes, when a GPU backend is loaded. */
  vram?: { total: number; used: number; free: number };
  models: ModelReport[];
}

/** What the runtime needs of each model it holds. */
export interface RuntimePart {
  readonly role: ModelRole;
  report(): ModelReport;
  /** Refuses new calls, rejects queued ones; settles when no native call or load of it runs. */
  quiesce(): Promise<void>;
  disposeContexts(): Promise<void>;
  disposeModels(): Promise<void>;
}

export interface RuntimeOptions {
  /** Default `auto` (`gpu.ts`). */
  gpu?: GpuChoice;
  /** llama.cpp threads for every context (and `getLlama`'s `maxThreads`). Default: `defaultThreads()`. */
  threads?: number;
  /** llama.cpp's lines, the backend's fallback line. Default: stderr. Never stdout. */
  log?: Log;
  /** How node-llama-cpp is loaded. Default: `import('node-llama-cpp')`, on first use only. */
  importLlama?: () => Promise<LlamaModule>;
}

/**
 * llama.cpp threads per context when none is given: half the CPU's math cores (physical cores,
 * as llama.cpp counts them: `Llama.cpuMathCores`), at least 1. Measured (docs/design.md §5,
 * "Threads and batches"): on 2 busy cores 1 thread embedded 241 chunks/s against 86 with 2
 * (llama.cpp's thread pool waits on a thread the OS has descheduled), and node-llama-cpp's own
 * default of at least 4 measured 300–490 ms per embedding against 2–10 ms; half leaves a core
 * for Node, the query worker and the rest of the machine. Before the backend is loaded, half of
 * `os.availableParallelism()` stands in.
 */
export function defaultThreads(mathCores: number = availableParallelism()): number {
  return Math.max(1, Math.floor(mathCores / 2));
}

export class LlmRuntime {
  readonly gpu: GpuChoice;
  readonly log: Log;
  /** `threads` as given; else undefined, and `defaultThreads` of the loaded backend's math cores. */
  readonly #givenThreads: number | undefined;
  #threads: number | undefined;
  readonly #importLlama: () => Promise<LlamaModule>;
  readonly #parts: RuntimePart[] = [];
  /** Fires when `dispose()` begins: every part's loads and hooks listen to it. */
  readonly #disposing = new AbortController();
  #module: Promise<LlamaModule> | undefined;
  #lease: LlamaLease | undefined;
  #disposal: Promise<void> | undefined;

  constructor(options: RuntimeOptions = {}) {
    this.gpu = options.gpu ?? 'auto';
    this.#givenThreads = options.threads;
    this.log = options.log ?? createLog(process.stderr);
    this.#importLlama = options.importLlama ?? (() => import('node-llama-cpp'));
  }

  /** llama.cpp threads for each context (`defaultThreads` unless given). */
  get threads(): number {
    return this.#givenThreads ?? this.#threads ?? defaultThreads();
  }

  /** Aborted once `dispose()` has begun. */
  get signal(): AbortSignal {
    return this.#disposing.signal;
  }

  get disposed(): boolean {
    return this.#disposing.signal.aborted;
  }

  /** node-llama-cpp, imported on first use (about 1 s with its binary check: BM25 never pays it). */
  import(): Promise<LlamaModule> {
    this.#module ??= this.#importLlama();
    return this.#module;
  }

  /** The process's `Llama`, loaded with this runtime's GPU choice on first call (`quiet`: `AcquireOptions.quiet`). */
  async llama(options: { quiet?: boolean } = {}): Promise<Llama> {
    if (this.disposed) throw disposedError();
    const module = await this.import();
    if (this.disposed) throw disposedError();
    this.#lease ??= acquireLlama(
      {
        getLlama: module.getLlama,
        getLlamaGpuTypes:
          module.getLlamaGpuTypes ?? (async (include) => (await import('node-llama-cpp')).getLlamaGpuTypes(include)),
      },
      { maxThreads: this.#givenThreads, gpu: this.gpu, log: this.log, ...(options.quiet && { quiet: true }) },
    );
    const llama = await this.#lease.llama;
    this.#threads ??= defaultThreads(llama.cpuMathCores);
    return llama;
  }

  /** Holds `part` for the ordered teardown. Throws DISPOSED once disposal has begun. */
  add(part: RuntimePart): void {
    if (this.disposed) throw disposedError();
    if (!this.#parts.includes(part)) this.#parts.push(part);
  }

  /** What runs where, without loading anything. */
  async report(): Promise<RuntimeReport> {
    const backend = this.#lease?.backend();
    const report: RuntimeReport = {
      requested: this.gpu,
      threads: this.threads,
      ...(backend !== undefined && { backend }),
      models: this.#parts.map((part) => part.report()),
    };
    if (backend !== undefined && backend.gpu !== 'cpu' && !this.disposed) {
      const llama = await this.#lease?.llama.catch(() => undefined);
      const vram = await llama?.getVramState().catch(() => undefined);
      if (vram !== undefined) report.vram = { total: vram.total, used: vram.used, free: vram.free };
    }
    return report;
  }

  /**
   * `report()` after loading the backend (not the models): what `qmd status` shows. Quiet: the
   * report's backend line says why the GPU is not used, and the log would say it a second time.
   */
  async probe(): Promise<RuntimeReport> {
    await this.llama({ quiet: true });
    return this.report();
  }

  /** The ordered teardown (top of the file). Idempotent: every call returns the same promise. */
  dispose(): Promise<void> {
    this.#disposal ??= this.#dispose();
    return this.#disposal;
  }

  async #dispose(): Promise<void> {
    this.#disposing.abort(disposedError());
    const parts = [...this.#parts];
    // Waits, never abandons: freeing anything under a running native call is the crash.
    await Promise.allSettled(parts.map((part) => part.quiesce()));
    await runEvery('disposing llama.cpp failed', [
      ...parts.map((part) => () => part.disposeContexts()),
      ...parts.map((part) => () => part.disposeModels()),
      () => this.#lease?.release(),
    ]);
  }
}

/** How a model is given its runtime: a store's shared one, or its own made from these options. */
export interface RuntimeChoice {
  /** The store's runtime, shared with its other models. Default: a runtime of this model's own. */
  runtime?: LlmRuntime;
  /** For a runtime of its own: llama.cpp's lines and download notes. Default: stderr. Never stdout. */
  log?: Log;
  /** For a runtime of its own: llama.cpp threads (`runtime.ts`, `defaultThreads`). */
  maxThreads?: number;
  /** For a runtime of its own: the backend (`gpu.ts`). Default `auto`. */
  gpu?: GpuChoice;
  /** For a runtime of its own: how node-llama-cpp is loaded. Default: `import('node-llama-cpp')`, on first use only. */
  importLlama?: () => Promise<LlamaModule>;
}

/** The runtime a model runs in: the one it is given, else one of its own. */
export function runtimeFor(options: RuntimeChoice): LlmRuntime {
  return (
    options.runtime ??
    new LlmRuntime({
      ...(options.gpu !== undefined && { gpu: options.gpu }),
      ...(options.maxThreads !== undefined && { threads: options.maxThreads }),
      ...(options.log !== undefined && { log: options.log }),
      ...(options.importLlama !== undefined && { importLlama: options.importLlama }),
    })
  );
}
