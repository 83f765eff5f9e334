import * as fs from 'node:fs';
import * as path from 'node:path';
import { silentLog } from '../log.js';
import { closeDatabase, openDatabase } from '../store/database.js';
import { indexProblem, problemFromFileSystem } from '../store/index-problems.js';
import { fromSqliteError } from '../store/sqlite-errors.js';
import { SqliteStore } from './store.js';
import type { Store, StoreOptions } from './types.js';

export { defaultIndexPath, mistypedIndex, resolveIndexPath } from '../store/paths.js';
export { awaitIndex } from './awaiting.js';
export type * from './types.js';

export const defaultBusyTimeoutMs = 5000;

/**
 * Opens the index at `file` (created with its parent directory when missing), in WAL mode
 * so several processes can share it: readers never wait, a writer waits up to
 * `busyTimeoutMs` for another writer and then fails with INDEX_LOCKED.
 *
 * Errors (QmdError, worded by `index-problems.ts`): INDEX_MISSING (a read-only open of no
 * file: it is never created), INDEX_UNREADABLE, INDEX_READ_ONLY (the file or its folder cannot
 * be written), INDEX_CORRUPT (not a SQLite file, another program's database, or a failed
 * quick_check), INDEX_FULL, INDEX_LOCKED.
 */
export function openStore(file: string, options: StoreOptions = {}): Store {
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
    quickCheck: options.quickCheck ?? ((options.readonly ?? false) ? 'small' : true),
    ...(options.log !== undefined && { log: options.log }),
  });
  try {
    return new SqliteStore(absolute, opened, { ...options, busyTimeoutMs });
  } catch (error) {
    // Preparing the statements reads the schema and builds the FTS5 table: a damaged page
    // there is met here, before any guarded call (measured: "vtable constructor failed").
    closeDatabase(opened, options.log ?? silentLog);
    throw fromSqliteError(error, absolute, busyTimeoutMs);
  }
}

/**
 * Removes an index file and its WAL companions, after its store is closed: what `collection
 * add` does with an index it created and could not add to (issue 31), so a failed first add
 * leaves nothing behind. Best effort: a file already gone is fine.
 */
export function discardIndex(file: string): void {
  for (const suffix of ['', '-wal', '-shm', '-journal']) fs.rmSync(`${file}${suffix}`, { force: true });
}
