import * as fs from 'node:fs';
import * as path from 'node:path';
import { QmdError } from '../errors.js';
import type { Failpoints } from '../failpoints.js';
import type { Log } from '../log.js';
import type { IndexGuard } from '../store/guard.js';
import type { Sqlite } from '../store/sqlite.js';
import type { Vectors } from '../store/vectors/vectors.js';
import { addIgnored, folderPassedBy, noneIgnored, pathFilter } from './ignore.js';
import type { AppliedPaths, IndexWriter, WriteCounts } from './index-writer.js';
import { type CollectionScan, OutsideRoot, type ReadFile, readOne, scanCollection } from './scan.js';
import type { IndexOptions, IndexReport, ProgressFn } from './types.js';

export const defaultMask = '**/*.md';
const updateFailpoint = 'store.update.write';
/** Inside a watcher's write transaction, before COMMIT: where tests SIGKILL or abort a write. */
export const reindexFailpoint = 'watch.write';

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

/** What `reindexPaths` committed, path by path (relative to the collection's folder). */
export interface PathsReport {
  added: string[];
  updated: string[];
  removed: string[];
  /** Each path added or updated with the text (content hash) it holds now: what a watcher re-embeds. */
  texts: Array<{ path: string; hash: string }>;
  unchanged: number;
  errors: Array<{ file: string; error: string }>;
  /** `holds()` said no inside the transaction: nothing was written. */
  lost?: boolean;
  ms: number;
}

export interface ReindexOptions {
  /** Aborts: the transaction in progress is rolled back and this rejects with ABORTED. */
  signal?: AbortSignal;
  /**
   * Asked under the write lock, before anything is written: false (another process took the
   * writer's place) and nothing is, `lost` reported.
   */
  holds?: () => boolean;
  /** Begins the write transaction (default `BEGIN IMMEDIATE` at once): a watcher's waits without blocking. */
  begin?: () => Promise<void>;
}

/**
 * A watcher's write: the files at `changed` re-read (a folder: every file under it, and what
 * the index has under it that is gone), the documents at `removed` deleted (a folder: every
 * document under it), all in one `BEGIN IMMEDIATE` transaction — the same staging and apply
 * as `update` (`IndexWriter`), the same mask and ignore rules as a scan (`pathFilter`), but no
 * listing of the collection and no sweep of its tables: every statement is an indexed lookup,
 * so a write of a few paths costs the same at 100 notes as at 100k (docs/design.md §9). A path
 * that is gone when read counts as removed; one the rules leave out is not read.
 */
export async function reindexPaths(
  parts: UpdateParts,
  target: IndexTarget,
  changed: readonly string[],
  removed: readonly string[],
  options: ReindexOptions = {},
): Promise<PathsReport> {
  const started = performance.now();
  const { db, guard, writer, vectors, failpoints, log } = parts;
  const { signal } = options;
  const accepts = pathFilter(target.mask, target.ignore);
  const passedBy = folderPassedBy(target.mask);
  const gone = new Set(removed);
  const errors: PathsReport['errors'] = [];
  const run = guard.run(() => writer().newRun());
  const files: ReadFile[] = [];
  const read = (relative: string): void => {
    if (!accepts(relative)) return;
    try {
      const known = guard.run(() => writer().known(target.name, relative));
      const file = readOne(target.root, relative, known);
      if (file !== undefined) files.push(file);
    } catch (error) {
      if (error instanceof OutsideRoot) {
        errors.push({ file: path.join(target.root, relative), error: error.message });
        gone.add(relative);
      } else if (errno(error) === 'ENOENT' || errno(error) === 'ENOTDIR') gone.add(relative);
      else errors.push({ file: path.join(target.root, relative), error: errorText(error) });
    }
  };
  for (const relative of changed) {
    throwIfAborted(signal);
    let stat: fs.Stats;
    try {
      stat = fs.lstatSync(path.join(target.root, relative));
    } catch {
      gone.add(relative);
      continue;
    }
    if (stat.isDirectory()) {
      if (passedBy(relative)) continue;
      const found = new Set<string>();
      for (const file of walkFolder(target.root, relative, passedBy)) {
        if (!accepts(file)) continue;
        found.add(file);
        read(file);
      }
      for (const indexed of guard.run(() => writer().pathsUnder(target.name, relative))) {
        if (!found.has(indexed)) gone.add(indexed);
      }
    } else if (stat.isFile()) read(relative);
    // Symlinks are never followed (scan.ts): one where a note was is the note gone.
    else gone.add(relative);
  }
  const counts: WriteCounts = { added: 0, updated: 0, removed: 0, unchanged: 0 };
  const record: AppliedPaths = { added: [], updated: [], removed: [], replaced: new Set(), texts: [] };
  try {
    if (files.length > 0) guard.run(() => writer().stage(run, target.name, files, []));
    if (options.begin !== undefined) await options.begin();
    else guard.run(() => db.exec('BEGIN IMMEDIATE'));
    if (options.holds !== undefined && !guard.run(options.holds)) {
      db.exec('ROLLBACK');
      return { ...emptyPaths(errors), lost: true, ms: Math.round(performance.now() - started) };
    }
    const now = new Date().toISOString();
    if (files.length > 0) {
      await guard.runAsync(() => writer().apply(run, target.name, now, counts, () => throwIfAborted(signal), record));
    }
    guard.run(() => {
      writer().removePaths(target.name, [...gone], counts, record);
      writer().collectOrphansOf(record.replaced);
      vectors.syncCodes();
    });
    const pending = failpoints.hit(reindexFailpoint, signal);
    if (pending !== undefined) {
      log.line(`failpoint ${reindexFailpoint}: inside the write transaction, before COMMIT`);
      await pending;
    }
    throwIfAborted(signal);
    guard.run(() => db.exec('COMMIT'));
  } catch (error) {
    if (db.isOpen && db.inTransaction) db.exec('ROLLBACK');
    if (signal?.aborted) throw cancelled();
    throw error;
  } finally {
    writer().unstage(run);
  }
  return {
    added: record.added,
    updated: record.updated,
    removed: record.removed,
    texts: record.texts,
    unchanged: counts.unchanged,
    errors,
    ms: Math.round(performance.now() - started),
  };
}

function emptyPaths(errors: PathsReport['errors']): Omit<PathsReport, 'ms'> {
  return { added: [], updated: [], removed: [], texts: [], unchanged: 0, errors };
}

/**
 * The files under `folder` (relative paths), depth first, symlinks not followed and folders the
 * hidden/`node_modules` rule passes by not entered, as a scan's listing would find them.
 */
function* walkFolder(root: string, folder: string, passedBy: (folder: string) => boolean): Generator<string> {
  const stack = [folder];
  while (stack.length > 0) {
    const current = stack.pop() as string;
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(path.join(root, current), { withFileTypes: true });
    } catch {
      continue;
    }
    for (const entry of entries) {
      const relative = current === '' ? entry.name : `${current}/${entry.name}`;
      if (entry.isDirectory()) {
        if (!passedBy(relative)) stack.push(relative);
      } else if (entry.isFile()) yield relative;
    }
  }
}

const cancelled = (): QmdError => new QmdError('ABORTED', 'The write was cancelled; the index is unchanged');

function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw cancelled();
}

function errno(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : undefined;
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
