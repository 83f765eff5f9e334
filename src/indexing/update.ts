import type { Failpoints } from '../failpoints.js';
import type { Log } from '../log.js';
import type { IndexGuard } from '../store/guard.js';
import type { Sqlite } from '../store/sqlite.js';
import type { Vectors } from '../store/vectors/vectors.js';
import { addIgnored, noneIgnored } from './ignore.js';
import type { IndexWriter, WriteCounts } from './index-writer.js';
import { type CollectionScan, scanCollection } from './scan.js';
import type { IndexOptions, IndexReport, ProgressFn } from './types.js';

export const defaultMask = '**/*.md';
const updateFailpoint = 'store.update.write';

/** A collection as indexing reads it: where, which files, which to leave out. */
export interface IndexTarget {
  name: string;
  root: string;
  mask: string;
  ignore: string[];
}

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

/**
 * `addCollection`'s indexing: one collection scanned and written, `register` adding its row
 * inside the same write transaction (under the write lock, where a name taken meanwhile by
 * another process is seen). Stopped before a file was read, nothing is kept: the collection is
 * not added.
 */
export async function indexNewCollection(
  parts: UpdateParts,
  target: IndexTarget,
  options: IndexOptions,
  register: (now: string) => void,
): Promise<IndexReport> {
  const started = performance.now();
  const run = parts.guard.run(() => parts.writer().newRun());
  const scan = await scanTarget(parts, run, target, options);
  if (scan.stopped && scan.found === 0) {
    parts.writer().unstage(run);
    return report(started, [scan], { added: 0, updated: 0, removed: 0, unchanged: 0 }, []);
  }
  return writeScans(parts, run, started, [scan], options.onProgress, register);
}

/**
 * `update`: every collection re-scanned incrementally (mtime + hash), then written in one
 * transaction; `stop` ends the scanning after the collection being read, and the others are
 * reported untouched.
 */
export async function updateCollections(
  parts: UpdateParts,
  targets: readonly IndexTarget[],
  options: IndexOptions,
): Promise<IndexReport> {
  const started = performance.now();
  const run = parts.guard.run(() => parts.writer().newRun());
  const scans: CollectionScan[] = [];
  for (const target of targets) {
    if (options.stop?.aborted) break;
    scans.push(await scanTarget(parts, run, target, options));
  }
  const untouched = targets.slice(scans.length).map((t) => t.name);
  return writeScans(parts, run, started, scans, options.onProgress, () => {}, untouched);
}

/**
 * The read phase of one collection: its files are staged batch by batch as they are read
 * (`IndexWriter.stage`), so memory holds one batch, not the corpus (docs/design.md §8.5).
 * No lock on the index is held while files are read.
 */
async function scanTarget(
  parts: UpdateParts,
  run: bigint,
  target: IndexTarget,
  options: IndexOptions,
): Promise<CollectionScan> {
  const { guard, writer } = parts;
  try {
    return await scanCollection({
      collection: target.name,
      root: target.root,
      mask: target.mask,
      ignore: target.ignore,
      known: (path) => guard.run(() => writer().known(target.name, path)),
      onBatch: (files, seen) => guard.run(() => writer().stage(run, target.name, files, seen)),
      onProgress: options.onProgress,
      signal: options.signal,
      stop: options.stop,
    });
  } catch (error) {
    writer().unstage(run);
    throw error;
  }
}

/**
 * The write phase: one `BEGIN IMMEDIATE` transaction for every collection scanned, so an
 * update is all or nothing — a crash or SIGKILL before COMMIT leaves the previous index
 * (WAL frames of an uncommitted transaction are ignored on the next open). The staged files
 * are streamed in from the TEMP table; SQLite spills a large transaction's pages to the WAL,
 * so its memory is the page cache, not the corpus. It is a manual transaction rather than
 * `db.transaction()` so that it can yield inside: to the failpoint, and between pages of
 * staged files (`IndexWriter.apply`), where progress is drawn and a second Ctrl-C can exit
 * (leaving the transaction uncommitted: the index as it was).
 */
async function writeScans(
  parts: UpdateParts,
  run: bigint,
  started: number,
  scans: CollectionScan[],
  onProgress: ProgressFn | undefined,
  before: (now: string) => void,
  untouched: string[] = [],
): Promise<IndexReport> {
  const { db, guard, writer, vectors, failpoints, log } = parts;
  const counts: WriteCounts = { added: 0, updated: 0, removed: 0, unchanged: 0 };
  try {
    guard.run(() => db.exec('BEGIN IMMEDIATE'));
    const now = new Date().toISOString();
    guard.run(() => before(now));
    const progress = writeProgress(parts, run, scans, onProgress);
    let applied = 0;
    for (const scan of scans) {
      const base = applied;
      const each = progress && ((n: number) => progress(base + n));
      if (!scan.skipped) applied += await guard.runAsync(() => writer().apply(run, scan.collection, now, counts, each));
      guard.run(() => writer().finish(run, scan, now, counts));
    }
    guard.run(() => {
      if (counts.updated + counts.removed > 0) writer().collectOrphanContent();
      // Documents added, changed or gone changed where vectors are found (triggers on
      // `vector_rows`): the codes follow in the same transaction (docs/design.md §8.3).
      vectors.syncCodes();
    });
    const pending = failpoints.hit(updateFailpoint);
    if (pending !== undefined) {
      log.line(`failpoint ${updateFailpoint}: inside the write transaction, before COMMIT`);
      await pending;
    }
    guard.run(() => db.exec('COMMIT'));
  } catch (error) {
    if (db.isOpen && db.inTransaction) db.exec('ROLLBACK');
    throw error;
  } finally {
    writer().unstage(run);
  }
  return report(started, scans, counts, untouched);
}

/** The write phase's progress: files applied of those staged, when someone is listening. */
function writeProgress(
  parts: UpdateParts,
  run: bigint,
  scans: CollectionScan[],
  onProgress: ProgressFn | undefined,
): ((applied: number) => void) | undefined {
  if (onProgress === undefined) return undefined;
  const total = parts.guard.run(() => parts.writer().stagedCount(run));
  const collection = scans.map((scan) => scan.collection).join(', ');
  onProgress({ stage: 'writing', collection, done: 0, total });
  return (applied) => onProgress({ stage: 'writing', collection, done: applied, total });
}

function report(started: number, scans: CollectionScan[], counts: WriteCounts, untouched: string[]): IndexReport {
  const ignored = noneIgnored();
  for (const scan of scans) addIgnored(ignored, scan.ignored, `${scan.collection}/`);
  const stopped = scans.find((scan) => scan.stopped);
  return {
    collections: scans.length,
    scanned: scans.reduce((sum, scan) => sum + scan.listed, 0),
    ...counts,
    errors: scans.flatMap((scan) => scan.errors),
    ignored,
    ...((stopped !== undefined || untouched.length > 0) && {
      stopped: {
        complete: scans.filter((scan) => !scan.stopped).map((scan) => scan.collection),
        ...(stopped !== undefined &&
          stopped.found > 0 && {
            partial: { collection: stopped.collection, read: stopped.found, listed: stopped.listed },
          }),
        untouched: [...(stopped !== undefined && stopped.found === 0 ? [stopped.collection] : []), ...untouched],
      },
    }),
    ms: Math.round(performance.now() - started),
  };
}
