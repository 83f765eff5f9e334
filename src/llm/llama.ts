/**
 * One `Llama` (the llama.cpp backend) per process, shared by the models alive at the same
 * time and disposed by the last one to go.
 *
 * Why not one per model, measured with node-llama-cpp 3.21.1: every `getLlama()` installs
 * its logger with the addon's `setLogger`, which releases the previous thread-safe callback,
 * and that callback's finalizer later clears the addon's global "JS logger set" flag. From
 * then on llama.cpp writes its lines with `fputs` to STDOUT (warnings and errors included),
 * bypassing every logger: a second embedder in one process put 95 model-load lines on stdout
 * (NODE_LLAMA_CPP_LOG_LEVEL=debug) and one line per embedding at the default level. In
 * `qmd mcp` that corrupts the protocol. So a model must never create a second `Llama`
 * while one is alive, and a process should not create one after disposing one: dispose
 * the models only when done with them for good (the store does, at close).
 *
 * The backend (docs/design.md §5, "GPU"): the first holder's `gpu` choice decides. A GPU
 * backend that does not load falls back to the CPU with one line saying what failed and how
 * to turn the GPU off; nothing is built or downloaded (`build: 'never'`, `skipDownload`).
 */
import type { Llama } from 'node-llama-cpp';
import { type Log, silentLog } from '../log.js';
import { GPU_OFF_HINT, type GpuBackend, type GpuChoice } from './gpu.js';
import { llamaLogger } from './log.js';

/** What this file needs of node-llama-cpp. */
export type LlamaLoader = Pick<typeof import('node-llama-cpp'), 'getLlama' | 'getLlamaGpuTypes'>;
export type GetLlama = LlamaLoader['getLlama'];

/** What the backend turned out to be, for `status` and the tests. */
export interface Backend {
  /** What was asked for (`--gpu`, `QMD_GPU`). */
  requested: GpuChoice;
  /** What runs: a GPU backend, or `cpu`. */
  gpu: GpuBackend | 'cpu';
  /** The GPU devices llama.cpp uses (empty on the CPU). */
  devices: string[];
  /** Why it is not the GPU that was asked for (auto: found none, or one failed), when so. */
  fallback?: string;
}

interface Shared {
  llama: Promise<Llama>;
  backend: Backend | undefined;
  /** The logs of the models holding it; llama.cpp's lines go to the first. */
  holders: Log[];
}

/** Keyed by the `getLlama` function: a test that wraps it gets its own instance. */
const instances = new Map<GetLlama, Shared>();

export interface LlamaLease {
  llama: Promise<Llama>;
  /** What the backend is, once `llama` has resolved. */
  backend(): Backend | undefined;
  /** Drops this holder; the last one disposes the `Llama` (after a pending `getLlama` settles). */
  release(): Promise<void>;
}

export interface AcquireOptions {
  /** node-llama-cpp's thread budget for all contexts; undefined: its default (the math cores, at least 4). */
  maxThreads: number | undefined;
  gpu: GpuChoice;
  log: Log;
  /**
   * No line when the GPU is not used (none found, one failed): for `qmd status`, whose report
   * says it in its `llama.cpp:` line (`Backend.fallback`), so a person reads it once.
   */
  quiet?: boolean;
}

export function acquireLlama(loader: LlamaLoader, options: AcquireOptions): LlamaLease {
  const key = loader.getLlama;
  let shared = instances.get(key);
  if (shared === undefined) {
    const created: Shared = { holders: [], backend: undefined, llama: Promise.resolve(undefined as never) };
    const fallback = options.log;
    const forward = (level: string, message: string): void =>
      llamaLogger(created.holders[0] ?? fallback)(level, message);
    const log = (): Log => (options.quiet ? silentLog : (created.holders[0] ?? fallback));
    created.llama = loadBackend(loader, options, forward, log).then(({ llama, backend }) => {
      created.backend = backend;
      return llama;
    });
    // A failed getLlama is not kept: the next model tries again.
    created.llama.catch(() => {
      if (instances.get(key) === created) instances.delete(key);
    });
    instances.set(key, created);
    shared = created;
  }
  const holder = options.log;
  const current = shared;
  current.holders.push(holder);
  let released: Promise<void> | undefined;
  return {
    llama: current.llama,
    backend: () => current.backend,
    release() {
      released ??= (async () => {
        current.holders.splice(current.holders.indexOf(holder), 1);
        if (current.holders.length > 0) return;
        if (instances.get(key) === current) instances.delete(key);
        const llama = await current.llama.catch(() => undefined);
        await llama?.dispose();
      })();
      return released;
    },
  };
}

type Forward = (level: string, message: string) => void;

/**
 * The `Llama` for `options.gpu`: each GPU backend to try, in node-llama-cpp's order (for
 * `auto`, those it detects on this machine), then the CPU. Only the CPU load may throw.
 */
async function loadBackend(
  loader: LlamaLoader,
  options: AcquireOptions,
  logger: Forward,
  log: () => Log,
): Promise<{ llama: Llama; backend: Backend }> {
  const requested = options.gpu;
  const load = (gpu: GpuBackend | false): Promise<Llama> =>
    loader.getLlama({
      gpu,
      build: 'never', // never compile or download llama.cpp at run time
      skipDownload: true,
      ...(options.maxThreads !== undefined && { maxThreads: options.maxThreads }),
      logger,
      progressLogs: false, // its fallback notes go to the console; we say it in one line instead
      debug: false, // NODE_LLAMA_CPP_DEBUG would bypass the logger and print to the console
    });
  if (requested === 'off') return { llama: await load(false), backend: { requested, gpu: 'cpu', devices: [] } };

  const candidates = requested === 'auto' ? await detectedGpus(loader) : [requested];
  const failures: string[] = [];
  for (const gpu of candidates) {
    if (gpu === 'metal' && process.platform !== 'darwin') {
      failures.push('metal: Metal exists only on macOS');
      continue;
    }
    try {
      const llama = await load(gpu);
      if (llama.gpu === false) {
        // Not expected for a named backend; keep it rather than start a second Llama.
        failures.push(`${gpu}: node-llama-cpp loaded its CPU build`);
        return done(llama, requested, failures, log());
      }
      const devices = await llama.getGpuDeviceNames().catch(() => []);
      if (devices.length === 0) {
        // The backend loaded but drives no device: llama.cpp computes on the CPU inside it. It
        // is kept (disposing a Llama and starting another is what `acquireLlama` avoids).
        const note = `the ${llama.gpu} backend loaded but found no GPU device; llama.cpp runs on the CPU`;
        log().warn(`${note}. ${GPU_OFF_HINT} runs on the CPU without looking.`);
        return { llama, backend: { requested, gpu: llama.gpu, devices, fallback: note } };
      }
      return { llama, backend: { requested, gpu: llama.gpu, devices } };
    } catch (error) {
      failures.push(`${gpu}: ${failureReason(gpu, error)}`);
    }
  }
  return done(await load(false), requested, failures, log());
}

/** The CPU backend after the GPU ones: one line says why, one backend says what. */
function done(llama: Llama, requested: GpuChoice, failures: string[], log: Log): { llama: Llama; backend: Backend } {
  let fallback: string;
  if (failures.length > 0) {
    fallback = `GPU backend did not load (${failures.join('; ')})`;
    log.warn(`${fallback}: llama.cpp runs on the CPU. ${GPU_OFF_HINT} runs on the CPU without trying.`);
  } else {
    fallback = 'no GPU found (no Metal, CUDA or Vulkan driver detected)';
    log.line(`QMD: ${fallback}: llama.cpp runs on the CPU. ${GPU_OFF_HINT} skips looking.`);
  }
  return { llama, backend: { requested, gpu: 'cpu', devices: [], fallback } };
}

/** The GPU backends node-llama-cpp finds drivers for here, best first. */
async function detectedGpus(loader: LlamaLoader): Promise<GpuBackend[]> {
  try {
    const types = await loader.getLlamaGpuTypes('supported');
    return types.filter((type): type is GpuBackend => type === 'metal' || type === 'cuda' || type === 'vulkan');
  } catch {
    return [];
  }
}

const DRIVER_HINT: Record<GpuBackend, string> = {
  cuda: 'is the NVIDIA driver with its CUDA libraries installed?',
  vulkan: 'is a Vulkan loader (libvulkan.so.1) and a GPU driver installed?',
  metal: 'Metal needs macOS on Apple Silicon',
};

function failureReason(gpu: GpuBackend, error: unknown): string {
  const name = error instanceof Error ? error.name : '';
  const message = (error instanceof Error ? error.message : String(error)).replace(/\s+/g, ' ').trim();
  // NoBinaryFoundError's message is its own name: the prebuilt is missing, or its test load failed.
  if (name === 'NoBinaryFoundError' || message === 'NoBinaryFoundError') {
    return `no prebuilt llama.cpp for ${gpu} loads here (${DRIVER_HINT[gpu]})`;
  }
  return message.length > 200 ? `${message.slice(0, 200)}…` : message;
}
