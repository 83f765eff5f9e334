// What a SQLite binding does where qmd's store depends on it (docs/design.md §5, issue 35):
// the same probes against node:sqlite and better-sqlite3 (the repo's own node_modules), one
// line per fact, so the two can be diffed. Run under each Node:
//   node bench/experiments/sqlite-binding-facts.mjs --binding b13|node
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, openSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';

const repo = join(new URL('.', import.meta.url).pathname, '..', '..');
const requireRepo = createRequire(join(repo, 'package.json'));
const vecPath = requireRepo('sqlite-vec').getLoadablePath();
const binding = process.argv.includes('--binding') ? process.argv[process.argv.indexOf('--binding') + 1] : 'b13';
const dir = mkdtempSync(join(tmpdir(), 'sqlite-binding-facts-'));
const show = (v) =>
  typeof v === 'string'
    ? v
    : JSON.stringify(v, (_k, x) =>
        typeof x === 'bigint' ? `${x}n` : x instanceof Uint8Array ? `${x.constructor.name}(${x.length})` : x,
      );
const fact = (name, value) => console.log(`${name}: ${show(value)}`);
const shape = (fn) => {
  try {
    return { ok: fn() };
  } catch (e) {
    return { name: e.name, code: e.code, errcode: e.errcode, message: e.message };
  }
};

/** A connection with one interface over both bindings: what qmd's sqlite.ts needs. */
function open(file, { readOnly = false, timeout = 5000, extension = true } = {}) {
  if (binding === 'node') {
    const { DatabaseSync } = process.getBuiltinModule('node:sqlite');
    const db = new DatabaseSync(file, { readOnly, timeout, allowExtension: extension });
    return {
      raw: db,
      exec: (sql) => db.exec(sql),
      prepare: (sql) => db.prepare(sql),
      pluck: (sql) => {
        const s = db.prepare(sql);
        s.setReturnArrays(true);
        return { get: (...a) => s.get(...a)?.[0] };
      },
      load: () => db.loadExtension(vecPath),
      close: () => db.close(),
      get open() {
        return db.isOpen;
      },
      get inTransaction() {
        return db.isTransaction;
      },
    };
  }
  const Database = requireRepo('better-sqlite3');
  const db = new Database(file, { readonly: readOnly, timeout });
  return {
    raw: db,
    exec: (sql) => db.exec(sql),
    prepare: (sql) => db.prepare(sql),
    pluck: (sql) => db.prepare(sql).pluck(),
    load: () => db.loadExtension(vecPath),
    close: () => db.close(),
    get open() {
      return db.open;
    },
    get inTransaction() {
      return db.inTransaction;
    },
  };
}

fact('node', process.version);
fact(
  'binding',
  binding === 'node' ? 'node:sqlite' : `better-sqlite3 ${requireRepo('better-sqlite3/package.json').version}`,
);
const warn = spawnSync(
  process.execPath,
  [
    '-e',
    binding === 'node' ? "require('node:sqlite')" : `require(${JSON.stringify(requireRepo.resolve('better-sqlite3'))})`,
  ],
  { encoding: 'utf8' },
);
fact('stderr on load', warn.stderr.split('\n')[0] || '(none)');
let t0 = performance.now();
const file = join(dir, 'a.sqlite');
const db = open(file);
fact('first open ms (loads the binding)', Math.round(performance.now() - t0));
fact('sqlite', db.pluck('SELECT sqlite_version()').get());
db.load();
fact('vec', db.pluck('SELECT vec_version()').get());
fact(
  'load sqlite-vec twice',
  shape(() => db.load()),
);

// ---- compile options and the defaults qmd sets back ----
const options = db
  .prepare('PRAGMA compile_options')
  .all()
  .map((r) => Object.values(r)[0]);
fact('compile_options', options.join(' '));
for (const p of ['cache_size', 'recursive_triggers', 'foreign_keys', 'synchronous', 'journal_mode', 'busy_timeout'])
  fact(`default ${p}`, db.pluck(`PRAGMA ${p}`).get());
db.exec('PRAGMA cache_size = -16000; PRAGMA recursive_triggers = OFF');
fact('after set: cache_size, recursive_triggers', [
  db.pluck('PRAGMA cache_size').get(),
  db.pluck('PRAGMA recursive_triggers').get(),
]);

// ---- binding values ----
const typeOf = db.prepare('SELECT typeof(?) AS t, ? AS v');
fact('bind 1', typeOf.get(1, 1));
fact('bind 1.5', typeOf.get(1.5, 1.5));
fact('bind 1n', typeOf.get(1n, 1n));
fact(
  'bind 2n**63n',
  shape(() => typeOf.get(2n ** 63n, 2n ** 63n)),
);
fact(
  'bind true',
  shape(() => typeOf.get(true, true)),
);
fact(
  'bind undefined',
  shape(() => typeOf.get(undefined, undefined)),
);
fact(
  'bind Buffer',
  shape(() => typeOf.get(Buffer.from([1, 2]), 1).t),
);
fact(
  'bind Uint8Array',
  shape(() => typeOf.get(new Uint8Array([1, 2]), 1).t),
);
fact(
  'bind Float32Array',
  shape(() => typeOf.get(new Float32Array([1, 2]), 1).t),
);
const blobs = db.prepare('SELECT ? AS b').get(new Uint8Array([1, 2, 3]));
fact('BLOB read as', {
  type: blobs.b.constructor.name,
  isBuffer: Buffer.isBuffer(blobs.b),
  byteOffset: blobs.b.byteOffset,
  bufferBytes: blobs.b.buffer.byteLength,
});
const offsets = new Set();
for (let i = 0; i < 200; i++) offsets.add(db.prepare('SELECT randomblob(?) AS b').get(3 + (i % 40)).b.byteOffset % 4);
fact('BLOB byteOffset % 4 over 200 reads', [...offsets]);
fact('row prototype', Object.getPrototypeOf(db.prepare('SELECT 1 AS a').get()) === null ? 'null' : 'Object');
fact(
  'read 2**53+1',
  shape(() => db.prepare('SELECT 9007199254740993 AS v').get()),
);
fact(
  'named @x from {x}',
  shape(() => db.prepare('SELECT @x AS v').get({ x: 1 })),
);
fact(
  'named, key missing',
  shape(() => db.prepare('SELECT @x AS v, @y AS w').get({ x: 1 })),
);
fact(
  'named, key undefined',
  shape(() => db.prepare('SELECT @x AS v').get({ x: undefined })),
);
fact(
  'named, extra key',
  shape(() => db.prepare('SELECT @x AS v').get({ x: 1, z: 2 })),
);
fact(
  'get() on a statement without rows',
  shape(() => db.prepare('CREATE TABLE IF NOT EXISTS z(a)').get()),
);
fact(
  'run() on a SELECT',
  shape(() => db.prepare('SELECT 1').run()),
);
fact(
  'PRAGMA answering nothing, get()',
  shape(() => db.prepare('PRAGMA foreign_keys = ON').get()),
);

// ---- vec0: rowids, k, the 12-byte metadata ----
db.exec('CREATE VIRTUAL TABLE v USING vec0(e float[2], path TEXT)');
const vec = (x, y) => new Uint8Array(new Float32Array([x, y]).buffer);
fact(
  'vec0 rowid as JS number',
  shape(() => db.prepare('INSERT INTO v(rowid, e, path) VALUES (?, ?, ?)').run(1, vec(1, 0), 'a')),
);
fact(
  'vec0 rowid as BigInt',
  shape(() => db.prepare('INSERT INTO v(rowid, e, path) VALUES (?, ?, ?)').run(2n, vec(0, 1), 'b')),
);
db.prepare('INSERT INTO v(rowid, e, path) VALUES (?, ?, ?)').run(3n, vec(1, 1), '123456789012');
fact(
  'vec0 KNN, k as number, a 12-byte TEXT metadata value stored',
  shape(
    () =>
      db
        .prepare(
          "SELECT rowid, distance FROM v WHERE e MATCH ? AND k = ? AND path >= 'a' AND path < 'z' ORDER BY distance",
        )
        .all(vec(1, 0), 3).length,
  ),
);
db.exec('DELETE FROM v WHERE rowid = 3');
db.prepare('INSERT INTO v(rowid, e, path) VALUES (?, ?, ?)').run(3n, vec(1, 1), '123456789012\x01');
fact(
  'vec0 KNN, the 12-byte value stored with 0x01 appended',
  shape(() =>
    db
      .prepare("SELECT rowid FROM v WHERE e MATCH ? AND k = ? AND path >= 'a' AND path < 'z' ORDER BY distance")
      .all(vec(1, 0), 3)
      .map((r) => r.rowid),
  ),
);
fact(
  'CREATE INDEX on a vec0 shadow table (v_chunks)',
  shape(() => db.exec('CREATE INDEX v_chunks_by_rowids ON v_chunks(rowids)')),
);
db.exec('CREATE VIRTUAL TABLE f USING fts5(body)');
fact(
  'INSERT into an FTS5 shadow table (f_data)',
  shape(() => db.exec("INSERT INTO f_data VALUES (999, x'00')")),
);

// ---- transactions and savepoints ----
db.exec('CREATE TABLE t(id INTEGER PRIMARY KEY, b TEXT)');
db.exec('BEGIN IMMEDIATE');
fact('inTransaction inside BEGIN', db.inTransaction);
db.exec("INSERT INTO t(b) VALUES ('outer'); SAVEPOINT s1; INSERT INTO t(b) VALUES ('inner')");
db.exec('ROLLBACK TO s1; RELEASE s1; COMMIT');
fact(
  'savepoint rolled back, outer kept',
  db
    .prepare('SELECT b FROM t')
    .all()
    .map((r) => r.b),
);
fact('inTransaction after COMMIT', db.inTransaction);

// ---- writing while an iterator is open, and close() with one open ----
db.exec("INSERT INTO t(b) VALUES ('2'), ('3')");
const ins = db.prepare('INSERT INTO t(b) VALUES (?)');
fact(
  'run() on another statement while iterating',
  shape(() => {
    for (const r of db.prepare('SELECT id FROM t WHERE id <= 2').iterate()) ins.run(`copy ${r.id}`);
    return 'ok';
  }),
);
fact(
  'get() on another statement while iterating',
  shape(() => {
    for (const r of db.prepare('SELECT id FROM t').iterate()) db.prepare('SELECT b FROM t WHERE id = ?').get(r.id);
    return 'ok';
  }),
);
fact(
  'exec() while iterating',
  shape(() => {
    for (const _ of db.prepare('SELECT id FROM t').iterate()) db.exec('SELECT 1');
    return 'ok';
  }),
);
if (binding !== 'node') {
  db.raw.unsafeMode(true);
  fact(
    'unsafeMode(true): run() while iterating',
    shape(() => {
      for (const r of db.prepare('SELECT id FROM t WHERE id <= 2').iterate()) ins.run(`copy ${r.id}`);
      return 'ok';
    }),
  );
  fact(
    'unsafeMode(true): INSERT into an FTS5 shadow table',
    shape(() => db.exec("INSERT INTO f_data VALUES (998, x'00')")),
  );
  db.raw.unsafeMode(false);
}
const it = db.prepare('SELECT id FROM t').iterate();
it.next();
const keep = db.prepare('SELECT id FROM t');
fact(
  'close() with an open iterator',
  shape(() => db.close()),
);
fact('open after that close()', db.open);
fact(
  'iterator return() after that close()',
  shape(() => {
    it.return?.();
    return 'ok';
  }),
);
fact(
  'close() after the iterator returned',
  shape(() => db.close()),
);
fact(
  'statement after close',
  shape(() => keep.all()),
);
fact(
  'close() twice',
  shape(() => db.close()),
);

// ---- errors ----
const w = open(join(dir, 'busy.sqlite'));
w.exec('PRAGMA journal_mode = WAL; CREATE TABLE t(x); BEGIN IMMEDIATE; INSERT INTO t VALUES (1);');
const other = open(join(dir, 'busy.sqlite'), { timeout: 300 });
t0 = performance.now();
fact('SQLITE_BUSY (timeout 300)', {
  ...shape(() => other.exec('INSERT INTO t VALUES (2)')),
  waitedMs: Math.round(performance.now() - t0),
});
t0 = performance.now();
fact('BEGIN IMMEDIATE busy (timeout 300)', {
  ...shape(() => other.exec('BEGIN IMMEDIATE')),
  waitedMs: Math.round(performance.now() - t0),
});
fact(
  'reader during write (WAL)',
  shape(() => other.pluck('SELECT count(*) FROM t').get()),
);
w.exec('COMMIT');
w.close();
other.close();
fact('-wal/-shm after last read-write close', [
  existsSync(join(dir, 'busy.sqlite-wal')),
  existsSync(join(dir, 'busy.sqlite-shm')),
]);
const qo = open(join(dir, 'busy.sqlite'));
qo.exec('PRAGMA query_only = ON');
fact(
  'query_only write',
  shape(() => qo.exec('INSERT INTO t VALUES (3)')),
);
qo.close();
fact('-wal/-shm after a query_only close', [
  existsSync(join(dir, 'busy.sqlite-wal')),
  existsSync(join(dir, 'busy.sqlite-shm')),
]);
const ro = open(join(dir, 'busy.sqlite'), { readOnly: true });
fact(
  'readOnly open of a WAL file, read',
  shape(() => ro.pluck('SELECT count(*) FROM t').get()),
);
fact(
  'readOnly write',
  shape(() => ro.exec('INSERT INTO t VALUES (3)')),
);
ro.close();
fact('-wal/-shm after a readOnly last close', [
  existsSync(join(dir, 'busy.sqlite-wal')),
  existsSync(join(dir, 'busy.sqlite-shm')),
]);
const full = open(join(dir, 'full.sqlite'));
full.exec('PRAGMA max_page_count = 4; CREATE TABLE t(x);');
fact(
  'SQLITE_FULL',
  shape(() =>
    full.exec(
      'WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c WHERE i < 500) INSERT INTO t SELECT randomblob(1000) FROM c',
    ),
  ),
);
full.close();
fact(
  'SQLITE_CONSTRAINT_PRIMARYKEY',
  shape(() => {
    const c = open(':memory:');
    c.exec('CREATE TABLE p(k INTEGER PRIMARY KEY); INSERT INTO p VALUES (1)');
    return c.exec('INSERT INTO p VALUES (1)');
  }),
);
writeFileSync(join(dir, 'not.sqlite'), 'this is not a database, just text '.repeat(200));
fact(
  'not a database: open',
  shape(() => {
    open(join(dir, 'not.sqlite'), { extension: false });
    return 'opened';
  }),
);
fact(
  'not a database: first statement',
  shape(() => open(join(dir, 'not.sqlite')).prepare('SELECT * FROM sqlite_master').all()),
);
const corrupt = join(dir, 'corrupt.sqlite');
const c = open(corrupt);
c.exec(
  "CREATE TABLE t(x); CREATE INDEX tx ON t(x); WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM s WHERE i < 2000) INSERT INTO t SELECT printf('%0500d', i) FROM s;",
);
c.close();
const fd = openSync(corrupt, 'r+');
writeSync(fd, Buffer.alloc(4096, 0xff), 0, 4096, 4096 * 3);
fact(
  'SQLITE_CORRUPT',
  shape(() => open(corrupt).prepare('SELECT count(*), sum(length(x)) FROM t').get()),
);
fact(
  'quick_check on the damaged file',
  shape(() => open(corrupt).prepare('PRAGMA quick_check').all()),
);
writeFileSync(join(dir, 'plain'), 'x');
fact(
  'a path under a regular file',
  shape(() => open(join(dir, 'plain', 'under-a-file.sqlite'))),
);
fact(
  'a missing directory',
  shape(() => open(join(dir, 'no', 'such', 'dir.sqlite'))),
);

// ---- a read-only connection in a worker thread, terminated mid-statement ----
const wfile = join(dir, 'worker.sqlite');
const wdb = open(wfile);
wdb.exec('PRAGMA journal_mode = WAL; CREATE TABLE n(x)');
wdb.close();
const source = `
const { parentPort, workerData } = require('node:worker_threads');
const { binding, file, repo } = workerData;
let db;
if (binding === 'node') db = new (process.getBuiltinModule('node:sqlite').DatabaseSync)(file, { readOnly: true });
else db = new (require('node:module').createRequire(repo + '/package.json')('better-sqlite3'))(file, { readonly: true });
parentPort.postMessage('open');
// A statement that runs for a few seconds: terminate() lands while SQLite is inside it.
db.prepare('WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c WHERE i < 20000000) SELECT count(*) FROM c').get();
parentPort.postMessage('finished');
`;
const data = { workerData: { binding, file: wfile, repo }, eval: true };
let t = performance.now();
const alone = new Worker(source, data);
await new Promise((resolve) => alone.once('exit', resolve));
fact('the statement run to its end in a worker, ms', Math.round(performance.now() - t));
const worker = new Worker(source, data);
await new Promise((resolve) => worker.once('message', resolve));
await new Promise((resolve) => setTimeout(resolve, 200));
t = performance.now();
const code = await worker.terminate();
fact('worker terminated 200 ms into it: terminate() resolves after, ms', {
  exitCode: code,
  ms: Math.round(performance.now() - t),
});
rmSync(dir, { recursive: true, force: true });
fact('process', 'exits normally');
