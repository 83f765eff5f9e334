/**
 * src/store/sqlite.ts, the one module on the SQLite binding (better-sqlite3 13): its
 * transactions, first-column reads, binding of values, BLOBs, error names and the binding's
 * own rules, on real SQLite files, each fact the store rests on (docs/design.md §5) with a
 * test that fails if a binding (or a version of it) behaves otherwise.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fromWire, wireError } from '../../src/search/worker-wire.js';
import { loadSqliteVec, Sqlite, sqliteCode } from '../../src/store/sqlite.js';
import { fromSqliteError } from '../../src/store/sqlite-errors.js';
import { fromBlob, toBlob } from '../../src/store/vectors/vectors.js';
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

const SQLITE_TS = pathToFileURL(path.resolve('src/store/sqlite.ts')).href;

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
    expect(db.column<[], number>('SELECT k FROM t').all()).toEqual([1]);
    expect(db.value('SELECT typeof(?)', 1)).toBe('real');
    expect(db.value('SELECT typeof(?)', 1n)).toBe('integer');
    expect(db.value('SELECT typeof(?)', null)).toBe('null');
    expect(db.pragmaValue('journal_mode')).toBe('wal');
  });

  it('a typed statement binds named parameters from bare keys; a missing one throws, a `?1` does not bind by position', () => {
    const [db] = open as [Sqlite];
    db.prepare('INSERT INTO t VALUES (?, ?)').run(1, 'one');
    const byName = db.prepare<{ k: number }, { v: string }>('SELECT v FROM t WHERE k = @k');
    expect(byName.get({ k: 1 })).toEqual({ v: 'one' });
    expect(byName.all({ k: 2 })).toEqual([]);
    // What indexing.ts's named `@collection`/`@run` are for (node:sqlite bound both silently).
    expect(thrown(() => db.prepare<{ a: number }>('SELECT @a, @b').get({ a: 1 }))).toBeInstanceOf(RangeError);
    expect(thrown(() => db.prepare('SELECT ?1, ?2').get('x', 'y'))).toBeInstanceOf(RangeError);
  });

  it('BLOBs bind from a Buffer or a bare Uint8Array and come back as Uint8Array views fromBlob reads', () => {
    const [db] = open as [Sqlite];
    db.exec('CREATE TABLE b (id INTEGER PRIMARY KEY, v BLOB)');
    const vector = Float32Array.from([0.25, -1, 3.5, 1e-7]);
    const insert = db.prepare<[number, Uint8Array]>('INSERT INTO b VALUES (?, ?)');
    insert.run(1, toBlob(vector));
    insert.run(2, new Uint8Array(vector.buffer.slice(0)));
    expect(db.column<[], string>('SELECT typeof(v) FROM b ORDER BY id').all()).toEqual(['blob', 'blob']);
    for (const blob of db.column<[], Uint8Array>('SELECT v FROM b ORDER BY id').all()) {
      expect(blob).toBeInstanceOf(Uint8Array);
      expect(blob.byteLength).toBe(16);
      expect([...fromBlob(blob)]).toEqual([...vector]);
    }
  });

  it('sqlite-vec: a vec0 rowid bound as a number is refused, as a BigInt accepted (why vectors.ts binds BigInt)', () => {
    const db = connect({ allowExtension: true });
    loadSqliteVec(db);
    expect(db.value('SELECT vec_version()')).toBe('v0.1.9');
    db.exec('CREATE VIRTUAL TABLE v USING vec0(e float[2])');
    const insert = db.prepare<[number | bigint, Uint8Array]>('INSERT INTO v (rowid, e) VALUES (?, ?)');
    const refused = thrown(() => insert.run(1, toBlob(Float32Array.from([1, 0]))));
    expect(sqliteCode(refused)).toBe('SQLITE_ERROR');
    expect((refused as Error).message).toMatch(/Only integers are allows for primary key values/);
    expect(insert.run(1n, toBlob(Float32Array.from([1, 0]))).changes).toBe(1);
    expect(
      db
        .column<[Uint8Array, number], number>('SELECT rowid FROM v WHERE e MATCH ? AND k = ?')
        .all(toBlob(Float32Array.from([1, 0])), 1),
    ).toEqual([1]);
  });

  it('loadExtension needs allowExtension', () => {
    const [db] = open as [Sqlite];
    expect(() => loadSqliteVec(db)).toThrow(/allowExtension/);
  });

  it('close() twice is a no-op; a closed connection says so', () => {
    const db = connect();
    db.close();
    db.close();
    expect(db.isOpen).toBe(false);
    expect(db.inTransaction).toBe(false);
  });
});

describe('the binding: no write while a read is unfinished', () => {
  // better-sqlite3 keeps the connection busy while an iterate() is open (node:sqlite did not):
  // so indexing.ts and vectors.ts read a page with all(), then write it.
  it('refuses run() and exec() during an iterate(), allows reads; a finished or returned iterator frees it', () => {
    const [db] = open as [Sqlite];
    const insert = db.prepare<[number, string]>('INSERT INTO t VALUES (?, ?)');
    insert.run(1, 'one');
    insert.run(2, 'two');
    const busy: unknown[] = [];
    for (const row of db.prepare<[], { k: number }>('SELECT k FROM t ORDER BY k').iterate()) {
      busy.push(thrown(() => insert.run(row.k + 10, 'copy')));
      busy.push(thrown(() => db.exec('DELETE FROM t WHERE k = 99')));
      expect(db.column<[number], string>('SELECT v FROM t WHERE k = ?').get(row.k)).toBeDefined();
    }
    expect(busy).toHaveLength(4);
    for (const error of busy)
      expect((error as Error).message).toBe('This database connection is busy executing a query');
    // A for…of that throws returns its iterator: the connection is free again.
    thrown(() => {
      for (const _ of db.prepare('SELECT k FROM t').iterate()) throw new Error('stop');
    });
    insert.run(3, 'three');
    expect(keys(db)).toEqual([1, 2, 3]);
  });

  it('close() throws while an iterator is unfinished, and closes once it returns', () => {
    const db = connect();
    db.exec("INSERT INTO t VALUES (1, 'one'), (2, 'two')");
    const iterator = db.prepare('SELECT k FROM t').iterate();
    iterator.next();
    expect((thrown(() => db.close()) as Error).message).toBe('This database connection is busy executing a query');
    expect(db.isOpen).toBe(true);
    iterator.return?.();
    db.close();
    expect(db.isOpen).toBe(false);
  });
});

describe('read-only connections and the WAL files', () => {
  // Why database.ts opens a read-only store read-write with query_only (docs/design.md §5).
  const walFiles = () => ['-wal', '-shm'].filter((suffix) => fs.existsSync(path.join(box.dir, `db.sqlite${suffix}`)));

  it('query_only refuses writes, and its close, the last, checkpoints and removes -wal and -shm', () => {
    const [db] = open as [Sqlite];
    db.prepare('INSERT INTO t VALUES (?, ?)').run(1, 'one');
    db.close();
    const reader = connect();
    reader.pragma('query_only = ON');
    expect(sqliteCode(thrown(() => reader.exec("INSERT INTO t VALUES (2, 'two')")))).toBe('SQLITE_READONLY');
    expect(keys(reader)).toEqual([1]);
    expect(walFiles()).toEqual(['-wal', '-shm']);
    reader.close();
    expect(walFiles()).toEqual([]);
  });

  it('readOnly refuses writes, and when it closes last it leaves -wal and -shm behind', () => {
    const [db] = open as [Sqlite];
    db.prepare('INSERT INTO t VALUES (?, ?)').run(1, 'one');
    const reader = connect({ readOnly: true });
    db.close();
    expect(sqliteCode(thrown(() => reader.exec("INSERT INTO t VALUES (2, 'two')")))).toBe('SQLITE_READONLY');
    expect(keys(reader)).toEqual([1]);
    reader.close();
    expect(walFiles()).toEqual(['-wal', '-shm']);
  });
});

describe('sqliteCode', () => {
  it('names SQLite errors as SQLite does, extended where it has a name', () => {
    const [db] = open as [Sqlite];
    db.prepare('INSERT INTO t VALUES (?, ?)').run(1, 'one');
    expect(sqliteCode(thrown(() => db.prepare('INSERT INTO t VALUES (?, ?)').run(1, 'again')))).toBe(
      'SQLITE_CONSTRAINT_PRIMARYKEY',
    );
    expect(sqliteCode(thrown(() => db.exec('SELEC 1')))).toBe('SQLITE_ERROR');
    db.pragma('query_only = ON');
    expect(sqliteCode(thrown(() => db.exec("INSERT INTO t VALUES (2, 'two')")))).toBe('SQLITE_READONLY');
    expect(sqliteCode(new Error('not SQLite'))).toBeUndefined();
    expect(sqliteCode(Object.assign(new Error('look-alike'), { code: 'SQLITE_BUSY' }))).toBeUndefined();
    expect(sqliteCode(thrown(() => new Sqlite(path.join(box.dir, 'db.sqlite', 'under-a-file'))))).toBe(
      'SQLITE_CANTOPEN',
    );
  });

  it('a missing directory is SQLITE_CANTOPEN too (better-sqlite3 says it with a TypeError of its own)', () => {
    const error = thrown(() => new Sqlite(path.join(box.dir, 'no', 'such', 'dir', 'db.sqlite')));
    expect(sqliteCode(error)).toBe('SQLITE_CANTOPEN');
    expect(fromSqliteError(error, path.join(box.dir, 'no', 'such', 'dir', 'db.sqlite'), 5000)).toMatchObject({
      code: 'INDEX_READ_ONLY',
    });
  });

  it('a file that is not SQLite opens, and its first statement is SQLITE_NOTADB', () => {
    const file = path.join(box.dir, 'notes.txt');
    fs.writeFileSync(file, 'this is not a database, just text\n'.repeat(200));
    const db = new Sqlite(file, { readOnly: true });
    open.push(db);
    expect(sqliteCode(thrown(() => db.value('SELECT count(*) FROM sqlite_schema')))).toBe('SQLITE_NOTADB');
    expect(
      fromSqliteError(
        thrown(() => db.value('SELECT 1 FROM sqlite_schema')),
        file,
        5000,
      ),
    ).toMatchObject({
      code: 'INDEX_CORRUPT',
    });
  });

  it('a second writer waits the busy timeout, then SQLITE_BUSY; a reader is not blocked', () => {
    const [db] = open as [Sqlite];
    const other = connect({ timeoutMs: 150 });
    db.exec('BEGIN IMMEDIATE');
    db.prepare('INSERT INTO t VALUES (?, ?)').run(1, 'one');
    const started = performance.now();
    const error = thrown(() => other.exec('BEGIN IMMEDIATE'));
    const waited = performance.now() - started;
    expect(sqliteCode(error)).toBe('SQLITE_BUSY');
    // At least the timeout (a lower bound: a busy machine only makes it longer).
    expect(waited).toBeGreaterThanOrEqual(140);
    expect(keys(other)).toEqual([]);
    db.exec('COMMIT');
    expect(keys(other)).toEqual([1]);
  });

  it('crosses from the query worker by name: the error rebuilt on the main thread maps as the original', () => {
    const [db] = open as [Sqlite];
    const original = thrown(() => db.exec('SELEC 1'));
    const wire = structuredClone(wireError(original));
    expect(wire).toEqual({ message: (original as Error).message, sqlite: 'SQLITE_ERROR' });
    expect(sqliteCode(fromWire(wire))).toBe('SQLITE_ERROR');
    const busy = fromWire({ message: 'database is locked', sqlite: 'SQLITE_BUSY' });
    expect(fromSqliteError(busy, 'index.sqlite', 5000)).toMatchObject({ code: 'INDEX_LOCKED' });
    expect(sqliteCode(fromWire({ message: 'plain' }))).toBeUndefined();
  });
});

describe('loading better-sqlite3', () => {
  // Its native addon segfaults on Node 20 as it loads: nothing may load it before the Node check
  // (test/e2e/old-node.test.ts), and a command that never opens the index does not load it.
  it('loads on the first open, not on import, and says nothing on stderr', async () => {
    const script = [
      "import { createRequire } from 'node:module';",
      "const loaded = () => Object.keys(createRequire(import.meta.url).cache).some((k) => k.includes('/better-sqlite3/'));",
      `const { Sqlite } = await import(${JSON.stringify(SQLITE_TS)});`,
      'const before = loaded();',
      "new Sqlite(':memory:').close();",
      'console.log(JSON.stringify({ before, after: loaded() }));',
    ].join('\n');
    const child = spawnProcess(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script]);
    try {
      expect(await waitForExit(child)).toEqual({ code: 0, signal: null });
      await child.closed;
      expect(JSON.parse(child.stdout())).toEqual({ before: false, after: true });
      expect(child.stderr()).toBe('');
    } finally {
      child.kill();
    }
  });
});

describe('a read-only connection in a worker thread', () => {
  // What the query worker does (query-worker.ts): its own read-only connection, terminated when
  // a call is aborted. terminate() cannot interrupt SQLite: the thread ends when the statement
  // returns. The process, the index and the main connection must all survive it.
  it('terminated mid-statement: the thread ends after the statement, the process and the index are unharmed', async () => {
    const index = path.join(box.dir, 'worker.sqlite');
    const workerScript = path.join(box.dir, 'worker.mjs');
    fs.writeFileSync(
      workerScript,
      [
        "import { parentPort, workerData } from 'node:worker_threads';",
        `const { Sqlite } = await import(${JSON.stringify(SQLITE_TS)});`,
        'const db = new Sqlite(workerData, { readOnly: true });',
        "parentPort.postMessage({ rows: db.value('SELECT count(*) FROM t') });",
        // Statements of a few hundred ms back to back, almost no JS between them: terminate()
        // lands inside one of them (it cannot be interrupted), and the thread ends after it.
        'for (;;) db.value("WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 300000) SELECT count(*) FROM c");',
      ].join('\n'),
    );
    const script = [
      "import { existsSync } from 'node:fs';",
      "import { Worker } from 'node:worker_threads';",
      `const { Sqlite } = await import(${JSON.stringify(SQLITE_TS)});`,
      `const index = ${JSON.stringify(index)};`,
      'const db = new Sqlite(index);',
      "db.pragma('journal_mode = WAL');",
      "db.exec('CREATE TABLE t (k INTEGER PRIMARY KEY); INSERT INTO t VALUES (1), (2)');",
      // Its own execArgv: the parent's --input-type would refuse a worker file.
      `const worker = new Worker(${JSON.stringify(workerScript)}, { workerData: index, execArgv: ['--import', 'tsx'] });`,
      'const first = await new Promise((resolve, reject) => { worker.once("message", resolve); worker.once("error", reject); });',
      'const exitCode = await worker.terminate();',
      "db.exec('INSERT INTO t VALUES (3)');",
      "const rows = db.value('SELECT count(*) FROM t');",
      'db.close();',
      "console.log(JSON.stringify({ first, exitCode, rows, wal: existsSync(index + '-wal'), shm: existsSync(index + '-shm') }));",
    ].join('\n');
    const child = spawnProcess(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script]);
    try {
      expect(await waitForExit(child, 60_000)).toEqual({ code: 0, signal: null });
      await child.closed;
      expect(child.stderr()).toBe('');
      expect(JSON.parse(child.stdout())).toEqual({
        first: { rows: 2 },
        exitCode: 1,
        rows: 3,
        wal: false,
        shm: false,
      });
    } finally {
      child.kill();
    }
  });
});
