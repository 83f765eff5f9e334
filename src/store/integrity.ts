import * as fs from 'node:fs';
import { isQmdError, type QmdError } from '../errors.js';
import { indexProblem } from './index-problems.js';
import { type Sqlite, sqliteCode, sqliteError } from './sqlite.js';

/**
 * How much of the index is read through on open before anything else (`StoreOptions.quickCheck`;
 * what each place checks, and what it misses: docs/design.md §6, "A damaged index"):
 * - `true`: the whole file (`PRAGMA quick_check`): `qmd status`. Linear in the file (about 1.5 s
 *   of CPU at 50,000 notes, 295 MiB).
 * - `'small'`: the whole file when it is at most `QUICK_CHECK_SMALL_BYTES`, else nothing: the
 *   reading commands and the long-lived servers (`--shared`, `--http`), at open.
 * - `'catalogue'`: the whole file when small, else the catalogue (`CATALOGUE`): every writer.
 * - `false`: nothing (`qmd mcp` over stdio checks after the handshake instead: `Reader.verify`).
 */
export type QuickCheck = boolean | 'small' | 'catalogue';

/** The largest index a `'small'` or `'catalogue'` open reads through whole. */
export const QUICK_CHECK_SMALL_BYTES = 16 * 1024 * 1024;

/**
 * The tables every writer reads or rewrites whatever it was asked to do, each checked with
 * `PRAGMA quick_check(TABLE)` (SQLite 3.33+: the table's b-tree, its indexes' and its rows'
 * format). Reading the schema on open has already walked `sqlite_schema`. A partial check does
 * not walk the freelist nor count pages (btree.c: `bPartial`; measured: a freelist leaf pointing
 * at a page in use passes `quick_check(TABLE)` for every table, and the whole-file check says
 * "2nd reference to page 2"). At 50,000 notes (295 MiB) the four cost about 27 ms of CPU
 * against 1.5 s for the whole file (`bench/experiments/quick-check-tables.mjs`); `documents` is
 * most of it, and `update` reads every row of it anyway.
 */
export const CATALOGUE = ['collections', 'documents', 'contexts', 'embedding_state'] as const;

/**
 * Runs the open's check (`QuickCheck`) on `db`; INDEX_CORRUPT when it finds damage. `smallBytes`:
 * where a file stops being small (tests pass a smaller bound than a 16 MiB index).
 */
export function checkOnOpen(db: Sqlite, file: string, scope: QuickCheck, smallBytes = QUICK_CHECK_SMALL_BYTES): void {
  if (scope === false) return;
  if (scope === true || fileSize(file) <= smallBytes) quickCheck(db, file);
  else if (scope === 'catalogue') checkCatalogue(db, file);
}

/** `PRAGMA quick_check` of the whole file; INDEX_CORRUPT when it finds damage. */
export function quickCheck(db: Sqlite, file: string): void {
  answer(db, file, 'quick_check');
}

/** The catalogue's b-trees (`CATALOGUE`); INDEX_CORRUPT when they are damaged. */
export function checkCatalogue(db: Sqlite, file: string): void {
  // An index of an older schema lacks some tables until it is migrated (after this check).
  const present = new Set(db.column<[], string>("SELECT name FROM sqlite_schema WHERE type = 'table'").all());
  for (const table of CATALOGUE) if (present.has(table)) answer(db, file, `quick_check(${table})`);
}

function answer(db: Sqlite, file: string, pragma: string): void {
  // SQLite 3.54.1 answers a damaged file with one row of many lines, the first a header
  // ("*** in database main ***"): the first line after it says enough.
  const said = db.pragmaValue<string>(pragma);
  const first = said === 'ok' ? said : said?.split('\n').find((line) => !line.startsWith('***'));
  if (first !== 'ok') {
    const detail = `quick_check: ${first ?? 'no answer'}`;
    // Its cause is SQLite's verdict, as for a statement that met the damage (`isFileDamage`).
    throw indexProblem.damaged(file, detail, sqliteError(detail, 'SQLITE_CORRUPT'));
  }
}

/**
 * The index file itself is damaged: INDEX_CORRUPT that SQLite reported (a statement that met a
 * malformed page, quick_check), as against one note's stored text that no longer matches its
 * hash (`DocumentReader.check`), which leaves the rest of the file sound. A server that learns
 * the first leaves; the second fails only the call that served the note.
 */
export function isFileDamage(error: unknown): error is QmdError {
  return isQmdError(error) && error.code === 'INDEX_CORRUPT' && sqliteCode(error.cause) !== undefined;
}

function fileSize(file: string): number {
  try {
    return fs.statSync(file).size;
  } catch {
    return 0;
  }
}
