import type { Failpoints } from '../failpoints.js';
import type { Log } from '../log.js';
import type { IndexGuard } from '../store/guard.js';
import type { Sqlite } from '../store/sqlite.js';
import type { Vectors } from '../store/vectors/vectors.js';
import { type AppliedPaths, type IndexWriter, UNIT_FILES, type WriteCounts } from './index-writer.js';

/** Hit inside every unit's transaction, before its COMMIT (`test/indexing/kill.test.ts`). */
export const UNIT_FAILPOINT = 'store.update.write';

/**
 * What the steps of an update are given, finished, by the writer that runs them: the
 * connection and its guard, the staging writer (made on first use: its TEMP tables are this
 * connection's), the vectors whose codes follow every write, the failpoints and the log.
 */
export interface UpdateParts {
  db: Sqlite;
  guard: IndexGuard;
  writer: () => IndexWriter;
  vectors: Vectors;
  failpoints: Failpoints;
  log: Log;
}

/** How a unit begins and ends, where its writer is not a command's (a watcher's, §9). */
export interface UnitOptions {
  /**
   * Begins the transaction (default: `BEGIN IMMEDIATE` at once). A watcher's waits for a busy
   * index on a timer, never blocking the thread, and rejects when it gives up.
   */
  begin?: () => Promise<void>;
  /** The failpoint hit before COMMIT (default `UNIT_FAILPOINT`). */
  failpoint?: string;
  /** Once it fires, the unit in hand rolls back (its failpoint is cut short, COMMIT never runs). */
  signal?: AbortSignal;
}

/**
 * One unit of indexing's write phase (docs/design.md §8.5, "Units"): one `BEGIN IMMEDIATE`
 * transaction in which `work` writes through the staging writer, then the texts it stopped
 * using are collected and the vectors' codes follow (`syncCodes`), committed. So the index is
 * whole after every unit, whatever comes next (Ctrl-C, SIGKILL, a full disk): the collection's
 * row, its documents, their FTS rows, vector rows and codes agree. A unit is synchronous but
 * for its failpoint: Ctrl-C is heard between units, never inside one (a statement is never cut,
 * §5), and a unit writes at most `UNIT_FILES` files, so the write lock is held briefly and the
 * first Ctrl-C ends a command within one unit. Returns what `work` returned.
 */
export async function commitUnit<T>(
  parts: UpdateParts,
  work: (now: string) => T,
  options: UnitOptions = {},
): Promise<T> {
  const { db, guard, writer, vectors, failpoints, log } = parts;
  const { begin, signal } = options;
  const failpoint = options.failpoint ?? UNIT_FAILPOINT;
  try {
    if (begin !== undefined) await begin();
    const result = guard.run(() => {
      if (begin === undefined) db.exec('BEGIN IMMEDIATE');
      const value = work(new Date().toISOString());
      writer().collectReplaced();
      vectors.syncCodes();
      return value;
    });
    const pending = failpoints.hit(failpoint, signal);
    if (pending !== undefined) {
      log.line(`failpoint ${failpoint}: inside the write transaction, before COMMIT`);
      await pending;
    }
    signal?.throwIfAborted();
    guard.run(() => db.exec('COMMIT'));
    return result;
  } catch (error) {
    if (db.isOpen && db.inTransaction) db.exec('ROLLBACK');
    if (db.isOpen) writer().forgetReplaced();
    throw error;
  }
}

export interface StagedOptions {
  /** Read between units: once it has fired, no further unit begins (the first always runs). */
  stop?: AbortSignal | undefined;
  /** Runs first in the first unit (`collection add`'s row, which its documents need). */
  first?: (now: string) => void;
  /** Runs first in every unit, under the write lock: a check that throws to write nothing. */
  each?: () => void;
  /** Told each path written (a watcher's batch: what it tells its listeners). */
  record?: AppliedPaths;
  /** How each unit begins and ends (a watcher's). */
  unit?: UnitOptions;
}

/**
 * Everything `run` has staged for `collection` (`IndexWriter.stage`), written unit by unit,
 * with a turn of the event loop between units (progress, Ctrl-C). What a full `update` does
 * with each batch it reads, and what a batch of changed paths needs (stage them, then this).
 * Returns how many files were written, and whether `stop` ended it with some still staged.
 */
export async function commitStaged(
  parts: UpdateParts,
  run: bigint,
  collection: string,
  counts: WriteCounts,
  options: StagedOptions = {},
): Promise<{ written: number; stopped: boolean }> {
  let written = 0;
  for (let unit = 0; ; unit++) {
    if (unit > 0) {
      await turn();
      if (options.stop?.aborted) return { written, stopped: true };
    }
    const { applied, more } = await commitUnit(
      parts,
      (now) => {
        options.each?.();
        if (unit === 0) options.first?.(now);
        return parts.writer().applyStaged(run, collection, now, counts, options.record);
      },
      options.unit,
    );
    written += applied;
    if (!more) return { written, stopped: false };
  }
}

/**
 * A collection read in full: the rows of its files no batch of `run` saw are deleted, unit by
 * unit, and the last unit stamps the collection (`updated_at`). False when `stop` ended it
 * first: the rest are deleted by the next update, and the collection is not stamped.
 */
export async function removeGone(
  parts: UpdateParts,
  run: bigint,
  collection: string,
  counts: WriteCounts,
  options: StagedOptions = {},
): Promise<boolean> {
  for (let unit = 0; ; unit++) {
    if (unit > 0) {
      await turn();
      if (options.stop?.aborted) return false;
    }
    const done = await commitUnit(parts, (now) => {
      if (unit === 0) options.first?.(now);
      const last = parts.writer().removeGone(run, collection, counts) < UNIT_FILES;
      if (last) parts.writer().stamp(collection, now);
      return last;
    });
    if (done) return true;
  }
}

/**
 * After the last unit of a command (stopped or not): the texts of the documents it removed
 * that no document uses any more, deleted, in units of `UNIT_TEXTS` lookups. Not in the units
 * that removed them: a note moved from one collection to another is removed from the first
 * before the second is read, and keeps its text, chunks and vectors this way.
 */
export async function collectRemovedTexts(parts: UpdateParts): Promise<void> {
  for (let left = Number.POSITIVE_INFINITY; left > 0; ) {
    left = await commitUnit(parts, () => parts.writer().collectRemoved(UNIT_TEXTS));
    if (left > 0) await turn();
  }
}

/** Texts one unit of `collectRemovedTexts` looks up (one indexed lookup each, with its cascade). */
const UNIT_TEXTS = 4 * UNIT_FILES;

/** One turn of the event loop: a SIGINT that arrived during a unit is heard here (§5). */
function turn(): Promise<void> {
  return new Promise<void>((resolve) => setImmediate(resolve));
}
