/**
 * One `Llama` (the llama.cpp backend) per process, shared by the embedders alive at the
 * same time and disposed by the last one to go.
 *
 * Why not one per embedder, measured with node-llama-cpp 3.21.1: every `getLlama()` installs
 * its logger with the addon's `setLogger`, which releases the previous thread-safe callback,
 * and that callback's finalizer later clears the addon's global "JS logger set" flag. From
 * then on llama.cpp writes its lines with `fputs` to STDOUT (warnings and errors included),
 * bypassing every logger: a second embedder in one process put 95 model-load lines on stdout
 * (NODE_LLAMA_CPP_LOG_LEVEL=debug) and one line per embedding at the default level. In
 * `qmd mcp` that corrupts the protocol. So an embedder must never create a second `Llama`
 * while one is alive, and a process should not create one after disposing one: dispose
 * the embedder only when done with embeddings for good (the store does, at close).
 */
import type { Llama } from 'node-llama-cpp';
import type { Log } from '../log.js';
import { llamaLogger } from './log.js';

export type GetLlama = typeof import('node-llama-cpp').getLlama;

interface Shared {
  llama: Promise<Llama>;
  /** The logs of the embedders holding it; llama.cpp's lines go to the first. */
  holders: Log[];
}

/** Keyed by the `getLlama` function: a test that wraps it gets its own instance. */
const instances = new Map<GetLlama, Shared>();

export interface LlamaLease {
  llama: Promise<Llama>;
  /** Drops this holder; the last one disposes the `Llama` (after a pending `getLlama` settles). */
  release(): Promise<void>;
}

export function acquireLlama(getLlama: GetLlama, options: { maxThreads: number; log: Log }): LlamaLease {
  let shared = instances.get(getLlama);
  if (shared === undefined) {
    const created: Shared = { holders: [], llama: Promise.resolve(undefined as never) };
    const fallback = options.log;
    const forward = (level: string, message: string): void =>
      llamaLogger(created.holders[0] ?? fallback)(level, message);
    created.llama = getLlama({
      gpu: false,
      build: 'never', // never compile or download llama.cpp at run time
      skipDownload: true,
      maxThreads: options.maxThreads,
      logger: forward,
      debug: false, // NODE_LLAMA_CPP_DEBUG would bypass the logger and print to the console
    });
    // A failed getLlama is not kept: the next embedder tries again.
    created.llama.catch(() => {
      if (instances.get(getLlama) === created) instances.delete(getLlama);
    });
    instances.set(getLlama, created);
    shared = created;
  }
  const holder = options.log;
  const current = shared;
  current.holders.push(holder);
  let released: Promise<void> | undefined;
  return {
    llama: current.llama,
    release() {
      released ??= (async () => {
        current.holders.splice(current.holders.indexOf(holder), 1);
        if (current.holders.length > 0) return;
        if (instances.get(getLlama) === current) instances.delete(getLlama);
        const llama = await current.llama.catch(() => undefined);
        await llama?.dispose();
      })();
      return released;
    },
  };
}
