import { QmdError } from '../errors.js';
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
 */
export function fromSqliteError(error: unknown, indexPath: string, busyTimeoutMs: number): unknown {
  const code = sqliteCode(error);
  if (code === undefined) return error;
  const why = `${code}: ${(error as Error).message}`;
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
