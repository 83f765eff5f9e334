import * as fs from 'node:fs';
import * as path from 'node:path';
import { glob } from 'tinyglobby';
import { errorMessage, QmdError } from '../errors.js';
import { isInside } from '../store/paths.js';
import { contentHash } from '../text/content-hash.js';
import { extractTitle } from '../text/markdown.js';
import { countIgnored, ignoreRule, noneIgnored, splitMask } from './ignore.js';
import type { IgnoredFiles, IndexProgress } from './types.js';

/** What the index already knows about a file, to skip it without reading. */
export interface KnownFile {
  mtimeMs: number;
  size: number;
  hash: string;
}

/** A file read and hashed during the read phase; nothing is written yet. */
export interface ReadFile {
  path: string;
  mtimeMs: number;
  size: number;
  hash: string;
  /** Absent when the hash matched what the index has: only mtime/size are refreshed. */
  text?: string;
  title?: string;
}

/**
 * The read phase's account of one collection: counts only. The files read, and the paths of
 * every file found, went to `onBatch` (docs/design.md §8.5: no per-file set outlives a batch).
 */
export interface CollectionScan {
  collection: string;
  /** The root could not be listed: the collection is left exactly as it is. */
  skipped: boolean;
  /**
   * `stop` fired while this collection was read: only the files found so far went to
   * `onBatch` (none when it fired during the listing), so nothing may be deleted for it.
   */
  stopped: boolean;
  /** How many files the mask matched (the ignored ones not counted). */
  listed: number;
  /** Files the mask matched that the ignore rule passes by (`ignore.ts`). */
  ignored: IgnoredFiles;
  /** Files the mask matched inside the root, readable or not (each also handed to `onBatch` as seen). */
  found: number;
  /** Same mtime and size as indexed: not even read. */
  unchangedByStat: number;
  errors: Array<{ file: string; error: string }>;
}

/** Files larger than this are not notes; reading them would only slow the scan down. */
export const maxFileBytes = 10 * 1024 * 1024;

/**
 * How many files are read between two turns of the event loop (progress, abort signals), and
 * handed on as one batch: `update.ts` writes each batch as one unit (`UNIT_FILES`, the same).
 */
const batch = 256;
/**
 * The most text held before it is handed to `onBatch`: with `batch`, the bound on what the
 * read phase keeps in memory whatever the corpus (docs/design.md §8.5), and on a unit's write:
 * 2 MiB of text is written in about 130 ms here (8 MiB took 370–520 ms at load 10).
 */
export const maxBatchBytes = 2 * 1024 * 1024;

export interface ScanInput {
  collection: string;
  root: string;
  /** One glob, or several separated by commas outside braces and brackets (`splitMask`). */
  mask: string;
  /** Globs whose files are left out, besides `**\/node_modules/**`. */
  ignore?: readonly string[];
  /** What the index has for a file (looked up one file at a time: no map of the collection). */
  known: (path: string) => KnownFile | undefined;
  /**
   * Receives the files read, in batches of at most `batch` files or `maxBatchBytes` of text,
   * and writes them (the scan waits for it); nothing keeps them afterwards. `seen` is every
   * file found since the last batch, read or not (unchanged, unreadable): whatever the index
   * has and no batch saw is gone.
   */
  onBatch: (files: ReadFile[], seen: string[]) => void | Promise<void>;
  onProgress?: ((progress: IndexProgress) => void) | undefined;
  /** Cancels: rejects with ABORTED. */
  signal?: AbortSignal | undefined;
  /** Stops between two files: the files found so far are handed on, and the scan returns `stopped`. */
  stop?: AbortSignal | undefined;
}

/**
 * Lists and reads one collection. Symlinks are not followed at all, neither files nor
 * directories: measured with tinyglobby 0.2.17, `followSymbolicLinks: true` crawls whatever
 * a link points to (a link to $HOME or / would be walked entirely before any filter could
 * refuse it), while `false` returns no symlinked entry. Every file found still has its
 * realpath checked against the root's, which catches a directory swapped for a link
 * between listing and reading.
 *
 * Hidden files and folders and `node_modules` are listed too, then counted and passed by
 * unless the mask names them (`ignore.ts`): walking them costs time (this repository's 18.7k
 * files of `node_modules`: 124 ms against 3 ms without, median of 5 at load 11,
 * `node bench/experiments/skip-count.mjs`),
 * and in exchange `collection add` can say what it did not index and how to include it.
 */
export async function scanCollection(input: ScanInput): Promise<CollectionScan> {
  const { collection, root, known } = input;
  const result: CollectionScan = {
    collection,
    skipped: false,
    stopped: false,
    listed: 0,
    ignored: noneIgnored(),
    found: 0,
    unchangedByStat: 0,
    errors: [],
  };
  input.onProgress?.({ stage: 'listing', collection, done: 0, total: 0 });
  const listing = anyOf(input.signal, input.stop);
  let paths: string[];
  try {
    paths = await listFiles(root, input.mask, input.ignore, listing);
  } catch (error) {
    throwIfAborted(input.signal);
    if (input.stop?.aborted) {
      result.stopped = true;
      return result;
    }
    result.skipped = true;
    result.errors.push({ file: root, error: `collection ${collection} not scanned: ${describe(error)}` });
    return result;
  }
  // An aborted listing may end early without throwing (tinyglobby 0.2.17 returns what it has,
  // even nothing): never take it for the whole folder, whose missing files would be deleted.
  throwIfAborted(input.signal);
  if (input.stop?.aborted) {
    result.stopped = true;
    return result;
  }
  paths.sort();
  const ignore = ignoreRule(input.mask);
  paths = paths.filter((relative) => {
    const ignored = ignore(relative);
    if (ignored !== undefined) countIgnored(result.ignored, ignored.reason, ignored.folder);
    return ignored === undefined;
  });
  const total = paths.length;
  result.listed = total;
  input.onProgress?.({ stage: 'reading', collection, done: 0, total });
  let pending: ReadFile[] = [];
  let pendingBytes = 0;
  let seen: string[] = [];
  const flush = async (): Promise<void> => {
    if (pending.length === 0 && seen.length === 0) return;
    const files = pending;
    const paths = seen;
    pending = [];
    seen = [];
    pendingBytes = 0;
    await input.onBatch(files, paths);
  };
  const found = (relative: string): void => {
    seen.push(relative);
    result.found++;
  };
  for (let i = 0; i < total; i++) {
    if (i % batch === 0 && i > 0) {
      await flush();
      await new Promise<void>((resolve) => setImmediate(resolve));
      input.onProgress?.({ stage: 'reading', collection, done: i, total });
    }
    throwIfAborted(input.signal);
    if (input.stop?.aborted) {
      result.stopped = true;
      break;
    }
    const relative = paths[i] as string;
    try {
      const file = readOne(root, relative, known(relative));
      found(relative);
      if (file === undefined) result.unchangedByStat++;
      else {
        pending.push(file);
        pendingBytes += file.size;
        if (pendingBytes >= maxBatchBytes) await flush();
      }
    } catch (error) {
      if (error instanceof OutsideRoot) {
        result.errors.push({ file: path.join(root, relative), error: error.message });
        continue;
      }
      // Vanished since the listing: it counts as deleted. Unreadable: the index keeps what
      // it has for it until it can be read again.
      if (errno(error) !== 'ENOENT') found(relative);
      result.errors.push({ file: path.join(root, relative), error: describe(error) });
    }
  }
  await flush();
  if (!result.stopped) input.onProgress?.({ stage: 'reading', collection, done: total, total });
  return result;
}

/**
 * The files of a collection the mask matches, minus its `ignore` globs, relative to `root`,
 * unsorted and before `ignoreRule` (which a scan applies as it counts what it passed by).
 * Throws when the root cannot be listed; an aborted `signal` may end it early without
 * throwing (the caller checks).
 */
export async function listFiles(
  root: string,
  mask: string,
  ignore: readonly string[] | undefined,
  signal?: AbortSignal,
): Promise<string[]> {
  if (!fs.statSync(root).isDirectory()) throw new Error('not a directory');
  return glob(splitMask(mask), {
    cwd: root,
    onlyFiles: true,
    followSymbolicLinks: false,
    dot: true,
    // qmd 2.x's `ignore:` (schema 6); hidden names and node_modules are `ignoreRule`'s.
    ...(ignore !== undefined && ignore.length > 0 && { ignore: [...ignore] }),
    ...(signal === undefined ? {} : { signal }),
  });
}

export class OutsideRoot extends Error {}

/**
 * One file as the read phase reads it: `undefined` when mtime and size match `known` (not
 * read), its hash alone when the bytes are what the index has. Throws `OutsideRoot` for a
 * path that resolves outside the root, the file system's error otherwise (ENOENT: gone).
 */
export function readOne(root: string, relative: string, known: KnownFile | undefined): ReadFile | undefined {
  const absolute = path.join(root, relative);
  const real = fs.realpathSync.native(absolute);
  if (!isInside(root, real)) throw new OutsideRoot(`resolves outside the collection root (${real}): not indexed`);
  const stat = fs.statSync(real);
  if (!stat.isFile()) throw new Error('not a regular file');
  if (known !== undefined && known.mtimeMs === stat.mtimeMs && known.size === stat.size) return undefined;
  if (stat.size > maxFileBytes) throw new Error(`larger than ${maxFileBytes} bytes: not indexed`);
  const bytes = fs.readFileSync(real);
  // qmd 2.x's hash (content-hash.ts): its docids then name the same notes here.
  const hash = contentHash(bytes);
  const base = { path: relative, mtimeMs: stat.mtimeMs, size: stat.size, hash };
  if (known?.hash === hash) return base;
  const text = bytes.toString('utf8').replace(/^\uFEFF/, '');
  return { ...base, text, title: extractTitle(text, relative) };
}

function anyOf(...signals: Array<AbortSignal | undefined>): AbortSignal | undefined {
  const given = signals.filter((s): s is AbortSignal => s !== undefined);
  return given.length <= 1 ? given[0] : AbortSignal.any(given);
}

function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new QmdError('ABORTED', 'Indexing was cancelled; the files written before are kept');
}

function errno(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : undefined;
}

function describe(error: unknown): string {
  return errorMessage(error);
}
