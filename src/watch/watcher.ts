import type { PathsReport, WatchedIndex } from '../core/watch-writer.js';
import { errorMessage } from '../errors.js';
import type { Log } from '../log.js';
import { Coalescer } from './coalescer.js';
import { FollowedCollection, type FollowSettings } from './collections.js';
import { type PlaceFacts, placeFile, placeIsFree, WriterPlace } from './place.js';
import { sweepCollection } from './sweep.js';
import type { IndexedChange, IndexWatcher, WatchReport } from './types.js';
import { VectorFollower } from './vectors.js';

export interface WatcherSettings extends FollowSettings {
  log: Log;
  /** The writer's side of the index; undefined while there is no index yet (asked again each tick). */
  open: () => WatchedIndex | undefined;
  embed: boolean;
  facts: PlaceFacts;
  /** What holds the place, for `qmd status` of another process. */
  by: string;
  debounceMs: number;
  maxWaitMs: number;
  /** Paths per write transaction. */
  batchPaths: number;
  /** The most batches written at one instant of `clock` before the watcher stops as looping. */
  maxBatchesPerInstant: number;
  /** Between two looks at the writer's place and the collections (heartbeat, take-over). */
  tickMs: number;
  staleMs: number;
  onRole?: (role: 'writer' | 'reader', writerPid?: number) => void;
}

/**
 * The watcher (docs/design.md §9): takes the writer's place or reads; as the writer, follows
 * every collection (`FollowedCollection`), coalesces what it hears (`Coalescer`), and writes
 * it in small batches through `reindexPaths`, one at a time, telling `onWrite` and `onIndexed`;
 * vectors follow in the background (`VectorFollower`). A tick renews the heartbeat, follows
 * collections added or removed meanwhile, and lets a reader take a place left free.
 */
export class Watcher implements IndexWatcher {
  private index: WatchedIndex | undefined;
  private place: WriterPlace | undefined;
  private role: 'writer' | 'reader' = 'reader';
  private writerPid: number | undefined;
  private readonly followers = new Map<string, FollowedCollection>();
  private readonly coalescer: Coalescer;
  private readonly vectors: VectorFollower;
  private readonly due = new Set<string>();
  private pumping: Promise<void> | undefined;
  private inRound = 0;
  private starting: Promise<void> | undefined;
  private closing: Promise<void> | undefined;
  private tickTimer: unknown;
  /** Fired by `close(signal)`'s signal: the write in progress rolls back. */
  private readonly writeAbort = new AbortController();
  /** Fired when closing starts: what has not begun (a wait for a busy index, a sweep, taking the place) stops. */
  private readonly closeAbort = new AbortController();
  private lastChangeAt: number | null = null;
  private lastIndexedAt: number | null = null;
  private instantAt = Number.NaN;
  private instantBatches = 0;
  private failure: string | undefined;
  private readonly indexedListeners = new Set<(change: IndexedChange) => void>();
  private readonly writeListeners = new Set<(event: 'started' | 'settled') => void>();

  constructor(private readonly settings: WatcherSettings) {
    this.coalescer = new Coalescer(settings.clock, settings, (collection) => {
      this.due.add(collection);
      this.kick();
    });
    this.vectors = new VectorFollower(() => this.index, settings.log, settings.clock);
  }

  start(): Promise<void> {
    this.starting ??= this.begin();
    return this.starting;
  }

  report(): WatchReport {
    return {
      role: this.role,
      ...(this.writerPid !== undefined && { writerPid: this.writerPid }),
      collections: [...this.followers.values()].map((f) => f.report()),
      pending: this.coalescer.size + this.inRound,
      vectorsPending: this.vectors.pending,
      lastChangeAt: this.lastChangeAt,
      lastIndexedAt: this.lastIndexedAt,
      ...(this.failure !== undefined && { error: this.failure }),
      ...(this.vectors.stopped !== undefined && { vectors: `not following: ${this.vectors.stopped}` }),
    };
  }

  onIndexed(listener: (change: IndexedChange) => void): () => void {
    this.indexedListeners.add(listener);
    return () => this.indexedListeners.delete(listener);
  }

  onWrite(listener: (event: 'started' | 'settled') => void): () => void {
    this.writeListeners.add(listener);
    return () => this.writeListeners.delete(listener);
  }

  close(signal?: AbortSignal): Promise<void> {
    if (signal !== undefined) {
      if (signal.aborted) this.writeAbort.abort();
      else signal.addEventListener('abort', () => this.writeAbort.abort(), { once: true });
    }
    this.closing ??= this.shutdown();
    return this.closing;
  }

  /**
   * Never rejects: an index that cannot be opened for writing now (locked while migrating, a
   * passing error) is said once and tried again at the next tick, as a folder that cannot be
   * watched is polled: the server serves on either way.
   */
  private async begin(): Promise<void> {
    try {
      await this.lookAtPlace();
    } catch (error) {
      this.settings.log.warn(`watching: ${errorMessage(error)} (tried again shortly)`);
    }
    this.scheduleTick();
  }

  /** Takes the place if free (becoming the writer), or reads (telling who writes). */
  private async lookAtPlace(): Promise<void> {
    if (this.closing !== undefined) return;
    if (this.index === undefined) {
      this.index = this.settings.open();
      if (this.index === undefined) return;
      this.place = new WriterPlace(
        placeFile(this.index.path),
        this.settings.by,
        this.settings.facts,
        this.settings.staleMs,
      );
    }
    const index = this.index;
    const place = this.place as WriterPlace;
    if (this.role === 'writer') {
      if (place.heartbeat()) await this.followCollections();
      else this.stepDown();
      return;
    }
    const holder = place.holder();
    const free = placeIsFree(holder, this.settings.facts, this.settings.staleMs);
    const took = free && (await index.underWriteLock(() => place.take(), this.closeAbort.signal).catch(() => false));
    if (this.closing !== undefined) return;
    if (took) {
      this.role = 'writer';
      this.writerPid = this.settings.facts.pid;
      this.settings.onRole?.('writer', this.writerPid);
      await this.followCollections();
    } else {
      const pid = place.holder()?.pid;
      if (pid !== this.writerPid) this.settings.onRole?.('reader', pid);
      this.writerPid = pid;
    }
  }

  /** The writer follows exactly the collections the index has now. */
  private async followCollections(): Promise<void> {
    const index = this.index as WatchedIndex;
    const targets = index.collections();
    for (const [name, follower] of this.followers) {
      const target = targets.find((t) => t.name === name);
      if (target === undefined || !follower.follows(target)) {
        follower.close();
        this.followers.delete(name);
        this.coalescer.drop(name);
      }
    }
    for (const target of targets) {
      if (this.followers.has(target.name) || this.closing !== undefined || this.role !== 'writer') continue;
      const follower = new FollowedCollection(
        target,
        this.settings,
        (relative) => {
          this.lastChangeAt = this.settings.facts.now();
          this.coalescer.add(target.name, relative);
        },
        () => this.coalescer.rescan(target.name),
      );
      this.followers.set(target.name, follower);
      await follower.start();
    }
  }

  private stepDown(): void {
    for (const follower of this.followers.values()) follower.close();
    this.followers.clear();
    this.coalescer.close();
    this.role = 'reader';
    const pid = this.place?.holder()?.pid;
    this.writerPid = pid;
    this.settings.log.line(
      `Watching: another process${pid === undefined ? '' : ` (pid ${pid})`} now keeps the index fresh; this one reads`,
    );
    this.settings.onRole?.('reader', pid);
  }

  private scheduleTick(): void {
    if (this.closing !== undefined) return;
    this.tickTimer = this.settings.clock.setTimeout(
      () => {
        void this.lookAtPlace()
          .catch((error: unknown) => this.settings.log.warn(`watching: ${errorMessage(error)}`))
          .finally(() => this.scheduleTick());
      },
      this.settings.tickMs,
      { unref: true },
    );
  }

  private kick(): void {
    if (this.pumping !== undefined || this.due.size === 0 || this.closing !== undefined) return;
    this.pumping = this.pump().finally(() => {
      this.pumping = undefined;
      this.kick();
    });
  }

  /**
   * Writes what is due, a collection's change set at a time, in batches. A set never grows while
   * it is written (what is heard meanwhile waits for its own debounce), and no more than
   * `maxBatchesPerInstant` batches go at one instant of the clock: a watcher that re-triggers
   * itself stops, saying so, rather than spinning (docs/design.md §9.2).
   */
  private async pump(): Promise<void> {
    while (this.due.size > 0 && this.closing === undefined && this.failure === undefined) {
      const name = this.due.values().next().value as string;
      this.due.delete(name);
      const follower = this.followers.get(name);
      if (follower === undefined) continue;
      const set = this.coalescer.take(name);
      let changed = set.paths;
      let removed: string[] = [];
      this.inRound = changed.length;
      if (set.rescan) {
        const passStarted = performance.now();
        const sweep = await sweepCollection(this.index as WatchedIndex, follower.target, {
          signal: this.closeAbort.signal,
          exclude: (relative) => !follower.accepts(relative),
        });
        follower.passed(performance.now() - passStarted);
        if (sweep.failed === undefined) {
          changed = [...new Set([...changed, ...sweep.changed])].sort();
          removed = sweep.removed;
        }
      }
      this.inRound = changed.length + removed.length;
      const size = this.settings.batchPaths;
      for (let i = 0; i < Math.max(changed.length, removed.length); i += size) {
        if (this.closing !== undefined || this.followers.get(name) !== follower || !this.withinInstant()) break;
        const batchChanged = changed.slice(i, i + size);
        const batchRemoved = removed.slice(i, i + size);
        await this.write(follower, batchChanged, batchRemoved);
      }
      this.inRound = 0;
    }
  }

  private withinInstant(): boolean {
    const now = this.settings.clock.now();
    if (now !== this.instantAt) {
      this.instantAt = now;
      this.instantBatches = 0;
    }
    if (++this.instantBatches <= this.settings.maxBatchesPerInstant) return true;
    this.failure = `${this.settings.maxBatchesPerInstant} batches were written at one instant: the watcher stopped, as it would otherwise loop (does something it triggers write into a watched folder?)`;
    this.settings.log.warn(`watching: ${this.failure}`);
    for (const follower of this.followers.values()) follower.close();
    return false;
  }

  /** One batch, one transaction; the host counts it as work in flight. */
  private async write(follower: FollowedCollection, changed: string[], removed: string[]): Promise<void> {
    const index = this.index as WatchedIndex;
    const place = this.place as WriterPlace;
    this.emitWrite('started');
    let report: PathsReport;
    try {
      report = await index.reindex(follower.target, changed, removed, {
        signal: this.writeAbort.signal,
        stopWaiting: this.closeAbort.signal,
        holds: () => place.holds(),
      });
    } catch (error) {
      if (this.closing !== undefined) return;
      this.settings.log.warn(`watching: a write failed, tried again shortly: ${errorMessage(error)}`);
      for (const path of [...changed, ...removed]) this.coalescer.add(follower.target.name, path);
      return;
    } finally {
      // Settled: no longer pending, before anyone is told (a listener reads the report).
      this.inRound = Math.max(0, this.inRound - changed.length - removed.length);
      this.emitWrite('settled');
    }
    if (report.lost === true) {
      this.stepDown();
      return;
    }
    this.lastIndexedAt = this.settings.facts.now();
    const { name } = follower.target;
    if (report.added.length + report.updated.length + report.removed.length > 0) {
      const change: IndexedChange = {
        collection: name,
        added: report.added,
        updated: report.updated,
        removed: report.removed,
      };
      for (const listener of this.indexedListeners) {
        try {
          listener(change);
        } catch {
          // A listener's failure is its own.
        }
      }
    }
    if (this.settings.embed && report.texts.length > 0) {
      this.vectors.add(report.texts.map((t) => ({ hash: t.hash, path: `${name}/${t.path}` })));
    }
  }

  private emitWrite(event: 'started' | 'settled'): void {
    for (const listener of this.writeListeners) {
      try {
        listener(event);
      } catch {
        // As above.
      }
    }
  }

  /**
   * Stops the tick, the watches and polling, and the vectors at once; the batch being written
   * completes (or, once `signal` fires, rolls back); then the place is given up and the
   * connection closed.
   */
  private async shutdown(): Promise<void> {
    this.closeAbort.abort();
    this.settings.clock.clearTimeout(this.tickTimer);
    for (const follower of this.followers.values()) follower.close();
    this.coalescer.close();
    this.due.clear();
    await this.vectors.close();
    await this.starting?.catch(() => {});
    await this.pumping;
    for (const follower of this.followers.values()) follower.close();
    this.followers.clear();
    if (this.role === 'writer') this.place?.release();
    this.index?.close();
  }
}
