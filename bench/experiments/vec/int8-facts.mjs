/**
 * Facts about sqlite-vec 0.1.9's int8 support that `src/store/vectors/vectors.ts` relies on
 * (docs/design.md §5). `node bench/experiments/vec/int8-facts.mjs` (Node ≥ 22).
 * - what `vec_quantize_int8(v, 'unit')` maps values to, and that no other scale is accepted;
 * - that an int8 cosine KNN ignores each vector's scale (so a scale per vector is free);
 * - a partition key filtered by `IN (json_each)` with a metadata range in the same KNN;
 * - deleting a missing rowid, and loading the extension twice into one connection.
 */
import { createRequire } from 'node:module';
import { DatabaseSync } from 'node:sqlite';

const db = new DatabaseSync(':memory:', { allowExtension: true });
db.loadExtension(createRequire(import.meta.url)('sqlite-vec').getLoadablePath());
const f = (a) => Buffer.from(Float32Array.from(a).buffer);
const r = db
  .prepare("SELECT vec_to_json(vec_quantize_int8(vec_f32(?), 'unit')) AS j")
  .get(f([-1, -0.5, -0.01, 0, 0.003, 0.01, 0.036, 0.1, 0.5, 1, 1.5]));
console.log('unit', r.j);
for (const opt of ["'unit'", "'range'", "json('[-0.2,0.2]')"]) {
  try {
    console.log(
      opt,
      db.prepare(`SELECT vec_to_json(vec_quantize_int8(vec_f32(?), ${opt})) AS j`).get(f([0.1, -0.1])).j,
    );
  } catch (e) {
    console.log(opt, 'ERR', e.message);
  }
}
// int8 cosine distance ignores global scale?
db.exec('CREATE VIRTUAL TABLE t USING vec0(c int8[4] distance_metric=cosine)');
const i8 = (a) => Buffer.from(Int8Array.from(a).buffer);
db.prepare('INSERT INTO t(rowid, c) VALUES (?, vec_int8(?))').run(1n, i8([10, 20, 30, 40]));
db.prepare('INSERT INTO t(rowid, c) VALUES (?, vec_int8(?))').run(2n, i8([100, -20, 3, 4]));
console.log(db.prepare('SELECT rowid, distance FROM t WHERE c MATCH vec_int8(?) AND k = 2').all(i8([1, 2, 3, 4])));
console.log(
  db.prepare('SELECT rowid, distance FROM t WHERE c MATCH vec_int8(?) AND k = 2').all(i8([100, 127, 127, 127])),
);
// metadata + partition + IN + range
db.exec(
  'CREATE VIRTUAL TABLE p USING vec0(collection TEXT PARTITION KEY, c int8[2] distance_metric=cosine, path TEXT)',
);
const ins = db.prepare('INSERT INTO p(rowid, collection, c, path) VALUES (?, ?, vec_int8(?), ?)');
ins.run(1n, 'a', i8([1, 0]), 'x/1.md');
ins.run(2n, 'b', i8([1, 1]), 'x/2.md');
ins.run(3n, 'c', i8([0, 1]), 'y/3.md');
ins.run(4n, 'a', i8([1, 2]), 'y/4.md');
console.log(
  db
    .prepare(
      'SELECT rowid, distance FROM p WHERE c MATCH vec_int8(?) AND k = 10 AND collection IN (SELECT value FROM json_each(?))',
    )
    .all(i8([1, 0]), '["a","c"]'),
);
try {
  console.log(
    db
      .prepare(
        "SELECT rowid FROM p WHERE c MATCH vec_int8(?) AND k = 10 AND collection IN ('a','c') AND path >= ? AND path < ?",
      )
      .all(i8([1, 0]), 'y/', 'y0'),
  );
} catch (e) {
  console.log('ERR', e.message);
}
try {
  console.log(
    db
      .prepare('SELECT rowid FROM p WHERE c MATCH vec_int8(?) AND k = 10 AND path >= ? AND path < ?')
      .all(i8([1, 0]), 'y/', 'y0'),
  );
} catch (e) {
  console.log('ERR', e.message);
}
try {
  db.prepare('DELETE FROM p WHERE rowid = ?').run(4n);
  console.log(
    db.prepare("SELECT rowid FROM p WHERE c MATCH vec_int8(?) AND k = 10 AND collection = 'a'").all(i8([1, 0])),
  );
} catch (e) {
  console.log('ERR', e.message);
}
try {
  db.loadExtension(createRequire(import.meta.url)('sqlite-vec').getLoadablePath());
  console.log('second load ok');
} catch (e) {
  console.log('second load', e.message);
}
db.exec('DROP TABLE t');
db.exec(
  'CREATE VIRTUAL TABLE t USING vec0(collection TEXT PARTITION KEY, c int8[2] distance_metric=cosine, path TEXT)',
);
try {
  db.prepare('DELETE FROM t WHERE rowid = ?').run(5n);
  console.log('delete missing ok');
} catch (e) {
  console.log('delete missing', e.message);
}
db.exec('BEGIN');
db.loadExtension(createRequire(import.meta.url)('sqlite-vec').getLoadablePath());
db.exec('COMMIT');
console.log('load in txn ok');
console.log(db.prepare('SELECT vec_version() v').get());
