import Database from 'better-sqlite3';
import { problemForSqliteCode } from './index-problems.js';

/*
 * What better-sqlite3 12.11.1 (SQLite 3.53.2) throws, measured on this machine:
 * - a second writer past the busy timeout: SqliteError `SQLITE_BUSY` "database is locked",
 *   both on `BEGIN IMMEDIATE` and on a plain INSERT. Readers are never blocked (WAL).
 * - a file that is not SQLite: `SQLITE_NOTADB` "file is not a database", on the first
 *   statement (not on `new Database`), read-only or not.
 * - a write through a connection SQLite could only open read-only (file not writable,
 *   `query_only`): `SQLITE_READONLY` "attempt to write a readonly database".
 * - a path whose directory cannot hold a file (under a regular file, in /proc):
 *   `SQLITE_CANTOPEN` "unable to open database file"; a missing directory is a plain
 *   TypeError "Cannot open database because the directory does not exist".
 * - a full disk (a tmpfs of a few hundred KB): `SQLITE_FULL` "database or disk is full".
 */
export function fromSqliteError(error: unknown, indexPath: string, busyTimeoutMs: number): unknown {
  if (!(error instanceof Database.SqliteError)) return error;
  // The words are the index vocabulary's (index-problems.ts); only the code comes from here.
  return problemForSqliteCode(error.code, error.message, indexPath, busyTimeoutMs, error) ?? error;
}
