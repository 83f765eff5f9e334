import { problemForSqliteCode } from './index-problems.js';
import { sqliteCode } from './sqlite.js';

/*
 * What node:sqlite throws (Node 22.23.5 and 24.22.3, SQLite 3.54.1), measured on this machine
 * (bench/experiments/node-sqlite.mjs); `sqliteCode` names the numeric `errcode`:
 * - a second writer past the busy timeout: `SQLITE_BUSY` "database is locked", both on
 *   `BEGIN IMMEDIATE` and on a plain INSERT. Readers are never blocked (WAL).
 * - a file that is not SQLite: `SQLITE_NOTADB` "file is not a database", on the first
 *   statement (not on open), read-only or not.
 * - a write through a connection SQLite could only open read-only (file not writable,
 *   `query_only`): `SQLITE_READONLY` "attempt to write a readonly database".
 * - a path whose directory cannot hold a file (under a regular file, in /proc, a missing
 *   directory): `SQLITE_CANTOPEN` "unable to open database file".
 * - a full disk (a tmpfs of a few hundred KB): `SQLITE_FULL` "database or disk is full" from a
 *   write, "disk I/O error" (`SQLITE_IOERR_*`) when the `-shm` cannot grow (better-sqlite3;
 *   index-problems.ts maps both).
 */
export function fromSqliteError(error: unknown, indexPath: string, busyTimeoutMs: number): unknown {
  const code = sqliteCode(error);
  if (code === undefined) return error;
  // The words are the index vocabulary's (index-problems.ts); only the code comes from here.
  return problemForSqliteCode(code, (error as Error).message, indexPath, busyTimeoutMs, error) ?? error;
}
