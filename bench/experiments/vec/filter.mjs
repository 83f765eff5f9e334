/**
 * Collection filter inside sqlite-vec 0.1.9 (node:sqlite), against unfiltered KNN and against
 * today's filtered path (a scan of the BLOBs in JS).
 *
 *   node bench/experiments/vec/filter.mjs [--n 200000] [--dims 768] [--collections 4] [--k 100]
 *
 * One file per layout, the same vectors in each (clustered, seed 1; row i in collection
 * i mod C): `partition` (collection TEXT PARTITION KEY), `metadata` (collection TEXT),
 * `per-table` (one vec0 per collection), `plain` (no collection), and `blob` (a STRICT table
 * of BLOBs, what `embeddings.vector` is). Each query asks the k nearest in collection c1;
 * p50/p95 over the queries, after one warm-up pass.
 */
import { writeFileSync } from 'node:fs';
import { blob, bulk, bytesOf, clustered, fmt, loadAverage, open, quantile, time } from './lib.mjs';

const arg = (name, d) => {
  const i = process.argv.indexOf(name);
  return i === -1 ? d : Number(process.argv[i + 1]);
};
const N = arg('--n', 200_000);
const D = arg('--dims', 768);
const C = arg('--collections', 4);
const K = arg('--k', 100);
const Q = arg('--queries', 20);
const out = process.argv.includes('--out') ? process.argv[process.argv.indexOf('--out') + 1] : undefined;
const log = (s) => process.stderr.write(`[filter] ${s}\n`);
const loadStart = loadAverage();

const queries = [...clustered(Q, D, 99)];
const vectors = () => clustered(N, D, 1);
const coll = (i) => `c${i % C}`;
const results = [];

function layout(name, schema, insert, search) {
  log(`${name}: building ${N} × ${D}`);
  const { db, path } = open(`filter-${name}-${N}-${D}-${C}.sqlite`);
  db.exec(schema);
  const build = time(() => insert(db));
  db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
  const bytes = bytesOf(path);
  const measure = (filtered) => {
    for (const q of queries.slice(0, 3)) search(db, q, filtered);
    const times = queries.map((q) => time(() => search(db, q, filtered)).ms);
    return { p50: quantile(times, 0.5), p95: quantile(times, 0.95) };
  };
  const unfiltered = name === 'per-table' ? undefined : measure(false);
  const filtered = name === 'plain' ? undefined : measure(true);
  db.close();
  const row = { name, buildS: build.ms / 1000, bytesPerVector: bytes / N, unfiltered, filtered };
  results.push(row);
  log(JSON.stringify(row));
}

const knn = (db, sql, q, ...params) => db.prepare(sql).all(blob(q), ...params);

layout(
  'plain',
  `CREATE VIRTUAL TABLE v USING vec0(embedding float[${D}] distance_metric=cosine)`,
  (db) =>
    bulk(
      db,
      'INSERT INTO v(rowid, embedding) VALUES (?, ?)',
      (function* () {
        let i = 0;
        for (const v of vectors()) {
          yield [BigInt(++i), blob(v)];
        }
      })(),
    ),
  (db, q) => knn(db, `SELECT rowid, distance FROM v WHERE embedding MATCH ? AND k = ${K}`, q),
);
layout(
  'partition',
  `CREATE VIRTUAL TABLE v USING vec0(collection TEXT PARTITION KEY, embedding float[${D}] distance_metric=cosine)`,
  (db) =>
    bulk(
      db,
      'INSERT INTO v(rowid, collection, embedding) VALUES (?, ?, ?)',
      (function* () {
        let i = 0;
        for (const v of vectors()) {
          yield [BigInt(i + 1), coll(i), blob(v)];
          i++;
        }
      })(),
    ),
  (db, q, f) =>
    knn(
      db,
      `SELECT rowid, distance FROM v WHERE embedding MATCH ? AND k = ${K}${f ? " AND collection = 'c1'" : ''}`,
      q,
    ),
);
layout(
  'metadata',
  `CREATE VIRTUAL TABLE v USING vec0(embedding float[${D}] distance_metric=cosine, collection TEXT)`,
  (db) =>
    bulk(
      db,
      'INSERT INTO v(rowid, collection, embedding) VALUES (?, ?, ?)',
      (function* () {
        let i = 0;
        for (const v of vectors()) {
          yield [BigInt(i + 1), coll(i), blob(v)];
          i++;
        }
      })(),
    ),
  (db, q, f) =>
    knn(
      db,
      `SELECT rowid, distance FROM v WHERE embedding MATCH ? AND k = ${K}${f ? " AND collection = 'c1'" : ''}`,
      q,
    ),
);
layout(
  'per-table',
  Array.from(
    { length: C },
    (_, c) => `CREATE VIRTUAL TABLE v_c${c} USING vec0(embedding float[${D}] distance_metric=cosine);`,
  ).join('\n'),
  (db) => {
    const statements = Array.from({ length: C }, (_, c) =>
      db.prepare(`INSERT INTO v_c${c}(rowid, embedding) VALUES (?, ?)`),
    );
    db.exec('BEGIN');
    let i = 0;
    for (const v of vectors()) {
      statements[i % C].run(BigInt(i + 1), blob(v));
      if (++i % 5000 === 0) {
        db.exec('COMMIT');
        db.exec('BEGIN');
      }
    }
    db.exec('COMMIT');
  },
  (db, q) => knn(db, `SELECT rowid, distance FROM v_c1 WHERE embedding MATCH ? AND k = ${K}`, q),
);
layout(
  'blob',
  'CREATE TABLE v (id INTEGER PRIMARY KEY, collection TEXT NOT NULL, vector BLOB NOT NULL) STRICT; CREATE INDEX v_by_collection ON v(collection)',
  (db) =>
    bulk(
      db,
      'INSERT INTO v(id, collection, vector) VALUES (?, ?, ?)',
      (function* () {
        let i = 0;
        for (const v of vectors()) {
          yield [i + 1, coll(i), blob(v)];
          i++;
        }
      })(),
    ),
  (db, q, f) => {
    // Today's filtered path: every vector of the collection read and compared in JS.
    const found = [];
    for (const row of db.prepare(`SELECT id, vector FROM v${f ? " WHERE collection = 'c1'" : ''}`).iterate()) {
      const b = row.vector;
      const x = new Float32Array(b.buffer, b.byteOffset, b.byteLength / 4);
      let s = 0;
      for (let d = 0; d < D; d++) s += q[d] * x[d];
      found.push({ id: row.id, s });
    }
    found.sort((a, b) => b.s - a.s);
    return found.slice(0, K);
  },
);

const lines = [
  `## Collection filter: ${N.toLocaleString('en-US')} vectors × ${D} dims, ${C} collections (the filter keeps 1/${C}), k = ${K}`,
  '',
  `\`node bench/experiments/vec/filter.mjs --n ${N} --dims ${D} --collections ${C} --k ${K}\` on Node ${process.version}, sqlite-vec 0.1.9; load ${loadStart} at start, ${loadAverage()} at end; ${Q} queries.`,
  '',
  '| layout | build s | bytes/vector | unfiltered p50 ms | p95 | filtered p50 ms | p95 |',
  '|---|---|---|---|---|---|---|',
  ...results.map(
    (r) =>
      `| ${r.name} | ${r.buildS.toFixed(1)} | ${Math.round(r.bytesPerVector)} | ${r.unfiltered ? fmt(r.unfiltered.p50) : '—'} | ${r.unfiltered ? fmt(r.unfiltered.p95) : '—'} | ${r.filtered ? fmt(r.filtered.p50) : '—'} | ${r.filtered ? fmt(r.filtered.p95) : '—'} |`,
  ),
  '',
];
process.stdout.write(lines.join('\n'));
if (out) writeFileSync(out, lines.join('\n'), { flag: 'a' });
