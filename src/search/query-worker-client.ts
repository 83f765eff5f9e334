import { existsSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { QmdError } from '../errors.js';
import type { FailpointAction, Failpoints } from '../failpoints.js';
import type { Log } from '../log.js';
import { workerExecArgv } from '../node-flags.js';
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
  /**
   * Where calls run while the worker cannot (it would not start, or it died): the store's own
   * connection on this thread. Without one, such calls fail.
   */
  fallback?: QueryReads;
  /** The clock the retry backoff reads (tests give a fake one). */
  now?: () => number;
}

/** The first wait before a worker that failed is tried again; doubled at each failure since it last answered. */
export const WORKER_RETRY_MS = 1000;
/** The longest wait between two tries. */
export const WORKER_RETRY_MAX_MS = 60_000;

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
 * nothing).
 *
 * A worker that cannot start, or dies, costs no call: what it had and what waited for it run
 * on `fallback` (this thread, the store's connection), with one line in the log, and so does
 * every call until the worker is tried again, `WORKER_RETRY_MS` later, then twice as long
 * after each failure, up to `WORKER_RETRY_MAX_MS`; a worker that answers resets the wait.
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
  /** While the worker is down: when to try it again, and the wait after the next failure. */
  private retryAt: number | undefined;
  private retryMs = WORKER_RETRY_MS;
  /** Why it went down last (a failed retry with the same reason says nothing more). */
  private downReason: string | undefined;
  /** Whether the running worker has answered a call: then it started, and a failure is a death. */
  private answered = false;

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
    const { fallback } = this.options;
    if (fallback !== undefined && this.retryAt !== undefined && this.now() < this.retryAt)
      return runOn(fallback, call, signal) as Promise<T>;
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
    if (this.queue.length === 0) return;
    this.worker ??= this.startOrFallBack();
    // It would not start: `down` has sent every waiting call to the fallback.
    if (this.worker === undefined) return;
    const message = this.queue.shift()!;
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

  /** Starts the worker; one that Node refuses at once goes down like one that fails later. */
  private startOrFallBack(): Worker | undefined {
    try {
      return this.start();
    } catch (error) {
      // Node refuses some flags at once (ERR_WORKER_INVALID_EXEC_ARGV), before any event.
      this.down((error as Error).message, undefined);
      return undefined;
    }
  }

  private start(): Worker {
    const { log, script } = this.options;
    const data: WorkerData = {
      path: this.options.path,
      busyTimeoutMs: this.options.busyTimeoutMs,
      vectorExtension: this.options.vectorExtension,
    };
    // stdout: true keeps anything the worker might print off the process's stdout, which is
    // the MCP protocol in `qmd mcp`; it goes to the log instead. Never a wrapper's flags:
    // `workerExecArgv` (src/node-flags.ts).
    const worker = new Worker(script.file, {
      workerData: data,
      stdout: true,
      execArgv: script.execArgv ?? workerExecArgv(process.execArgv),
    });
    this.answered = false;
    worker.unref();
    worker.stdout.on('data', (chunk: Buffer) => log.line(chunk.toString('utf8').trimEnd()));
    worker.on('message', (reply: WorkerReply) => {
      if (this.worker === worker || 'log' in reply) this.receive(reply);
    });
    // A worker retired by `cutShort` is no longer `this.worker`: its end concerns no call.
    worker.on('error', (error) => {
      if (this.worker !== worker) return;
      this.down(error.message, (error as NodeJS.ErrnoException).code);
    });
    worker.on('exit', (code) => {
      if (this.worker !== worker) return;
      if (this.closing === undefined) this.down(`it exited (code ${code})`, undefined);
      else {
        this.worker = undefined;
        this.current = undefined;
      }
    });
    return worker;
  }

  private now(): number {
    return (this.options.now ?? (() => performance.now()))();
  }

  /**
   * The worker would not start, or died: the calls it had and those waiting run on the
   * fallback (without one, they fail), and so does every call until `retryAt`. One line says
   * so; a retry that fails the same way says nothing more.
   */
  private down(reason: string, code: string | undefined): void {
    const { fallback, log } = this.options;
    const worker = this.worker;
    this.worker = undefined;
    if (worker !== undefined) void worker.terminate();
    const running = this.current;
    this.current = undefined;
    const started = this.answered;
    const wait = this.retryMs;
    this.retryAt = this.now() + wait;
    this.retryMs = Math.min(wait * 2, WORKER_RETRY_MAX_MS);
    if (fallback === undefined) {
      log.warn(`the query worker failed: ${reason}`);
      this.failAll(new Error(`The query worker failed: ${reason}`));
      return;
    }
    if (reason !== this.downReason) {
      const what = started ? 'stopped' : 'could not start';
      log.warn(
        `the query worker ${what} (${reason}): queries run on the main thread; it is tried again in ${Math.round(wait / 1000)} s`,
      );
    }
    this.downReason = reason;
    const calls = [...(running === undefined ? [] : [running]), ...this.queue];
    this.queue = [];
    for (const message of calls) {
      const waiting = this.pending.get(message.id);
      this.pending.delete(message.id);
      if (waiting === undefined) continue;
      // Out of memory in the worker: the same call on this thread would take the process down.
      if (message === running && code === 'ERR_WORKER_OUT_OF_MEMORY') {
        waiting.reject(new Error(`The query worker ran out of memory on this query: ${reason}`));
        continue;
      }
      runOn(fallback, message.call).then(waiting.resolve, waiting.reject);
    }
  }

  private receive(reply: WorkerReply): void {
    if ('log' in reply) {
      this.options.log[reply.log](reply.text);
      return;
    }
    if (reply.id !== this.current?.id) return;
    this.current = undefined;
    if (!this.answered) {
      this.answered = true;
      if (this.retryAt !== undefined)
        this.options.log.line('the query worker runs again: queries leave the main thread');
      this.retryAt = undefined;
      this.retryMs = WORKER_RETRY_MS;
      this.downReason = undefined;
    }
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

/** One call on `reads` (the fallback), as the worker would have answered it. */
function runOn(reads: QueryReads, call: ReadCall, signal?: AbortSignal): Promise<unknown> {
  switch (call.kind) {
    case 'lexical':
      return reads.lexical(call.query, call.options, signal);
    case 'nearest':
      return reads.nearest(call.vector, call.fingerprint, call.depth, call.collections, call.folder, signal);
    case 'multiGet':
      return reads.multiGet(call.pattern, call.options, signal);
    case 'status':
      return reads.status(signal);
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
  const inline = new InlineReads(parts, () => options.failpoints.carry(QUERY_FAILPOINT));
  if (worker !== undefined && worker !== false) {
    const script = worker === true ? bundledWorkerScript() : worker;
    if (script !== undefined) return new QueryWorker({ ...rest, script, fallback: inline });
    options.log.warn('the query worker is not built (dist/query-worker.mjs): queries run on the main thread');
  }
  return inline;
}
