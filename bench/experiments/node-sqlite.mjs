// What node:sqlite's DatabaseSync does where qmd depends on it (docs/design.md §5).
//   node bench/experiments/node-sqlite.mjs     # under each Node: prints one line per fact
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as os from 'node:os';
import * as path from 'node:path';

const warnings = [];
process.on('warning', (w) => warnings.push(`${w.name}: ${w.message}`));
const { DatabaseSync, StatementSync } = await import('node:sqlite');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'qmd-node-sqlite-'));
const file = path.join(dir, 'x.sqlite');
const fact = (name, value) =>
  console.log(
    `${name}: ${typeof value === 'string' ? value : JSON.stringify(value, (_k, v) => (typeof v === 'bigint' ? `${v}n` : v))}`,
  );
const err = (fn) => {
  try {
    fn();
    return 'no error';
  } catch (e) {
    return { ctor: e.constructor.name, code: e.code, errcode: e.errcode, errstr: e.errstr, message: e.message };
  }
};
fact('node', `${process.version} sqlite ${process.versions.sqlite}`);
const db = new DatabaseSync(file, { timeout: 200, allowExtension: true });
fact('features', {
  isOpen: 'isOpen' in db,
  isTransaction: 'isTransaction' in db,
  setReturnArrays: typeof StatementSync.prototype.setReturnArrays,
  setReadBigInts: typeof StatementSync.prototype.setReadBigInts,
  columns: typeof StatementSync.prototype.columns,
  iterate: typeof StatementSync.prototype.iterate,
  enableDefensive: typeof db.enableDefensive,
  backup: typeof (await import('node:sqlite')).backup,
});
db.exec('PRAGMA journal_mode = WAL');
db.exec('CREATE TABLE t (a ANY, b BLOB) STRICT');
db.prepare('INSERT INTO t VALUES (?, NULL)').run(1);
db.prepare('INSERT INTO t VALUES (?, NULL)').run(1.5);
db.prepare('INSERT INTO t VALUES (?, NULL)').run(2n);
db.prepare('INSERT INTO t VALUES (?, NULL)').run(1e15);
fact(
  'typeof bound JS numbers (1, 1.5, 2n, 1e15)',
  db
    .prepare('SELECT typeof(a) AS t FROM t')
    .all()
    .map((r) => r.t),
);
fact('busy_timeout from {timeout: 200}', db.prepare('PRAGMA busy_timeout').get());
const info = db.prepare('INSERT INTO t VALUES (3, ?)').run(Buffer.from([1, 2, 3]));
fact('run() result', info);
const blob = db.prepare('SELECT b FROM t WHERE b IS NOT NULL').get().b;
fact('BLOB read as', `${blob.constructor.name} byteOffset=${blob.byteOffset} len=${blob.length}`);
const big = db.prepare('SELECT 9007199254740993 AS x');
fact(
  'integer > 2^53 read by default',
  err(() => big.get()),
);
big.setReadBigInts(true);
fact('with setReadBigInts(true)', big.get());
fact(
  'named @x with bare key {x}',
  err(() => db.prepare('SELECT @x AS x').get({ x: 5 })),
);
fact('named @x result', db.prepare('SELECT @x AS x').get({ x: 5 }));
fact(
  'missing named parameter',
  err(() => db.prepare('SELECT @x AS x, @y AS y').get({ x: 5 })),
);
fact(
  'row prototype',
  Object.getPrototypeOf(db.prepare('SELECT 1 AS one').get()) === null ? 'null-prototype object' : 'Object',
);
fact('get() with no row', db.prepare('SELECT 1 WHERE 0').get());
fact('PRAGMA user_version via get', db.prepare('PRAGMA user_version').get());
fact(
  'exec BEGIN twice',
  err(() => {
    db.exec('BEGIN');
    db.exec('BEGIN');
  }),
);
db.exec('ROLLBACK');
fact(
  'syntax error',
  err(() => db.prepare('SELEC 1')),
);
fact(
  'constraint error',
  err(() => {
    db.exec('CREATE TABLE u (k INTEGER PRIMARY KEY)');
    db.exec('INSERT INTO u VALUES (1)');
    db.exec('INSERT INTO u VALUES (1)');
  }),
);

// Busy: a second writer past the busy timeout.
const other = new DatabaseSync(file, { timeout: 100 });
db.exec('BEGIN IMMEDIATE');
const t0 = performance.now();
fact(
  'second writer BEGIN IMMEDIATE',
  err(() => other.exec('BEGIN IMMEDIATE')),
);
fact('  waited ms', Math.round(performance.now() - t0));
fact(
  'second writer INSERT',
  err(() => other.exec('INSERT INTO t VALUES (9, NULL)')),
);
fact('reader during write', other.prepare('SELECT count(*) AS n FROM t').get());
db.exec('COMMIT');
other.exec('PRAGMA query_only = ON');
fact(
  'write under query_only',
  err(() => other.exec('INSERT INTO t VALUES (9, NULL)')),
);
other.close();
fact(
  'use after close',
  err(() => other.prepare('SELECT 1')),
);
fact(
  'close twice',
  err(() => other.close()),
);

// Not a database.
const junk = path.join(dir, 'junk.sqlite');
fs.writeFileSync(
  junk,
  'this is not sqlite, just some text long enough to fill a header........................................................',
);
fact(
  'open a non-database',
  err(() => new DatabaseSync(junk)),
);
fact(
  'first statement on a non-database',
  err(() => new DatabaseSync(junk).exec('PRAGMA user_version')),
);
fact(
  'open under a regular file',
  err(() => new DatabaseSync(path.join(junk, 'x.sqlite'))),
);
fact(
  'open in a missing directory',
  err(() => new DatabaseSync(path.join(dir, 'missing', 'x.sqlite'))),
);

// Extension.
const vec = createRequire(import.meta.url)('sqlite-vec');
db.loadExtension(vec.getLoadablePath());
fact('vec_version', db.prepare('SELECT vec_version() AS v').get());
db.exec('CREATE VIRTUAL TABLE v USING vec0(embedding float[2] distance_metric=cosine)');
const vector = Buffer.from(new Float32Array([1, 0]).buffer);
fact(
  'vec0 rowid bound as a JS number',
  err(() => db.prepare('INSERT INTO v (rowid, embedding) VALUES (?, ?)').run(7, vector)),
);
fact(
  'vec0 rowid bound as BigInt',
  err(() => db.prepare('INSERT INTO v (rowid, embedding) VALUES (?, ?)').run(8n, vector)),
);
fact(
  'vec0 rowid via CAST(? AS INTEGER)',
  err(() => db.prepare('INSERT INTO v (rowid, embedding) VALUES (CAST(? AS INTEGER), ?)').run(9, vector)),
);
fact(
  'vec0 k bound as a JS number',
  err(() => db.prepare('SELECT rowid, distance FROM v WHERE embedding MATCH ? AND k = ?').all(vector, 2)),
);
const noext = new DatabaseSync(':memory:');
fact(
  'loadExtension without allowExtension',
  err(() => noext.loadExtension(vec.getLoadablePath())),
);
noext.close();

// Checkpoint on close, read-only open, -shm.
db.close();
fact(
  'files after the last close',
  fs
    .readdirSync(dir)
    .filter((f) => f.startsWith('x.'))
    .sort(),
);
const w = new DatabaseSync(file);
w.exec('INSERT INTO t VALUES (10, NULL)');
fact(
  'files while a writer is open',
  fs
    .readdirSync(dir)
    .filter((f) => f.startsWith('x.'))
    .sort(),
);
w.close();
fs.chmodSync(dir, 0o555);
const ro = new DatabaseSync(file, { readOnly: true });
fact(
  'read-only open, directory read-only, no -shm: read',
  err(() => ro.prepare('SELECT count(*) AS n FROM t').get()),
);
ro.close();
fs.chmodSync(dir, 0o755);
const ro2 = new DatabaseSync(file, { readOnly: true });
fact('read-only open: read', ro2.prepare('SELECT count(*) AS n FROM t').get());
fact(
  'read-only open: wal_checkpoint(TRUNCATE)',
  err(() => ro2.exec('PRAGMA wal_checkpoint(TRUNCATE)')),
);
fact(
  'read-only open: write',
  err(() => ro2.exec('INSERT INTO t VALUES (11, NULL)')),
);
ro2.close();
fact(
  'files after read-only close',
  fs
    .readdirSync(dir)
    .filter((f) => f.startsWith('x.'))
    .sort(),
);
fact(
  'file: URL with ?immutable=1 (string)',
  err(() =>
    new DatabaseSync(`file:${file}?immutable=1`, { readOnly: true }).prepare('SELECT count(*) AS n FROM t').get(),
  ),
);
const fin = new DatabaseSync(':memory:');
const kept = fin.prepare('SELECT 1 AS one');
fin.close();
fact(
  'a statement used after its database closed',
  err(() => kept.get()),
);

// quick_check on a damaged file: how many rows, and how many lines in the first.
const damaged = path.join(dir, 'damaged.sqlite');
const dmg = new DatabaseSync(damaged);
dmg.exec('CREATE TABLE d (x TEXT); CREATE INDEX d_x ON d(x)');
const insert = dmg.prepare('INSERT INTO d VALUES (?)');
for (let i = 0; i < 2000; i++) insert.run(`row ${i} ${'filler '.repeat(20)}`);
dmg.close();
const size = fs.statSync(damaged).size;
const fd = fs.openSync(damaged, 'r+');
fs.writeSync(fd, Buffer.alloc(Math.floor(size / 2), 0x5a), 0, Math.floor(size / 2), Math.ceil(size / 2 / 4096) * 4096);
fs.closeSync(fd);
const rows = new DatabaseSync(damaged).prepare('PRAGMA quick_check').all();
fact('quick_check on a damaged file', {
  rows: rows.length,
  linesInFirst: String(rows[0]?.quick_check).split('\n').length,
  first: String(rows[0]?.quick_check).split('\n')[0],
});
fact('warnings', warnings);
fs.rmSync(dir, { recursive: true, force: true });
