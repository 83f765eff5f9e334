import Database from 'better-sqlite3';
import { QmdError } from '../errors.js';

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
 */
export function fromSqliteError(error: unknown, indexPath: string, busyTimeoutMs: number): unknown {
  if (!(error instanceof Database.SqliteError)) return error;
  const code = error.code;
  const why = `${code}: ${error.message}`;
  if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) {
    return new QmdError(
      'INDEX_LOCKED',
      `The index ${indexPath} is locked by another process (waited ${busyTimeoutMs} ms); try again when it is done`,
      { cause: error },
    );
  }
  if (code.startsWith('SQLITE_READONLY') || code.startsWith('SQLITE_CANTOPEN')) {
    return new QmdError('INDEX_READ_ONLY', `The index ${indexPath} cannot be written (${why})`, { cause: error });
  }
  if (code === 'SQLITE_NOTADB' || code.startsWith('SQLITE_CORRUPT')) {
    return new QmdError(
      'INDEX_CORRUPT',
      `The index ${indexPath} is damaged or not a qmd index (${why}); move it away and add the collections again`,
      { cause: error },
    );
  }
  return error;
}
