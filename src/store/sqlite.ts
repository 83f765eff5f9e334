import { createRequire } from 'node:module';
import type * as NodeSqlite from 'node:sqlite';

/*
 * The one module that talks to SQLite: Node's built-in `node:sqlite` (DatabaseSync), no native
 * addon of our own (docs/design.md §5 says why, and what was measured). Everything else in the
 * store uses `Sqlite`, its typed statements and `sqliteCode`.
 */

/**
 * Loads `node:sqlite` without its ExperimentalWarning. Node 22 emits "SQLite is an experimental
 * feature" (on stderr) the first time the module loads, in every command; it is not something
 * a qmd user can act on, and MCP clients show a server's stderr as its log. Only that warning
 * is dropped, only while the module loads; every other warning still reaches stderr.
 */
function loadNodeSqlite(): typeof NodeSqlite {
  const emitWarning = process.emitWarning;
  process.emitWarning = function (this: unknown, warning: string | Error, ...rest: unknown[]) {
    const text = typeof warning === 'string' ? warning : warning.message;
    if (text.startsWith('SQLite is an experimental feature')) return;
    return (emitWarning as (...args: unknown[]) => void).call(this, warning, ...rest);
  } as typeof process.emitWarning;
  try {
    return process.getBuiltinModule('node:sqlite') as typeof NodeSqlite;
  } finally {
    process.emitWarning = emitWarning;
  }
}

const { DatabaseSync } = loadNodeSqlite();

/** What a statement binds: node:sqlite binds a JS number as REAL, a BigInt as INTEGER. */
export type SqlValue = string | number | bigint | null | Uint8Array;
type Params = readonly SqlValue[] | Readonly<Record<string, SqlValue | undefined>>;
type Args<P extends Params> = P extends readonly SqlValue[] ? P : [P];

export interface RunResult {
  changes: number;
  lastInsertRowid: number;
}

/**
 * A prepared statement with the types of its parameters and rows. It is node:sqlite's
 * StatementSync itself, typed: rows come back as objects with a null prototype, BLOBs as
 * Uint8Array, INTEGERs as numbers (a value beyond 2^53 throws ERR_OUT_OF_RANGE).
 */
export interface Statement<P extends Params = SqlValue[], R = unknown> {
  get(...params: Args<P>): R | undefined;
  all(...params: Args<P>): R[];
  iterate(...params: Args<P>): IterableIterator<R>;
  run(...params: Args<P>): RunResult;
}

/** A statement that returns its first column only (better-sqlite3's `pluck()`). */
export class Column<P extends Params = SqlValue[], V = unknown> {
  readonly #statement: NodeSqlite.StatementSync;

  constructor(statement: NodeSqlite.StatementSync) {
    statement.setReturnArrays(true);
    this.#statement = statement;
  }

  get(...params: Args<P>): V | undefined {
    const row = this.#statement.get(...(params as SqlValue[])) as unknown as V[] | undefined;
    return row?.[0];
  }

  all(...params: Args<P>): V[] {
    return (this.#statement.all(...(params as SqlValue[])) as unknown as V[][]).map((row) => row[0] as V);
  }
}

export interface OpenOptions {
  readOnly?: boolean;
  /** SQLite's busy timeout: how long a statement waits for another connection's lock (5000 ms unless given). */
  timeoutMs?: number;
  /** Whether `loadExtension` may be used (sqlite-vec). */
  allowExtension?: boolean;
}

/** A connection. Errors are node:sqlite's (`sqliteCode` names them). */
export class Sqlite {
  readonly #db: NodeSqlite.DatabaseSync;
  #savepoints = 0;

  constructor(file: string, options: OpenOptions = {}) {
    this.#db = new DatabaseSync(file, {
      readOnly: options.readOnly ?? false,
      timeout: options.timeoutMs ?? 5000,
      allowExtension: options.allowExtension ?? false,
    });
  }

  get isOpen(): boolean {
    return this.#db.isOpen;
  }

  get inTransaction(): boolean {
    return this.#db.isOpen && this.#db.isTransaction;
  }

  prepare<P extends Params = SqlValue[], R = unknown>(sql: string): Statement<P, R> {
    return this.#db.prepare(sql) as unknown as Statement<P, R>;
  }

  column<P extends Params = SqlValue[], V = unknown>(sql: string): Column<P, V> {
    return new Column<P, V>(this.#db.prepare(sql));
  }

  /** The first column of the first row of `sql`, prepared and dropped (for one-off reads). */
  value<V = unknown>(sql: string, ...params: SqlValue[]): V | undefined {
    return new Column<SqlValue[], V>(this.#db.prepare(sql)).get(...params);
  }

  exec(sql: string): void {
    this.#db.exec(sql);
  }

  /** `PRAGMA <text>`, for its effect (`journal_mode = WAL`, `wal_checkpoint(TRUNCATE)`…). */
  pragma(text: string): void {
    this.#db.exec(`PRAGMA ${text}`);
  }

  /** The value a `PRAGMA <name>` answers (its first column of its first row). */
  pragmaValue<V = unknown>(name: string): V | undefined {
    return this.value<V>(`PRAGMA ${name}`);
  }

  /**
   * Runs `work` in a `BEGIN IMMEDIATE` transaction (the write lock taken up front, so it never
   * has to be upgraded mid-way: in WAL that upgrade fails with SQLITE_BUSY without waiting),
   * committed when it returns, rolled back when it throws. Inside another transaction it runs
   * in a savepoint instead, so a nested failure undoes only its own part. `work` must be
   * synchronous: a transaction left open across an `await` would hold the lock for anyone.
   */
  transaction<T>(work: () => T): T {
    const nested = this.#db.isTransaction;
    const savepoint = `qmd_${++this.#savepoints}`;
    this.#db.exec(nested ? `SAVEPOINT ${savepoint}` : 'BEGIN IMMEDIATE');
    let result: T;
    try {
      result = work();
      if (result instanceof Promise) throw new TypeError('A transaction function must not return a promise');
    } catch (error) {
      if (this.#db.isOpen && this.#db.isTransaction) {
        this.#db.exec(nested ? `ROLLBACK TO ${savepoint}; RELEASE ${savepoint}` : 'ROLLBACK');
      }
      throw error;
    } finally {
      this.#savepoints--;
    }
    this.#db.exec(nested ? `RELEASE ${savepoint}` : 'COMMIT');
    return result;
  }

  /** Loads a SQLite extension; the connection must have been opened with `allowExtension`. */
  loadExtension(file: string): void {
    this.#db.loadExtension(file);
  }

  /** Closes; statements prepared on it are finalized with it. Closing twice is a no-op. */
  close(): void {
    if (this.#db.isOpen) this.#db.close();
  }
}

/**
 * Loads sqlite-vec into `db`. Required, not imported: a missing or broken package must not
 * stop the store loading (the caller falls back to a scan).
 */
export function loadSqliteVec(db: Sqlite): void {
  const sqliteVec = createRequire(import.meta.url)('sqlite-vec') as { getLoadablePath(): string };
  db.loadExtension(sqliteVec.getLoadablePath());
}

/*
 * node:sqlite throws an Error with `code: 'ERR_SQLITE_ERROR'`, SQLite's extended result code
 * as a number in `errcode` and its text in `errstr`. qmd names them as SQLite does (and as
 * better-sqlite3 did): the primary code's name, with the extended name when it has one here.
 */
const PRIMARY: Readonly<Record<number, string>> = {
  1: 'SQLITE_ERROR',
  2: 'SQLITE_INTERNAL',
  3: 'SQLITE_PERM',
  4: 'SQLITE_ABORT',
  5: 'SQLITE_BUSY',
  6: 'SQLITE_LOCKED',
  7: 'SQLITE_NOMEM',
  8: 'SQLITE_READONLY',
  9: 'SQLITE_INTERRUPT',
  10: 'SQLITE_IOERR',
  11: 'SQLITE_CORRUPT',
  12: 'SQLITE_NOTFOUND',
  13: 'SQLITE_FULL',
  14: 'SQLITE_CANTOPEN',
  15: 'SQLITE_PROTOCOL',
  16: 'SQLITE_EMPTY',
  17: 'SQLITE_SCHEMA',
  18: 'SQLITE_TOOBIG',
  19: 'SQLITE_CONSTRAINT',
  20: 'SQLITE_MISMATCH',
  21: 'SQLITE_MISUSE',
  22: 'SQLITE_NOLFS',
  23: 'SQLITE_AUTH',
  24: 'SQLITE_FORMAT',
  25: 'SQLITE_RANGE',
  26: 'SQLITE_NOTADB',
  27: 'SQLITE_NOTICE',
  28: 'SQLITE_WARNING',
};

/** The extended codes a qmd index meets (sqlite3.h), by their number. */
const EXTENDED: Readonly<Record<number, string>> = {
  261: 'SQLITE_BUSY_RECOVERY',
  517: 'SQLITE_BUSY_SNAPSHOT',
  773: 'SQLITE_BUSY_TIMEOUT',
  262: 'SQLITE_LOCKED_SHAREDCACHE',
  264: 'SQLITE_READONLY_RECOVERY',
  520: 'SQLITE_READONLY_CANTLOCK',
  776: 'SQLITE_READONLY_ROLLBACK',
  1032: 'SQLITE_READONLY_DBMOVED',
  1288: 'SQLITE_READONLY_CANTINIT',
  1544: 'SQLITE_READONLY_DIRECTORY',
  266: 'SQLITE_IOERR_READ',
  522: 'SQLITE_IOERR_SHORT_READ',
  778: 'SQLITE_IOERR_WRITE',
  1034: 'SQLITE_IOERR_FSYNC',
  4618: 'SQLITE_IOERR_SHMOPEN',
  4874: 'SQLITE_IOERR_SHMSIZE',
  267: 'SQLITE_CORRUPT_VTAB',
  779: 'SQLITE_CORRUPT_INDEX',
  270: 'SQLITE_CANTOPEN_NOTEMPDIR',
  526: 'SQLITE_CANTOPEN_ISDIR',
  782: 'SQLITE_CANTOPEN_FULLPATH',
  275: 'SQLITE_CONSTRAINT_CHECK',
  787: 'SQLITE_CONSTRAINT_FOREIGNKEY',
  1299: 'SQLITE_CONSTRAINT_NOTNULL',
  1555: 'SQLITE_CONSTRAINT_PRIMARYKEY',
  2067: 'SQLITE_CONSTRAINT_UNIQUE',
};

/** `SQLITE_BUSY`, `SQLITE_READONLY_DIRECTORY`…: the name of a node:sqlite error; undefined for any other error. */
export function sqliteCode(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const { code, errcode } = error as { code?: unknown; errcode?: unknown };
  if (code !== 'ERR_SQLITE_ERROR' || typeof errcode !== 'number') return undefined;
  return EXTENDED[errcode] ?? PRIMARY[errcode & 0xff] ?? `SQLITE_${errcode}`;
}
