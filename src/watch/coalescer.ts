import type { WatchClock } from './clock.js';

export interface CoalesceOptions {
  /** A collection's changes are taken this long after the last one heard (a burst settles). */
  debounceMs: number;
  /** …but never later than this after the first one, however long the burst goes on. */
  maxWaitMs: number;
}

interface Pending {
  paths: Set<string>;
  rescan: boolean;
  firstAt: number;
  timer: unknown;
}

/**
 * Bursts of file events become one change set per collection: the paths heard (each once,
 * however many events named it) and whether the whole folder must be read again. A collection
 * is due `debounceMs` after its last event, or `maxWaitMs` after its first, whichever comes
 * first; then `onDue` is told and the owner `take`s the set. Paths heard after a `take` start the
 * next set: a round never grows while it is written (docs/design.md §9.2).
 */
export class Coalescer {
  private readonly pending = new Map<string, Pending>();

  constructor(
    private readonly clock: WatchClock,
    private readonly options: CoalesceOptions,
    private readonly onDue: (collection: string) => void,
  ) {}

  add(collection: string, path: string): void {
    this.entry(collection).paths.add(path);
    this.schedule(collection);
  }

  rescan(collection: string): void {
    this.entry(collection).rescan = true;
    this.schedule(collection);
  }

  /** The collection's change set, emptied. */
  take(collection: string): { paths: string[]; rescan: boolean } {
    const entry = this.pending.get(collection);
    if (entry === undefined) return { paths: [], rescan: false };
    this.clock.clearTimeout(entry.timer);
    this.pending.delete(collection);
    return { paths: [...entry.paths].sort(), rescan: entry.rescan };
  }

  /** Paths heard and not yet taken, over every collection. */
  get size(): number {
    let n = 0;
    for (const entry of this.pending.values()) n += entry.paths.size;
    return n;
  }

  /** Forgets a collection's set (it is no longer followed). */
  drop(collection: string): void {
    const entry = this.pending.get(collection);
    if (entry !== undefined) this.clock.clearTimeout(entry.timer);
    this.pending.delete(collection);
  }

  close(): void {
    for (const collection of [...this.pending.keys()]) this.drop(collection);
  }

  private entry(collection: string): Pending {
    let entry = this.pending.get(collection);
    if (entry === undefined) {
      entry = { paths: new Set(), rescan: false, firstAt: this.clock.now(), timer: undefined };
      this.pending.set(collection, entry);
    }
    return entry;
  }

  private schedule(collection: string): void {
    const entry = this.pending.get(collection) as Pending;
    this.clock.clearTimeout(entry.timer);
    const untilMax = entry.firstAt + this.options.maxWaitMs - this.clock.now();
    const delay = Math.max(0, Math.min(this.options.debounceMs, untilMax));
    entry.timer = this.clock.setTimeout(() => this.onDue(collection), delay, { unref: true });
  }
}
