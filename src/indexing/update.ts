import * as fs from 'node:fs';
import * as path from 'node:path';
import { QmdError } from '../errors.js';
import { addIgnored, folderPassedBy, noneIgnored, pathFilter } from './ignore.js';
import { type AppliedPaths, UNIT_FILES, type WriteCounts } from './index-writer.js';
import { type CollectionScan, maxBatchBytes, OutsideRoot, type ReadFile, readOne, scanCollection } from './scan.js';
import type { IndexOptions, IndexReport } from './types.js';
import {
  collectRemovedTexts,
  commitStaged,
  commitUnit,
  removeGone,
  type UnitOptions,
  type UpdateParts,
} from './write-units.js';

export type { UpdateParts } from './write-units.js';

export const defaultMask = '**/*.md';
/** Inside each unit of a watcher's write, before COMMIT: where tests SIGKILL or abort a write. */
export const reindexFailpoint = 'watch.write';

/** A collection as indexing reads it: where, which files, which to leave out. */
export interface IndexTarget {
  name: string;
  root: string;
  mask: string;
  ignore: string[];
}

/**
 * `addCollection`'s indexing: one collection scanned, each batch read written as one unit
 * (`write-units.ts`), `register` adding its row inside the first unit (under the write lock,
 * where a name taken meanwhile by another process is seen). Stopped before a file was read,
 * nothing is kept: the collection is not added. Stopped later, it is added with the files
 * written, and the report says how many of how many.
 */
export async function indexNewCollection(
  parts: UpdateParts,
  target: IndexTarget,
  options: IndexOptions,
  register: (now: string) => void,
): Promise<IndexReport> {
  const started = performance.now();
  const run = parts.guard.run(() => parts.writer().newRun());
  const counts = noCounts();
  // The collection's row goes in the first unit that commits, whichever it is.
  const first: FirstUnit = {
    pending: true,
    write: (now) => {
      if (!first.pending) return;
      register(now);
      first.pending = false;
    },
  };
  try {
    const scan = await scanTarget(parts, run, target, options, counts, first);
    counts.unchanged += scan.unchangedByStat;
    if (scan.stopped && scan.found === 0) return report(started, [scan], counts, []);
    if (scan.skipped || scan.stopped) {
      if (first.pending) await commitUnit(parts, first.write);
    } else if (!(await removeGone(parts, run, target.name, counts, { stop: options.stop, first: first.write }))) {
      scan.stopped = true;
    }
    return report(started, [scan], counts, []);
  } finally {
    parts.writer().unstage(run);
  }
}

/**
 * `update`: every collection re-scanned incrementally (mtime + hash), each batch read written
 * as one unit, then the files gone from a collection read in full deleted; `stop` ends it
 * after the unit in hand, and the collections not reached are reported untouched.
 */
export async function updateCollections(
  parts: UpdateParts,
  targets: readonly IndexTarget[],
  options: IndexOptions,
): Promise<IndexReport> {
  const started = performance.now();
  const run = parts.guard.run(() => parts.writer().newRun());
  const counts = noCounts();
  const scans: CollectionScan[] = [];
  try {
    for (const target of targets) {
      if (options.stop?.aborted) break;
      const scan = await scanTarget(parts, run, target, options, counts);
      scans.push(scan);
      counts.unchanged += scan.unchangedByStat;
      if (scan.skipped || scan.stopped) continue;
      if (!(await removeGone(parts, run, target.name, counts, { stop: options.stop }))) scan.stopped = true;
    }
    if (counts.removed > 0) await collectRemovedTexts(parts);
  } finally {
    parts.writer().unstage(run);
  }
  const untouched = targets.slice(scans.length).map((t) => t.name);
  return report(started, scans, counts, untouched);
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
  counts: WriteCounts,
  first?: FirstUnit,
): Promise<CollectionScan> {
  const { guard, writer } = parts;
  return scanCollection({
    collection: target.name,
    root: target.root,
    mask: target.mask,
    ignore: target.ignore,
    known: (path) => guard.run(() => writer().known(target.name, path)),
    onBatch: async (files, seen) => {
      guard.run(() => writer().stage(run, target.name, files, seen));
      // A batch of files unchanged by their mtime and size writes nothing: no unit.
      if (files.length > 0 || first?.pending) {
        await commitStaged(parts, run, target.name, counts, first?.pending ? { first: first.write } : {});
      }
    },
    onProgress: options.onProgress,
    signal: options.signal,
    stop: options.stop,
  });
}

/** What the first unit of `collection add` writes before its files: the collection's row. */
interface FirstUnit {
  pending: boolean;
  write: (now: string) => void;
}

function noCounts(): WriteCounts {
  return { added: 0, updated: 0, removed: 0, unchanged: 0 };
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
  /**
   * `holds()` said no under the write lock (another process took the writer's place): the unit
   * in hand wrote nothing and no other began; what is listed was committed before.
   */
  lost?: boolean;
  ms: number;
}

export interface ReindexOptions {
  /** Aborts: the unit in progress is rolled back and this rejects with ABORTED. */
  signal?: AbortSignal;
  /**
   * Asked under the write lock, first in every unit: false (another process took the writer's
   * place) and that unit writes nothing, no other begins, and `lost` is reported.
   */
  holds?: () => boolean;
  /** Begins each unit's transaction (default `BEGIN IMMEDIATE` at once): a watcher's waits without blocking. */
  begin?: () => Promise<void>;
}

/**
 * A watcher's write: the files at `changed` re-read (a folder: every file under it, and what
 * the index has under it that is gone), the documents at `removed` deleted (a folder: every
 * document under it). Written as `update` writes (docs/design.md §8.5): the files read are
 * staged and written a unit at a time (256 files or 2 MiB of text, as a scan's batches:
 * `IndexWriter.stage`, `commitStaged`), then the paths gone are deleted in units of their own
 * (`commitUnit`), so
 * the index is whole after every unit and a write of thousands of files (a folder moved in)
 * holds the lock no longer than one of `update`'s units. The same mask and ignore rules as a
 * scan (`pathFilter`), but no listing of the collection and no sweep of its tables: every
 * statement is an indexed lookup, so a write of a few paths costs the same at 100 notes as at
 * 100k (§9). A path that is gone when read counts as removed; one the rules leave out is not
 * read. `holds` is asked first in every unit; `signal` rolls back the unit in hand (the units
 * committed before it stay: each is whole). A watcher's `begin` gives up once it closes, so a
 * close lets the unit in hand complete and begins no other (its catch-up at the next start
 * reads the rest).
 */
export async function reindexPaths(
  parts: UpdateParts,
  target: IndexTarget,
  changed: readonly string[],
  removed: readonly string[],
  options: ReindexOptions = {},
): Promise<PathsReport> {
  const started = performance.now();
  const { guard, writer } = parts;
  const { signal } = options;
  const accepts = pathFilter(target.mask, target.ignore);
  const passedBy = folderPassedBy(target.mask);
  const gone = new Set(removed);
  const errors: PathsReport['errors'] = [];
  const counts: WriteCounts = { added: 0, updated: 0, removed: 0, unchanged: 0 };
  const record: AppliedPaths = { added: [], updated: [], removed: [], texts: [] };
  const unit: UnitOptions = {
    failpoint: reindexFailpoint,
    ...(signal !== undefined && { signal }),
    ...(options.begin !== undefined && { begin: options.begin }),
  };
  const each = (): void => {
    if (options.holds !== undefined && !options.holds()) throw new PlaceLost();
  };
  const run = guard.run(() => writer().newRun());
  let batch: ReadFile[] = [];
  let batchBytes = 0;
  /** The files read so far staged (outside any transaction on the index), then written: a unit, as a scan's batch is. */
  const write = async (): Promise<void> => {
    if (batch.length === 0) return;
    const files = batch;
    batch = [];
    batchBytes = 0;
    guard.run(() => writer().stage(run, target.name, files, []));
    await commitStaged(parts, run, target.name, counts, { each, record, unit });
  };
  /**
   * Reads one file into the batch; true when the batch is a unit's worth. Synchronous, as is
   * everything up to the first unit's `begin`: a write the watcher has announced has begun
   * its transaction before anything else runs (a `close()` then lets it complete).
   */
  const read = (relative: string): boolean => {
    if (!accepts(relative)) return false;
    try {
      const known = guard.run(() => writer().known(target.name, relative));
      const file = readOne(target.root, relative, known);
      if (file === undefined) counts.unchanged++;
      else {
        batch.push(file);
        batchBytes += file.size;
      }
    } catch (error) {
      if (error instanceof OutsideRoot) {
        errors.push({ file: path.join(target.root, relative), error: error.message });
        gone.add(relative);
      } else if (errno(error) === 'ENOENT' || errno(error) === 'ENOTDIR') gone.add(relative);
      else errors.push({ file: path.join(target.root, relative), error: errorText(error) });
    }
    return batch.length >= UNIT_FILES || batchBytes >= maxBatchBytes;
  };
  try {
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
          if (read(file)) await write();
        }
        for (const indexed of guard.run(() => writer().pathsUnder(target.name, relative))) {
          if (!found.has(indexed)) gone.add(indexed);
        }
      } else if (!stat.isFile()) {
        // Symlinks are never followed (scan.ts): one where a note was is the note gone.
        gone.add(relative);
      } else if (read(relative)) await write();
    }
    if (batch.length > 0) await write();
    // Added and updated first, then removed: a note renamed in this batch keeps its text.
    const paths = [...gone];
    for (let more = paths.length > 0; more; ) {
      more = await commitUnit(
        parts,
        () => {
          each();
          return writer().removePaths(target.name, paths, counts, record) === UNIT_FILES;
        },
        unit,
      );
    }
  } catch (error) {
    if (error instanceof PlaceLost) return { ...report(), lost: true };
    if (signal?.aborted) throw cancelled();
    throw error;
  } finally {
    writer().unstage(run);
  }
  return report();

  function report(): PathsReport {
    return { ...record, unchanged: counts.unchanged, errors, ms: Math.round(performance.now() - started) };
  }
}

/** `holds()` said no under the write lock: the unit in hand rolls back, and no other begins. */
class PlaceLost extends Error {}

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
