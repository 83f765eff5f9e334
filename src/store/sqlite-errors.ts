import { problemForSqliteCode } from './index-problems.js';
import { sqliteCode } from './sqlite.js';

/*
 * What better-sqlite3 13.2.0 throws (SQLite 3.54.1; Node 22.23.5 and 24.22.3), measured on this
 * machine (bench/experiments/sqlite-binding-facts.mjs); `sqliteCode` reads the SqliteError's code:
 * - a second writer past the busy timeout: `SQLITE_BUSY` "database is locked", both on
 *   `BEGIN IMMEDIATE` and on a plain INSERT. Readers are never blocked (WAL).
 * - a file that is not SQLite: `SQLITE_NOTADB` "file is not a database", on the first
 *   statement (not on open), read-only or not.
 * - a write through a connection SQLite could only open read-only (file not writable,
 *   `query_only`): `SQLITE_READONLY` "attempt to write a readonly database".
 * - a path whose directory cannot hold a file (under a regular file, in /proc):
 *   `SQLITE_CANTOPEN` "unable to open database file"; a missing directory is better-sqlite3's
 *   own TypeError, which `Sqlite` turns into the same SQLITE_CANTOPEN.
 * - a full disk (a tmpfs of a few hundred KB): `SQLITE_FULL` "database or disk is full" from a
 *   write, "disk I/O error" (`SQLITE_IOERR_*`) when the `-shm` cannot grow (index-problems.ts
 *   maps both).
 */
export function fromSqliteError(error: unknown, indexPath: string, busyTimeoutMs: number): unknown {
  const code = sqliteCode(error);
  if (code === undefined) return error;
  // The words are the index vocabulary's (index-problems.ts); only the code comes from here.
  return problemForSqliteCode(code, (error as Error).message, indexPath, busyTimeoutMs, error) ?? error;
}
