import { QmdError } from '../errors.js';
import type { Failpoints } from '../failpoints.js';
import { embedTexts, type FollowRefusal } from '../indexing/embed.js';
import { IndexWriter } from '../indexing/index-writer.js';
import type { KnownFile } from '../indexing/scan.js';
import {
  type IndexTarget,
  type PathsReport,
  type ReindexOptions,
  reindexPaths,
  type UpdateParts,
} from '../indexing/update.js';
import type { Log } from '../log.js';
import { Collections } from '../store/collections.js';
import { closeDatabase, type OpenedDatabase, openDatabase } from '../store/database.js';
import { IndexGuard } from '../store/guard.js';
import { sqliteCode } from '../store/sqlite.js';
import { Vectors } from '../store/vectors/vectors.js';
import { awaitedReader } from './awaiting.js';
import { composedParts, type IndexParts } from './compose.js';
import type { Reader } from './reader-types.js';

export type { FollowRefusal } from '../indexing/embed.js';
export type { IndexTarget, PathsReport } from '../indexing/update.js';

/** How long a busy index is waited for between two tries to begin a write (no thread blocks). */
const BUSY_RETRY_MS = 25;
/** The longest pause between two tries (backing off while `qmd update` holds the lock). */
const BUSY_RETRY_MAX_MS = 400;

/**
 * The index as a watcher writes it, beside the reader a server serves: its own read-write
 * connection (the served one stays read-only), the served reader's embedding model (one
 * llama.cpp runtime per process, `compose.ts`), and the write steps of `src/indexing/` over
 * them. Every write begins without blocking the thread: the connection's busy timeout is 0, a
 * busy index is tried again after a timer (`beginWrite`), so a `qmd update` holding the lock
 * for a minute never freezes the server's event loop.
 */
export interface WatchedIndex {
  readonly path: string;
  /** The collections now in the index (another process may add or remove one at any time). */
  collections(): IndexTarget[];
  /** What the index has for one file (catch-up and polling compare stat with it). */
  known(collection: string, path: string): KnownFile | undefined;
  /** A page of the collection's indexed paths after `after`, in order (catch-up finds what is gone). */
  indexedPaths(collection: string, after: string, limit: number): string[];
  /**
   * `reindexPaths` on this connection (docs/design.md §9); `holds` is asked under the write lock.
   * `stopWaiting` gives up waiting for a busy index before the write has begun (ABORTED, nothing
   * written); `signal` also rolls back a write in progress.
   */
  reindex(
    target: IndexTarget,
    changed: readonly string[],
    removed: readonly string[],
    options: Omit<ReindexOptions, 'begin'> & { stopWaiting?: AbortSignal },
  ): Promise<PathsReport>;
  /** Runs `work` inside `BEGIN IMMEDIATE` (the writer's place is decided there); never blocks the thread. */
  underWriteLock<T>(work: () => T, signal?: AbortSignal): Promise<T>;
  /** Whether the index has vectors (someone ran `qmd embed`): only then are they followed. */
  hasVectors(): boolean;
  /** Embeds the texts named with the served reader's model (`embedTexts`): how many chunks, or why none. */
  embed(
    hashes: readonly string[],
    options: { signal?: AbortSignal; onText?: (hash: string) => void },
  ): Promise<{ embedded: number } | { refused: FollowRefusal }>;
  /** Checkpoints and closes this connection (idempotent; the served reader is not touched). */
  close(): void;
}

/**
 * Opens the writer's side beside `reader`: undefined while there is no index yet (a server
 * started before the first `qmd collection add`: asked again later) or when `reader` is not one
 * this process composed (a test's fake). Errors: as `openDatabase` (INDEX_LOCKED, …).
 */
export function openWatchedIndex(
  reader: Reader,
  options: { log: Log; failpoints: Failpoints },
): WatchedIndex | undefined {
  const parts = composedParts(reader) ?? partsOfAwaited(reader);
  if (parts === undefined) return undefined;
  const opened = openDatabase(parts.path, { readonly: false, busyTimeoutMs: 0, quickCheck: false, log: options.log });
  try {
    return new SqliteWatchedIndex(parts, opened, options);
  } catch (error) {
    closeDatabase(opened, options.log);
    throw error;
  }
}

function partsOfAwaited(reader: Reader): IndexParts | undefined {
  const inner = awaitedReader(reader);
  return inner === undefined ? undefined : composedParts(inner);
}

class SqliteWatchedIndex implements WatchedIndex {
  readonly path: string;
  private readonly guard: IndexGuard;
  private readonly collectionRows: Collections;
  private readonly vectors: Vectors;
  private readonly writer: IndexWriter;
  private readonly pathsAfter;
  private readonly updateParts: UpdateParts;

  constructor(
    private readonly served: IndexParts,
    private readonly opened: OpenedDatabase,
    options: { log: Log; failpoints: Failpoints },
  ) {
    const { db } = opened;
    this.path = served.path;
    this.guard = new IndexGuard(served.path, 0);
    this.collectionRows = new Collections(db);
    this.vectors = new Vectors(db, { extension: true, log: options.log });
    this.writer = new IndexWriter(db, { vectorsFollow: true });
    this.pathsAfter = db.column<[string, string, number], string>(
      'SELECT path FROM documents WHERE collection = ? AND path > ? ORDER BY path LIMIT ?',
    );
    this.updateParts = {
      db,
      guard: this.guard,
      writer: () => this.writer,
      vectors: this.vectors,
      failpoints: options.failpoints,
      log: options.log,
    };
  }

  collections(): IndexTarget[] {
    return this.guard.run(() => this.collectionRows.all()).map((row) => ({ ...row, ignore: row.ignore ?? [] }));
  }

  known(collection: string, path: string): KnownFile | undefined {
    return this.guard.run(() => this.writer.known(collection, path));
  }

  indexedPaths(collection: string, after: string, limit: number): string[] {
    return this.guard.run(() => this.pathsAfter.all(collection, after, limit));
  }

  reindex(
    target: IndexTarget,
    changed: readonly string[],
    removed: readonly string[],
    options: Omit<ReindexOptions, 'begin'> & { stopWaiting?: AbortSignal },
  ): Promise<PathsReport> {
    const { stopWaiting, ...rest } = options;
    const waiting = [options.signal, stopWaiting].filter((s): s is AbortSignal => s !== undefined);
    return reindexPaths(this.updateParts, target, changed, removed, {
      ...rest,
      begin: () => this.beginWrite(waiting.length > 1 ? AbortSignal.any(waiting) : waiting[0]),
    });
  }

  async underWriteLock<T>(work: () => T, signal?: AbortSignal): Promise<T> {
    await this.beginWrite(signal);
    const { db } = this.opened;
    try {
      const result = this.guard.run(work);
      db.exec('COMMIT');
      return result;
    } catch (error) {
      if (db.isOpen && db.inTransaction) db.exec('ROLLBACK');
      throw error;
    }
  }

  hasVectors(): boolean {
    return this.guard.run(() => this.vectors.state().fingerprint !== null);
  }

  embed(
    hashes: readonly string[],
    options: { signal?: AbortSignal; onText?: (hash: string) => void },
  ): Promise<{ embedded: number } | { refused: FollowRefusal }> {
    return embedTexts(this.opened.db, this.vectors, this.served.model, hashes, {
      ...options,
      write: (work) => this.underWriteLock(work, options.signal),
    });
  }

  close(): void {
    this.guard.close();
    closeDatabase(this.opened, this.served.log);
  }

  /**
   * `BEGIN IMMEDIATE`, tried again after a timer while another process writes (busy timeout 0:
   * SQLite's own wait would hold this thread for up to the whole timeout). Rejects with ABORTED
   * when `signal` fires, CLOSED once closed.
   */
  private async beginWrite(signal: AbortSignal | undefined): Promise<void> {
    let pause = BUSY_RETRY_MS;
    for (;;) {
      if (signal?.aborted) throw new QmdError('ABORTED', 'The write was cancelled; the index is unchanged');
      try {
        this.guard.run(() => this.opened.db.exec('BEGIN IMMEDIATE'));
        return;
      } catch (error) {
        const code = error instanceof QmdError ? error.code : sqliteCode(error);
        if (code !== 'INDEX_LOCKED' && code !== 'SQLITE_BUSY') throw error;
      }
      await unrefDelay(pause, signal);
      pause = Math.min(BUSY_RETRY_MAX_MS, pause * 2);
    }
  }
}

/** A pause that never keeps the process alive by itself (the watcher holds no handle), cut short by `signal`. */
function unrefDelay(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    timer.unref();
    signal?.addEventListener('abort', done, { once: true });
  });
}
