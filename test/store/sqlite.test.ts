/**
 * src/store/sqlite.ts, the one module on node:sqlite: its transactions, first-column reads and
 * error names, on real SQLite files (docs/design.md §5 has what they rest on).
 */
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Sqlite, sqliteCode } from '../../src/store/sqlite.js';
import { spawnProcess, waitForExit } from '../support/spawn.js';
import { type Sandbox, sandbox } from './helpers.js';

let box: Sandbox;
let open: Sqlite[] = [];

function connect(options: ConstructorParameters<typeof Sqlite>[1] = {}): Sqlite {
  const db = new Sqlite(path.join(box.dir, 'db.sqlite'), options);
  open.push(db);
  return db;
}

function thrown(work: () => unknown): unknown {
  try {
    work();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}

beforeEach(() => {
  box = sandbox();
  const db = connect();
  db.pragma('journal_mode = WAL');
  db.exec('CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT NOT NULL)');
});

afterEach(() => {
  for (const db of open) db.close();
  open = [];
  box.cleanup();
});

const keys = (db: Sqlite) => db.column<[], number>('SELECT k FROM t ORDER BY k').all();

describe('Sqlite.transaction', () => {
  it('commits what it did, holding the write lock from its start (BEGIN IMMEDIATE)', () => {
    const [db] = open as [Sqlite];
    const other = connect({ timeoutMs: 0 });
    db.transaction(() => {
      expect(db.inTransaction).toBe(true);
      // Nothing written yet, and another writer is already shut out.
      expect(sqliteCode(thrown(() => other.exec('BEGIN IMMEDIATE')))).toBe('SQLITE_BUSY');
      db.prepare('INSERT INTO t VALUES (?, ?)').run(1, 'one');
    });
    expect(db.inTransaction).toBe(false);
    expect(keys(other)).toEqual([1]);
  });

  it('rolls everything back when its work throws, and rethrows', () => {
    const [db] = open as [Sqlite];
    const boom = new Error('boom');
    expect(
      thrown(() =>
        db.transaction(() => {
          db.prepare('INSERT INTO t VALUES (?, ?)').run(1, 'one');
          throw boom;
        }),
      ),
    ).toBe(boom);
    expect(db.inTransaction).toBe(false);
    expect(keys(db)).toEqual([]);
  });

  it('nested, undoes only its own part when it throws', () => {
    const [db] = open as [Sqlite];
    const result = db.transaction(() => {
      db.prepare('INSERT INTO t VALUES (?, ?)').run(1, 'outer');
      thrown(() =>
        db.transaction(() => {
          db.prepare('INSERT INTO t VALUES (?, ?)').run(2, 'inner');
          throw new Error('inner fails');
        }),
      );
      db.transaction(() => db.prepare('INSERT INTO t VALUES (?, ?)').run(3, 'inner kept'));
      return 'done';
    });
    expect(result).toBe('done');
    expect(keys(db)).toEqual([1, 3]);
  });

  it('refuses work that returns a promise, and leaves nothing behind', () => {
    const [db] = open as [Sqlite];
    const error = thrown(() =>
      db.transaction(() => {
        db.prepare('INSERT INTO t VALUES (?, ?)').run(1, 'one');
        return Promise.resolve();
      }),
    );
    expect(error).toBeInstanceOf(TypeError);
    expect(db.inTransaction).toBe(false);
    expect(keys(db)).toEqual([]);
  });
});

describe('reads', () => {
  it('column() and value() give the first column; numbers bind as REAL, BigInt as INTEGER', () => {
    const [db] = open as [Sqlite];
    db.prepare('INSERT INTO t VALUES (?, ?)').run(1, 'one');
    expect(db.column<[number], string>('SELECT v FROM t WHERE k = ?').get(1)).toBe('one');
    expect(db.column<[number], string>('SELECT v FROM t WHERE k = ?').get(2)).toBeUndefined();
    expect(db.value('SELECT typeof(?)', 1)).toBe('real');
    expect(db.value('SELECT typeof(?)', 1n)).toBe('integer');
    expect(db.pragmaValue('journal_mode')).toBe('wal');
  });

  it('close() twice is a no-op; a closed connection says so', () => {
    const db = connect();
    db.close();
    db.close();
    expect(db.isOpen).toBe(false);
    expect(db.inTransaction).toBe(false);
  });
});

describe('sqliteCode', () => {
  it("names node:sqlite's numeric codes as SQLite does, extended where known", () => {
    const [db] = open as [Sqlite];
    db.prepare('INSERT INTO t VALUES (?, ?)').run(1, 'one');
    expect(sqliteCode(thrown(() => db.prepare('INSERT INTO t VALUES (?, ?)').run(1, 'again')))).toBe(
      'SQLITE_CONSTRAINT_PRIMARYKEY',
    );
    expect(sqliteCode(thrown(() => db.exec('SELEC 1')))).toBe('SQLITE_ERROR');
    db.pragma('query_only = ON');
    expect(sqliteCode(thrown(() => db.exec("INSERT INTO t VALUES (2, 'two')")))).toBe('SQLITE_READONLY');
    expect(sqliteCode(new Error('not SQLite'))).toBeUndefined();
    expect(sqliteCode(thrown(() => new Sqlite(path.join(box.dir, 'db.sqlite', 'under-a-file'))))).toBe(
      'SQLITE_CANTOPEN',
    );
  });
});

describe('loading node:sqlite', () => {
  // Node 22 warns "SQLite is an experimental feature" when the module loads (24 does not): in a
  // child of its own, as `qmd` loads it, nothing of that reaches stderr; another warning does.
  it('drops only its ExperimentalWarning', async () => {
    const script = [
      "const { Sqlite } = await import('./src/store/sqlite.ts');",
      "new Sqlite(':memory:').close();",
      "process.emitWarning('still heard', 'ExperimentalWarning');",
    ].join(' ');
    const child = spawnProcess(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script]);
    try {
      expect(await waitForExit(child)).toEqual({ code: 0, signal: null });
      await child.closed;
      expect(child.stderr()).toContain('still heard');
      expect(child.stderr()).not.toContain('SQLite is an experimental feature');
      expect(child.stdout()).toBe('');
    } finally {
      child.kill();
    }
  });
});
