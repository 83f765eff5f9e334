import * as fs from 'node:fs';
import * as path from 'node:path';
import { silentLog } from '../log.js';
import { closeDatabase, type OpenedDatabase, openDatabase } from '../store/database.js';
import { indexProblem, problemFromFileSystem } from '../store/index-problems.js';
import { fromSqliteError } from '../store/sqlite-errors.js';
import { compose } from './compose.js';
import type { Reader } from './reader-types.js';
import type { StoreOptions } from './types.js';

export const defaultBusyTimeoutMs = 5000;

/**
 * Opens the index at `file` (created with its parent directory when missing), in WAL mode
 * so several processes can share it: readers never wait, a writer waits up to
 * `busyTimeoutMs` for another writer and then fails with INDEX_LOCKED; `build` makes the
 * facade over the open database (`compose`).
 *
 * Errors (QmdError, worded by `index-problems.ts`): INDEX_MISSING (a read-only open of no
 * file: it is never created), INDEX_UNREADABLE, INDEX_READ_ONLY (the file or its folder cannot
 * be written), INDEX_CORRUPT (not a SQLite file, another program's database, or a failed
 * quick_check), INDEX_FULL, INDEX_LOCKED.
 */
export function openIndex<T>(
  file: string,
  options: StoreOptions,
  build: (absolute: string, opened: OpenedDatabase, options: StoreOptions & { busyTimeoutMs: number }) => T,
): T {
  const absolute = path.resolve(file);
  // A read never makes an index: a mistyped path would grow folders and an empty index that
  // answers "No results.". Only writers create one.
  const create = options.create ?? !options.readonly;
  if (!create && !fs.existsSync(absolute)) throw indexProblem.missing(absolute);
  // Asked of the file system first: SQLite would call an unreadable file "cannot open".
  const unreadable = fs.existsSync(absolute) ? problemFromFileSystem(absolute) : undefined;
  if (unreadable?.code === 'INDEX_UNREADABLE') throw unreadable;
  const busyTimeoutMs = options.busyTimeoutMs ?? defaultBusyTimeoutMs;
  const opened = openDatabase(absolute, {
    readonly: options.readonly ?? false,
    busyTimeoutMs,
    quickCheck: options.quickCheck ?? ((options.readonly ?? false) ? 'small' : 'catalogue'),
    ...(options.log !== undefined && { log: options.log }),
  });
  try {
    return build(absolute, opened, { ...options, busyTimeoutMs });
  } catch (error) {
    // Preparing the statements reads the schema and builds the FTS5 table: a damaged page
    // there is met here, before any guarded call (measured: "vtable constructor failed").
    closeDatabase(opened, options.log ?? silentLog);
    throw fromSqliteError(error, absolute, busyTimeoutMs);
  }
}

/**
 * The read side alone (`Reader`), opened as `openIndex` opens: what `qmd mcp` serves. It
 * loads none of `src/indexing/` (the scan, the write phase, chunking for `embed`), so a
 * server's start-up and a test of search build no indexer.
 */
export function openReader(file: string, options: StoreOptions = {}): Reader {
  return openIndex(file, options, (absolute, opened, finished) => compose(absolute, opened, finished).reader);
}
