import * as fs from 'node:fs';
import * as path from 'node:path';
import { QmdError } from '../errors.js';

/**
 * The one vocabulary for what can be wrong with the index file itself, whatever
 * noticed it: `qmd status`, a read or write command, `qmd mcp` over stdio, `--shared` or HTTP.
 * Each is one line that names the file and says what to do, under its own code: the CLI exits 1
 * with it, and an MCP client finds the code in the error's `data` (`{ code }`).
 *
 * SQLite's own codes are mapped here by name (`SQLITE_FULL`, `SQLITE_READONLY_DIRECTORY`, …),
 * so whichever binding reports them only has to name them (`sqlite-errors.ts`). Where SQLite's
 * code is vague (`SQLITE_CANTOPEN`, `SQLITE_READONLY`) the file system says which it is.
 */
export type IndexProblemCode =
  | 'INDEX_MISSING'
  | 'INDEX_CORRUPT'
  | 'INDEX_FULL'
  | 'INDEX_UNREADABLE'
  | 'INDEX_READ_ONLY'
  | 'INDEX_LOCKED';

export const indexProblem = {
  missing: (file: string) =>
    new QmdError(
      'INDEX_MISSING',
      `No index at ${file}: make one with qmd collection add DIR, or point --index or QMD_INDEX at yours`,
    ),
  /**
   * `qmd mcp` serving before the first `collection add` (awaiting.ts): not a failure, a state
   * the server leaves as soon as the file appears.
   */
  notYet: (file: string) => new QmdError('INDEX_MISSING', `No index yet at ${file}: qmd collection add DIR`),
  damaged: (file: string, detail: string, cause?: unknown) =>
    new QmdError(
      'INDEX_CORRUPT',
      `The index ${file} is damaged (${detail}); move it away and add the collections again (qmd collection add DIR)`,
      { cause },
    ),
  full: (file: string, cause?: unknown) =>
    new QmdError(
      'INDEX_FULL',
      `The disk holding the index ${file} is full; free some space and run the command again (the index is as it was before it)`,
      { cause },
    ),
  unreadable: (file: string, cause?: unknown) =>
    new QmdError(
      'INDEX_UNREADABLE',
      `The index ${file} cannot be read by this user (permission denied); check its owner and mode with ls -l ${file}`,
      { cause },
    ),
  readOnlyDirectory: (file: string, cause?: unknown) => {
    const dir = path.dirname(file);
    const base = path.basename(file);
    return new QmdError(
      'INDEX_READ_ONLY',
      `The index ${file} cannot be used: its folder ${dir} is read-only, and SQLite must create ${base}-wal and ${base}-shm beside it; make ${dir} writable or move the index (--index)`,
      { cause },
    );
  },
  readOnlyFile: (file: string, cause?: unknown) =>
    new QmdError(
      'INDEX_READ_ONLY',
      `The index ${file} cannot be written (the file is read-only); chmod u+w ${file}, or use a read command`,
      { cause },
    ),
  locked: (file: string, busyTimeoutMs: number, cause?: unknown) =>
    new QmdError(
      'INDEX_LOCKED',
      `The index ${file} is locked by another process (waited ${busyTimeoutMs} ms); try again when it is done`,
      { cause },
    ),
};

/**
 * What an SQLite error code (its name, extended or primary) means for the index at `file`, or
 * undefined when it is no problem with the file (a bug, a bad statement).
 */
export function problemForSqliteCode(
  code: string,
  message: string,
  file: string,
  busyTimeoutMs: number,
  cause?: unknown,
): QmdError | undefined {
  if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) {
    return indexProblem.locked(file, busyTimeoutMs, cause);
  }
  // Measured on a full tmpfs: SQLITE_FULL from a write, but a plain "disk I/O error"
  // (SQLITE_IOERR_*) when the -shm cannot grow, so any I/O error on a full file system is one.
  if (code === 'SQLITE_FULL' || (code.startsWith('SQLITE_IOERR') && diskFull(file)))
    return indexProblem.full(file, cause);
  if (code === 'SQLITE_NOTADB' || code.startsWith('SQLITE_CORRUPT') || damagedVirtualTable(code, message)) {
    return indexProblem.damaged(file, `${code}: ${message}`, cause);
  }
  if (code === 'SQLITE_READONLY_DIRECTORY') return indexProblem.readOnlyDirectory(file, cause);
  if (code.startsWith('SQLITE_READONLY') || code.startsWith('SQLITE_CANTOPEN')) {
    return problemFromFileSystem(file, cause) ?? indexProblem.readOnlyFile(file, cause);
  }
  return undefined;
}

/**
 * Which of unreadable, read-only folder or read-only file it is, asked of the file system (as
 * this user: root passes every check). Undefined when nothing is wrong that it can see.
 */
export function problemFromFileSystem(file: string, cause?: unknown): QmdError | undefined {
  if (fs.existsSync(file) && !can(file, fs.constants.R_OK)) return indexProblem.unreadable(file, cause);
  if (!can(path.dirname(file), fs.constants.W_OK)) return indexProblem.readOnlyDirectory(file, cause);
  if (fs.existsSync(file) && !can(file, fs.constants.W_OK)) return indexProblem.readOnlyFile(file, cause);
  return undefined;
}

function can(target: string, mode: number): boolean {
  try {
    fs.accessSync(target, mode);
    return true;
  } catch {
    return false;
  }
}

/**
 * A damaged FTS5 shadow table surfaces as a plain SQLITE_ERROR "vtable constructor failed:
 * documents_fts" when a statement first touches the table (measured: one random page over a
 * 40-note index; quick_check calls it SQLITE_CORRUPT).
 */
function damagedVirtualTable(code: string, message: string): boolean {
  return code === 'SQLITE_ERROR' && message.startsWith('vtable constructor failed');
}

/** An I/O write error is a full disk when the index's file system has no block left. */
function diskFull(file: string): boolean {
  try {
    return fs.statfsSync(path.dirname(file)).bavail === 0;
  } catch {
    return false;
  }
}
