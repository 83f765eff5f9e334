import * as fs from 'node:fs';
import * as path from 'node:path';
import { errorMessage, QmdError } from '../errors.js';
import { type Log, silentLog } from '../log.js';
import { indexProblem, problemFromFileSystem } from './index-problems.js';
import { checkOnOpen, type QuickCheck } from './integrity.js';
import { createPrivateIndex, type Tightening, tightenQuietly } from './private.js';
import { checkOwnership, latestVersion, migrate, schemaVersion } from './schema/schema.js';
import { Sqlite, sqliteCode } from './sqlite.js';
import { fromSqliteError } from './sqlite-errors.js';

export interface OpenDatabaseOptions {
  readonly: boolean;
  busyTimeoutMs: number;
  quickCheck: QuickCheck;
  /** Where the one line goes when an index open to other users is made private (`private.ts`). */
  log?: Log;
}

export interface OpenedDatabase {
  db: Sqlite;
  /**
   * The connection itself is read-only (the file cannot be written). Then nothing can
   * checkpoint through it, and if it is the last connection to close, the `-wal` stays.
   */
  fileReadOnly: boolean;
}

/**
 * Opens (creating when needed) the index with WAL, a busy timeout and foreign keys, checks
 * it as far as `quickCheck` asks (`integrity.ts`), and brings its schema up to date.
 *
 * A `readonly` store still opens the file read-write when it can and sets `query_only`:
 * measured here (better-sqlite3 12 and 13, and node:sqlite's `readOnly`, docs/design.md §5), a
 * read-only connection cannot checkpoint and, when it is the last to close, leaves the `-wal`
 * (and `-shm`) behind; a
 * `query_only` connection refuses every write (SQLITE_READONLY) yet its close checkpoints
 * and deletes the `-wal`. Only when the file really cannot be written does it fall back to
 * a read-only connection, which can read as long as the directory lets SQLite create the
 * `-shm` file (or it exists).
 */
export function openDatabase(file: string, options: OpenDatabaseOptions): OpenedDatabase {
  const { fileReadOnly, tightening } = prepareLocation(file, options.readonly);
  let db: Sqlite;
  try {
    db = new Sqlite(file, { readOnly: fileReadOnly, timeoutMs: options.busyTimeoutMs, allowExtension: true });
  } catch (error) {
    tightening?.restore();
    throw fromSqliteError(error, file, options.busyTimeoutMs);
  }
  try {
    if (!fileReadOnly) {
      db.pragma('journal_mode = WAL');
      // In WAL mode NORMAL stays consistent after a crash (a power loss may lose the last
      // commits, a process crash loses nothing) and saves an fsync per transaction.
      db.pragma('synchronous = NORMAL');
    }
    db.pragma('foreign_keys = ON');
    // Set, not left to the build (PRAGMA compile_options, docs/design.md §5): a 16 MB page
    // cache (better-sqlite3's default; Node's SQLite, which qmd ran on before, has 2 MB) and
    // recursive triggers off (qmd's triggers write other tables and it never REPLACEs, so this
    // only keeps a future trigger, or another build, from behaving differently).
    db.pragma('cache_size = -16000');
    db.pragma('recursive_triggers = OFF');
    checkOnOpen(db, file, options.quickCheck);
    if (fileReadOnly) {
      checkOwnership(db, file);
      if (schemaVersion(db) < latestVersion) {
        throw new QmdError('INDEX_READ_ONLY', `The index ${file} needs a schema upgrade but cannot be written`);
      }
    } else {
      migrate(db, file);
    }
    if (options.readonly) db.pragma('query_only = ON');
    tightening?.report(options.log ?? silentLog);
    return { db, fileReadOnly };
  } catch (error) {
    db.close();
    // Not a qmd index we could open (qmd 2.x's, another program's, a damaged one): its modes
    // are put back as they were, and nothing is said of them.
    tightening?.restore();
    if (fileReadOnly && sqliteCode(error) === 'SQLITE_CANTOPEN') {
      // Measured: a read-only connection to a WAL index must create `-shm` unless it exists.
      throw indexProblem.readOnlyDirectory(file, error);
    }
    throw fromSqliteError(error, file, options.busyTimeoutMs);
  }
}

/**
 * Makes sure the file can be created or written, before SQLite gives a vaguer answer; a new
 * index is made private (0600 in a 0700 folder) and an existing one of this user open to others
 * is tightened (`private.ts`: said once it proves to be a qmd index, else undone).
 * `fileReadOnly` when the file exists but only a read-only connection is possible.
 */
function prepareLocation(file: string, readonly: boolean): { fileReadOnly: boolean; tightening?: Tightening } {
  const dir = path.dirname(file);
  let stat: fs.Stats | undefined;
  try {
    stat = fs.statSync(file);
  } catch (error) {
    if (errno(error) !== 'ENOENT') throw cannotWrite(file, error);
  }
  if (stat === undefined) {
    try {
      createPrivateIndex(file);
    } catch (error) {
      // Another process made it first: open theirs.
      if (errno(error) !== 'EEXIST') throw cannotWrite(file, error);
    }
    return { fileReadOnly: false };
  }
  if (!stat.isFile()) throw new QmdError('BAD_ARGUMENT', `The index ${file} is not a file`);
  const tightening = tightenQuietly(file);
  try {
    // The directory too: WAL needs to create the -wal and -shm files beside the index.
    fs.accessSync(file, fs.constants.W_OK);
    fs.accessSync(dir, fs.constants.W_OK);
    return { fileReadOnly: false, tightening };
  } catch (error) {
    if (readonly) return { fileReadOnly: true, tightening };
    tightening.restore();
    throw cannotWrite(file, error);
  }
}

function cannotWrite(file: string, error: unknown): QmdError {
  if (errno(error) === 'ENOSPC') return indexProblem.full(file, error);
  return (
    problemFromFileSystem(file, error) ??
    new QmdError(
      'INDEX_READ_ONLY',
      `The index ${file} cannot be written here (${errno(error) ?? String(error)}); choose another --index or QMD_INDEX`,
      { cause: error },
    )
  );
}

function errno(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : undefined;
}

/**
 * Checkpoints and closes. `wal_checkpoint(TRUNCATE)` waits the whole busy timeout when
 * another connection is writing or reading (measured: 2043 ms with a 2000 ms timeout), so
 * it runs with no busy wait: teardown must stay bounded. When other connections remain, the
 * `-wal` survives until the last of them closes, which checkpoints and deletes it (SQLite's
 * default, measured: no `-wal` or `-shm` left after the last close).
 */
export function closeDatabase(opened: OpenedDatabase, log: Log): void {
  const { db } = opened;
  if (!db.isOpen) return;
  if (!opened.fileReadOnly) {
    try {
      db.pragma('busy_timeout = 0');
      db.pragma('wal_checkpoint(TRUNCATE)');
    } catch (error) {
      log.warn(`could not checkpoint the index: ${errorMessage(error)}`);
    }
  }
  db.close();
}
