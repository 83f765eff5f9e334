/**
 * A hand-written `IndexWatcher` (src/watch/types.ts) for the hosts' tests: the lifecycle model
 * (test/model/), the hosts (test/lifecycle/), the serving roots and the MCP server
 * (test/serve/, test/mcp/). It does what the contract says a watcher does, and records it:
 *
 * - writes start and settle on the test's say-so (`startWrite()`, `settleWrite()`), each
 *   announced through `onWrite`, as the engine's are;
 * - `close(signal)` stops hearing changes at once (it clears the handle it holds), resolves once
 *   no write it knew of is running, and rolls the running ones back when `signal` fires (a
 *   rolled-back write is settled later, when the test says, as a late `settled` may come);
 * - it holds a timer from its creation until `close()`: on a fake clock unref'd, as the contract
 *   allows (the oracle's "only the watchdog is left after done" then catches a teardown that
 *   never closes it), or, with `holdLoop: 'ref'`, a real ref'd interval, the watcher a wrong
 *   teardown would leave holding the process (test/lifecycle/fixtures/host-process.ts).
 *
 * `calls` gets `watcher.start`, `watcher.close`, `watcher.rollback`, `watcher.closed`.
 */
import type { Clock } from '../../src/lifecycle/clock.js';
import type { IndexedChange, IndexWatcher, WatchReport } from '../../src/watch/types.js';

export interface FakeWrite {
  settled: boolean;
  rolledBack: boolean;
}

export interface FakeWatcherOptions {
  /** Records each call (the harness's `record`, so the oracle sees its order among the others). */
  record?: (call: string) => void;
  /** The fake clock the timer is held on (unref'd); without one, nothing is held unless `holdLoop`. */
  clock?: Clock;
  /** `'ref'`: a real ref'd interval until `close()`, as a watcher that holds the loop would. */
  holdLoop?: 'ref';
  /** What `report()` starts from. */
  report?: Partial<WatchReport>;
  /** `start()` rejects with this. */
  startFails?: Error;
  /** `close()` rejects with this (after stopping). */
  closeFails?: Error;
  /** `start()` waits until the test calls `finishStart()`. */
  manualStart?: boolean;
  /** A rolled-back write says `settled` at once, as the engine's does (by default the test settles it). */
  settleOnRollback?: boolean;
}

export const IDLE_REPORT: WatchReport = {
  role: 'writer',
  collections: [],
  pending: 0,
  vectorsPending: 0,
  lastChangeAt: null,
  lastIndexedAt: null,
};

export class FakeWatcher implements IndexWatcher {
  readonly writes: FakeWrite[] = [];
  current: WatchReport;
  started = false;
  closeCalls = 0;
  /** The signal `close()` was given. */
  closeSignal: AbortSignal | undefined;
  readonly #indexed = new Set<(change: IndexedChange) => void>();
  readonly #writeListeners = new Set<(event: 'started' | 'settled') => void>();
  readonly #record: (call: string) => void;
  readonly #options: FakeWatcherOptions;
  #held: (() => void) | undefined;
  #closing: Promise<void> | undefined;
  #resolveClosed: (() => void) | undefined;
  #finishStart: (() => void) | undefined;
  #closedDone = false;

  constructor(options: FakeWatcherOptions = {}) {
    this.#options = options;
    this.#record = options.record ?? (() => {});
    this.current = { ...IDLE_REPORT, ...options.report };
    if (options.clock) {
      const clock = options.clock;
      const handle = clock.setTimeout(() => {}, 2_000_000_000, { unref: true });
      this.#held = () => clock.clearTimeout(handle);
    } else if (options.holdLoop === 'ref') {
      const interval = setInterval(() => {}, 60_000);
      this.#held = () => clearInterval(interval);
    }
  }

  /** Whether a timer or handle of this watcher is still held (it has not been closed). */
  get holding(): boolean {
    return this.#held !== undefined;
  }

  get closed(): boolean {
    return this.#closedDone;
  }

  /** Writes started and not settled (rolled-back ones included until their `settled`). */
  get unsettled(): number {
    return this.writes.filter((w) => !w.settled).length;
  }

  get listeners(): { indexed: number; write: number } {
    return { indexed: this.#indexed.size, write: this.#writeListeners.size };
  }

  async start(): Promise<void> {
    this.#record('watcher.start');
    this.started = true;
    if (this.#options.manualStart) {
      await new Promise<void>((resolve) => {
        this.#finishStart = resolve;
      });
    }
    if (this.#options.startFails) throw this.#options.startFails;
  }

  finishStart(): void {
    this.#finishStart?.();
  }

  report(): WatchReport {
    return structuredClone(this.current);
  }

  onIndexed(listener: (change: IndexedChange) => void): () => void {
    this.#indexed.add(listener);
    return () => this.#indexed.delete(listener);
  }

  onWrite(listener: (event: 'started' | 'settled') => void): () => void {
    this.#writeListeners.add(listener);
    return () => this.#writeListeners.delete(listener);
  }

  /** A batch is committed: every `onIndexed` listener hears it. */
  indexed(change: Partial<IndexedChange> & { collection?: string }): void {
    const full: IndexedChange = { collection: 'notes', added: [], updated: [], removed: [], ...change };
    for (const listener of [...this.#indexed]) listener(full);
  }

  startWrite(): FakeWrite {
    const write: FakeWrite = { settled: false, rolledBack: this.closeSignal?.aborted ?? false };
    this.writes.push(write);
    for (const listener of [...this.#writeListeners]) listener('started');
    return write;
  }

  /** Settles the oldest write not settled yet (committed, or the late `settled` of a rolled-back one). */
  settleWrite(): FakeWrite {
    const write = this.writes.find((w) => !w.settled);
    if (!write) throw new Error('no write of the watcher to settle');
    write.settled = true;
    for (const listener of [...this.#writeListeners]) listener('settled');
    this.#maybeClosed();
    return write;
  }

  close(signal?: AbortSignal): Promise<void> {
    this.closeCalls++;
    if (this.#closing) return this.#closing;
    this.#record('watcher.close');
    this.closeSignal = signal;
    this.#held?.();
    this.#held = undefined;
    this.#finishStart?.();
    // The writes it knew of when asked to close: it waits for those to commit or roll back.
    const waitedFor = this.writes.filter((w) => !w.settled && !w.rolledBack);
    this.#closing = new Promise<void>((resolve) => {
      this.#resolveClosed = resolve;
    }).then(() => {
      this.#closedDone = true;
      this.#record('watcher.closed');
      if (this.#options.closeFails) throw this.#options.closeFails;
    });
    this.#waitedFor = waitedFor;
    const rollBack = (): void => {
      this.#record('watcher.rollback');
      for (const w of this.writes) if (!w.settled) w.rolledBack = true;
      if (this.#options.settleOnRollback) while (this.unsettled > 0) this.settleWrite();
      this.#maybeClosed();
    };
    if (signal?.aborted) rollBack();
    else signal?.addEventListener('abort', rollBack, { once: true });
    this.#maybeClosed();
    return this.#closing;
  }

  #waitedFor: FakeWrite[] = [];

  #maybeClosed(): void {
    if (!this.#resolveClosed) return;
    if (this.#waitedFor.some((w) => !w.settled && !w.rolledBack)) return;
    const resolve = this.#resolveClosed;
    this.#resolveClosed = undefined;
    resolve();
  }
}
