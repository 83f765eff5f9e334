import { existsSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { QmdError } from '../errors.js';
import type { FailpointAction, Failpoints } from '../failpoints.js';
import type { Log } from '../log.js';
import type { MultiGetOptions, MultiGetResult, StatusReport } from '../store/types.js';
import {
  InlineReads,
  type LexicalOptions,
  QUERY_FAILPOINT,
  type QueryReads,
  type ReadCall,
  type ReadParts,
} from './query-reads.js';
import type { SearchHit } from './types.js';
import { fromWire, type WorkerData, type WorkerReply } from './worker-wire.js';

/**
 * How long `close()` waits for an idle worker to close its connection and exit before it
 * terminates it: half the lifecycle's default step bound (2000 ms), so the `disposeStore`
 * step still has the other half for the database.
 */
export const WORKER_CLOSE_MS = 1000;

/** Where the worker's code is, and what Node needs to run it (tests run the TypeScript source). */
export interface WorkerScript {
  file: string | URL;
  execArgv?: string[];
}

export interface QueryWorkerOptions extends WorkerData {
  log: Log;
  failpoints: Failpoints;
  script: WorkerScript;
  closeTimeoutMs?: number;
}

/** One call as the worker is sent it. */
interface WorkerCall {
  id: number;
  call: ReadCall;
  failpoint: FailpointAction | undefined;
}

interface Pending {
  resolve(value: unknown): void;
  reject(error: Error): void;
}

/**
 * The heavy read calls in a `worker_threads` worker with its own read-only connection
 * (docs/design.md §8.4). Every call takes the caller's `AbortSignal`: when it fires the call
 * rejects with ABORTED at once, so the lifecycle's drain never waits on the worker. The worker
 * is sent one call at a time and the rest wait here, in order: an aborted call that waits is
 * dropped before the worker ever sees it, and aborting the one it runs terminates it. The
 * worker is `unref()`ed: it never keeps the process alive. It starts on the first call (a
 * server that is never asked a query starts no thread, and `initialize` shares the cores with
 * nothing) and again on the next call if it died.
 */
export class QueryWorker implements QueryReads {
  private worker: Worker | undefined;
  private next = 0;
  /** Calls someone still waits for, sent or not. */
  private readonly pending = new Map<number, Pending>();
  /** Calls waiting for the worker, in order; none has been sent. */
  private queue: WorkerCall[] = [];
  /** The call the worker is running (sent, not answered): while there is one, it is busy. */
  private current: WorkerCall | undefined;
  /** Workers terminated because the call they ran was aborted, until they have exited. */
  private readonly retiring = new Set<Promise<void>>();
  private closing: Promise<void> | undefined;

  constructor(private readonly options: QueryWorkerOptions) {}

  lexical(query: string, options: LexicalOptions, signal?: AbortSignal): Promise<SearchHit[]> {
    return this.call({ kind: 'lexical', query, options }, signal);
  }

  nearest(
    vector: Float32Array,
    fingerprint: string,
    depth: number,
    collections: string | undefined,
    folder: string | undefined,
    signal?: AbortSignal,
  ): Promise<SearchHit[]> {
    return this.call({ kind: 'nearest', vector, fingerprint, depth, collections, folder }, signal);
  }

  multiGet(pattern: string, options: MultiGetOptions, signal?: AbortSignal): Promise<MultiGetResult> {
    return this.call({ kind: 'multiGet', pattern, options }, signal);
  }

  status(signal?: AbortSignal): Promise<StatusReport> {
    return this.call({ kind: 'status' }, signal);
  }

  /** Whether the worker is running a call (for tests and `close`). */
  get busy(): boolean {
    return this.current !== undefined;
  }

  /** The worker's thread, while it runs (tests watch its exit). */
  get thread(): Worker | undefined {
    return this.worker;
  }

  /**
   * Every waiting call rejects with CLOSED, then the worker goes: an idle one is sent `close`
   * (it closes its connection and exits) and terminated if it has not exited within
   * `closeTimeoutMs`; a busy one is terminated at once, since it would read `close` only after
   * the call it is running. Resolves when the worker has exited: `terminate()` ends JS at once
   * but waits for a native call to return (measured: bench/experiments/worker/), so a worker
   * stuck in SQLite holds this until the lifecycle's step bound fails the step.
   */
  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  private async shutdown(): Promise<void> {
    this.failAll(new QmdError('CLOSED', 'The index is closed'));
    await Promise.all([this.stopCurrent(), ...this.retiring]);
  }

  private async stopCurrent(): Promise<void> {
    const worker = this.worker;
    if (worker === undefined) return;
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    if (this.busy) {
      void worker.terminate();
    } else {
      worker.postMessage({ close: true });
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<'late'>((resolve) => {
        timer = setTimeout(() => resolve('late'), this.options.closeTimeoutMs ?? WORKER_CLOSE_MS);
      });
      const outcome = await Promise.race([exited, late]);
      clearTimeout(timer);
      if (outcome === 'late') void worker.terminate();
    }
    await exited;
  }

  private call<T>(call: ReadCall, signal: AbortSignal | undefined): Promise<T> {
    if (this.closing !== undefined) return Promise.reject(new QmdError('CLOSED', 'The index is closed'));
    if (signal?.aborted) return Promise.reject(aborted());
    const id = ++this.next;
    return new Promise<T>((resolve, reject) => {
      const onAbort = (): void => {
        this.pending.delete(id);
        reject(aborted());
        this.cutShort(id);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.pending.set(id, {
        resolve: (value) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(value as T);
        },
        reject: (error) => {
          signal?.removeEventListener('abort', onAbort);
          reject(error);
        },
      });
      this.queue.push({ id, call, failpoint: this.options.failpoints.carry(QUERY_FAILPOINT) });
      this.pump();
    });
  }

  /** Sends the worker the next waiting call, if it runs none (starting it if need be). */
  private pump(): void {
    if (this.current !== undefined || this.closing !== undefined) return;
    const message = this.queue.shift();
    if (message === undefined) return;
    this.worker ??= this.start();
    this.current = message;
    this.worker.postMessage(message);
  }

  /**
   * The call `id` was aborted. Still waiting here, it is dropped: the worker never runs it.
   * If the worker is running it, the worker is terminated, so a runaway call stops using a
   * core and no later call waits behind it; the next call goes to a fresh worker.
   * `terminate()` stops JS at once but not a native call (better-sqlite3 has no interrupt:
   * docs/design.md §8.4): such a thread lingers until its statement returns, beside the
   * fresh one.
   */
  private cutShort(id: number): void {
    this.queue = this.queue.filter((message) => message.id !== id);
    const worker = this.worker;
    if (worker === undefined || this.closing !== undefined || this.current?.id !== id) return;
    this.worker = undefined;
    this.current = undefined;
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    this.retiring.add(exited);
    void exited.then(() => this.retiring.delete(exited));
    void worker.terminate();
    this.pump();
  }

  private start(): Worker {
    const { log, script } = this.options;
    const data: WorkerData = {
      path: this.options.path,
      busyTimeoutMs: this.options.busyTimeoutMs,
      vectorExtension: this.options.vectorExtension,
    };
    // stdout: true keeps anything the worker might print off the process's stdout, which is
    // the MCP protocol in `qmd mcp`; it goes to the log instead.
    const worker = new Worker(script.file, {
      workerData: data,
      stdout: true,
      ...(script.execArgv !== undefined && { execArgv: script.execArgv }),
    });
    worker.unref();
    worker.stdout.on('data', (chunk: Buffer) => log.line(chunk.toString('utf8').trimEnd()));
    worker.on('message', (reply: WorkerReply) => {
      if (this.worker === worker || 'log' in reply) this.receive(reply);
    });
    // A worker retired by `cutShort` is no longer `this.worker`: its end concerns no call.
    worker.on('error', (error) => {
      if (this.worker !== worker) return;
      log.warn(`the query worker failed: ${error.message}`);
      this.failAll(new Error(`The query worker failed: ${error.message}`));
    });
    worker.on('exit', (code) => {
      if (this.worker !== worker) return;
      this.worker = undefined;
      this.current = undefined;
      if (this.closing === undefined) this.failAll(new Error(`The query worker exited (code ${code})`));
    });
    return worker;
  }

  private receive(reply: WorkerReply): void {
    if ('log' in reply) {
      this.options.log[reply.log](reply.text);
      return;
    }
    if (reply.id !== this.current?.id) return;
    this.current = undefined;
    const waiting = this.pending.get(reply.id);
    this.pending.delete(reply.id);
    // The store closed while the worker ran this call: its caller was answered CLOSED.
    if (waiting !== undefined) {
      if ('error' in reply) waiting.reject(fromWire(reply.error));
      else waiting.resolve(reply.value);
    }
    this.pump();
  }

  private failAll(error: Error): void {
    const waiting = [...this.pending.values()];
    this.pending.clear();
    this.queue = [];
    for (const call of waiting) call.reject(error);
  }
}

function aborted(): QmdError {
  return new QmdError('ABORTED', 'The query was cancelled');
}

/**
 * `dist/query-worker.mjs`, the bundle's second entry (scripts/build.ts): beside the code that
 * asks, which is `dist/qmd.mjs`, a chunk under `dist/chunks/`, or `qmd mcp`'s cached script
 * there. Undefined when not found (running from `src/`).
 */
export function bundledWorkerScript(from: string = import.meta.url): WorkerScript | undefined {
  const here = dirname(fileURLToPath(from));
  const file = join(basename(here) === 'chunks' ? dirname(here) : here, 'query-worker.mjs');
  return existsSync(file) ? { file } : undefined;
}

/**
 * The store's read calls: in a worker when `worker` asks for one (`StoreOptions.queryWorker`),
 * else inline on the store's own connection. A worker asked for but not built (running from
 * `src/`) is one warning, then inline.
 */
export function openReads(
  parts: ReadParts,
  options: Omit<QueryWorkerOptions, 'script'> & { worker: boolean | WorkerScript | undefined },
): QueryReads {
  const { worker, ...rest } = options;
  if (worker !== undefined && worker !== false) {
    const script = worker === true ? bundledWorkerScript() : worker;
    if (script !== undefined) return new QueryWorker({ ...rest, script });
    options.log.warn('the query worker is not built (dist/query-worker.mjs): queries run on the main thread');
  }
  return new InlineReads(parts, () => options.failpoints.carry(QUERY_FAILPOINT));
}
