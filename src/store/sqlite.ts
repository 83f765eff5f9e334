import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { type Binding, type NativeDatabase, type NativeStatement, requireBinding } from './binding/load.js';

/*
 * The one module that talks to SQLite: better-sqlite3 13 (its N-API prebuilds, one binary for
 * every Node; docs/design.md §5 says why, and what was measured). Everything else in the store
 * uses `Sqlite`, its typed statements and `sqliteCode`.
 */

let binding: Binding | undefined;

/**
 * better-sqlite3, loaded on the first open rather than on import: its native addon segfaults
 * on Node 20 as it loads (measured), and a command that never opens the index (`qmd --help`,
 * an unsupported Node's one line) pays nothing for it. From the sources the package loads
 * itself; the bundle holds its JS and loads only the addon (`binding/load-bundled.ts`).
 */
function loadBinding(): Binding {
  binding ??= requireBinding();
  return binding;
}

/** What a statement binds: better-sqlite3 binds a JS number as REAL, a BigInt as INTEGER. */
export type SqlValue = string | number | bigint | null | Uint8Array;
type Params = readonly SqlValue[] | Readonly<Record<string, SqlValue | undefined>>;
type Args<P extends Params> = P extends readonly SqlValue[] ? P : [P];

export interface RunResult {
  changes: number;
  lastInsertRowid: number;
}

/**
 * A prepared statement with the types of its parameters and rows. It is better-sqlite3's
 * Statement itself, typed: rows come back as plain objects, BLOBs as Buffers (a Uint8Array),
 * INTEGERs as numbers. `get`/`all`/`iterate` throw on a statement that returns no rows; while
 * an `iterate` is unfinished, `run` (on any statement of the connection) throws "This database
 * connection is busy executing a query": read a page with `all`, then write.
 */
export interface Statement<P extends Params = SqlValue[], R = unknown> {
  get(...params: Args<P>): R | undefined;
  all(...params: Args<P>): R[];
  iterate(...params: Args<P>): IterableIterator<R>;
  run(...params: Args<P>): RunResult;
}

/** A statement that returns its first column only (better-sqlite3's `pluck()`). */
export class Column<P extends Params = SqlValue[], V = unknown> {
  readonly #statement: NativeStatement;

  constructor(statement: NativeStatement) {
    this.#statement = statement.pluck();
  }

  get(...params: Args<P>): V | undefined {
    return this.#statement.get(...params) as V | undefined;
  }

  all(...params: Args<P>): V[] {
    return this.#statement.all(...params) as V[];
  }
}

export interface OpenOptions {
  readOnly?: boolean;
  /** SQLite's busy timeout: how long a statement waits for another connection's lock (5000 ms unless given). */
  timeoutMs?: number;
  /** Whether `loadExtension` may be used (sqlite-vec). */
  allowExtension?: boolean;
}

/** A connection. Errors are better-sqlite3's SqliteError (`sqliteCode` names them). */
export class Sqlite {
  readonly #db: NativeDatabase;
  readonly #allowExtension: boolean;
  #savepoints = 0;

  constructor(file: string, options: OpenOptions = {}) {
    const Database = loadBinding();
    // better-sqlite3 answers a missing directory with a TypeError of its own; SQLite (and so
    // the index's vocabulary, index-problems.ts) calls it SQLITE_CANTOPEN.
    if (file !== ':memory:' && file !== '' && !fs.existsSync(path.dirname(file))) {
      throw new Database.SqliteError('unable to open database file', 'SQLITE_CANTOPEN');
    }
    this.#db = new Database(file, { readonly: options.readOnly ?? false, timeout: options.timeoutMs ?? 5000 });
    this.#allowExtension = options.allowExtension ?? false;
  }

  get isOpen(): boolean {
    return this.#db.open;
  }

  get inTransaction(): boolean {
    return this.#db.open && this.#db.inTransaction;
  }

  prepare<P extends Params = SqlValue[], R = unknown>(sql: string): Statement<P, R> {
    return this.#db.prepare(sql) as unknown as Statement<P, R>;
  }

  column<P extends Params = SqlValue[], V = unknown>(sql: string): Column<P, V> {
    return new Column<P, V>(this.#db.prepare(sql));
  }

  /** The first column of the first row of `sql`, prepared and dropped (for one-off reads). */
  value<V = unknown>(sql: string, ...params: SqlValue[]): V | undefined {
    return this.#db
      .prepare(sql)
      .pluck()
      .get(...params) as V | undefined;
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
    const nested = this.#db.inTransaction;
    const savepoint = `qmd_${++this.#savepoints}`;
    this.#db.exec(nested ? `SAVEPOINT ${savepoint}` : 'BEGIN IMMEDIATE');
    let result: T;
    try {
      result = work();
      if (result instanceof Promise) throw new TypeError('A transaction function must not return a promise');
    } catch (error) {
      if (this.#db.open && this.#db.inTransaction) {
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
    if (!this.#allowExtension) throw new Error('This connection was not opened with allowExtension');
    this.#db.loadExtension(file);
  }

  /**
   * Closes; statements prepared on it cannot run afterwards. Closing twice is a no-op. Throws
   * while an `iterate` on it is unfinished (better-sqlite3 keeps the connection busy until the
   * iterator ends or returns; a `for…of` returns it even when its body throws).
   */
  close(): void {
    if (this.#db.open) this.#db.close();
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

/**
 * `SQLITE_BUSY`, `SQLITE_CONSTRAINT_PRIMARYKEY`…: the name of a SQLite error, as better-sqlite3
 * gives it (its `SqliteError.code`: the extended code's name where it has one, else the
 * primary's); undefined for any other error.
 */
export function sqliteCode(error: unknown): string | undefined {
  if (!(error instanceof Error) || error.name !== 'SqliteError') return undefined;
  const { code } = error as { code?: unknown };
  return typeof code === 'string' && code.startsWith('SQLITE_') ? code : undefined;
}

/**
 * A SQLite error again from its message and name (one that crossed from the query worker),
 * which `sqliteCode` names as it named the original. Builds it without loading the binding.
 */
export function sqliteError(message: string, code: string): Error {
  const error = new Error(message);
  Object.defineProperty(error, 'name', { value: 'SqliteError', writable: true, enumerable: false, configurable: true });
  return Object.assign(error, { code });
}
