/**
 * Exact vector search against a coarse pass over a compact form (sqlite-vec 0.1.9's bit or
 * int8 vectors) plus an exact re-score of the best C candidates from the one float copy
 * (a STRICT table of BLOBs, what `embeddings.vector` is): latency, recall@10 against exact
 * search, and disk per vector.
 *
 *   node bench/experiments/vec/quant.mjs [--n 100000] [--dims 768] [--queries 50]
 *   node bench/experiments/vec/quant.mjs --index PATH [--queries 200]   (a qmd index's real vectors)
 *
 * Synthetic vectors are clustered (lib.mjs); with --index, the vectors are the index's
 * `embeddings.vector` and the queries are held-out vectors of it (not inserted). `bit-c` is the
 * sign of (vector − mean), the mean of the first 10,000 vectors: embeddings share a common
 * direction (the tiny model puts unrelated chunks at cosine 0.85–0.93), which plain sign bits
 * cannot see past.
 */
import { writeFileSync } from 'node:fs';
import { DatabaseSync } from 'node:sqlite';
import { blob, bytesOf, clustered, fmt, loadAverage, open, quantile, time } from './lib.mjs';

const argv = process.argv;
const arg = (name, d) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : d);
const INDEX = arg('--index', undefined);
const Q = Number(arg('--queries', INDEX ? 200 : 50));
const CANDIDATES = String(arg('--candidates', '40,100,200,400,1000')).split(',').map(Number);
const SKIP_EXACT_VEC0 = argv.includes('--no-vec0-exact');
const out = arg('--out', undefined);
const log = (s) => process.stderr.write(`[quant] ${s}\n`);
const loadStart = loadAverage();

let all;
let D;
if (INDEX) {
  const src = new DatabaseSync(INDEX, { readOnly: true });
  all = src
    .prepare('SELECT vector FROM embeddings ORDER BY id')
    .all()
    .map(
      (r) => new Float32Array(r.vector.buffer.slice(r.vector.byteOffset, r.vector.byteOffset + r.vector.byteLength)),
    );
  src.close();
  D = all[0].length;
} else {
  D = Number(arg('--dims', 768));
}
const N = INDEX ? all.length - Q : Number(arg('--n', 100_000));
const label = INDEX ? `real-${N}-${D}` : `syn-${N}-${D}`;
// Held-out queries: the last Q real vectors, or Q more of the same distribution.
const queries = INDEX ? all.slice(N) : [...clustered(Q, D, 99)];
const vectors = INDEX ? () => all.slice(0, N) : () => clustered(N, D, 1);

// The mean of the first 10,000 vectors, for centred sign bits.
const mean = new Float32Array(D);
{
  let n = 0;
  for (const v of vectors()) {
    for (let d = 0; d < D; d++) mean[d] += v[d];
    if (++n === 10_000) break;
  }
  for (let d = 0; d < D; d++) mean[d] /= n;
}
const centred = (v) => {
  const c = new Float32Array(D);
  for (let d = 0; d < D; d++) c[d] = v[d] - mean[d];
  return c;
};

log(`${label}: building the float copy (BLOB table)`);
const { db, path: floatPath } = open(`quant-${label}-float.sqlite`);
db.exec('CREATE TABLE v (id INTEGER PRIMARY KEY, vector BLOB NOT NULL) STRICT');
const attach = (name, schema) => {
  const { db: side, path } = open(`quant-${label}-${name}.sqlite`);
  side.exec(schema);
  side.close();
  db.exec(`ATTACH '${path}' AS ${name.replace('-', '_')}`);
  return path;
};
const paths = {
  bit: attach('bit', `CREATE VIRTUAL TABLE q USING vec0(b bit[${D}])`),
  'bit-c': attach('bit-c', `CREATE VIRTUAL TABLE q USING vec0(b bit[${D}])`),
  int8: attach('int8', `CREATE VIRTUAL TABLE q USING vec0(b int8[${D}] distance_metric=cosine)`),
  ...(SKIP_EXACT_VEC0
    ? {}
    : { exact: attach('exact', `CREATE VIRTUAL TABLE q USING vec0(e float[${D}] distance_metric=cosine)`) }),
};
const insert = {
  float: db.prepare('INSERT INTO v(id, vector) VALUES (?, ?)'),
  bit: db.prepare('INSERT INTO bit.q(rowid, b) VALUES (?, vec_quantize_binary(vec_f32(?)))'),
  'bit-c': db.prepare('INSERT INTO bit_c.q(rowid, b) VALUES (?, vec_quantize_binary(vec_f32(?)))'),
  int8: db.prepare("INSERT INTO int8.q(rowid, b) VALUES (?, vec_quantize_int8(vec_f32(?), 'unit'))"),
  exact: SKIP_EXACT_VEC0 ? undefined : db.prepare('INSERT INTO exact.q(rowid, e) VALUES (?, ?)'),
};
const buildMs = { float: 0, bit: 0, 'bit-c': 0, int8: 0, exact: 0 };
db.exec('BEGIN');
let i = 0;
for (const v of vectors()) {
  const id = i + 1;
  const b = blob(v);
  let t = performance.now();
  insert.float.run(id, b);
  buildMs.float += performance.now() - t;
  t = performance.now();
  insert.bit.run(BigInt(id), b);
  buildMs.bit += performance.now() - t;
  t = performance.now();
  insert['bit-c'].run(BigInt(id), blob(centred(v)));
  buildMs['bit-c'] += performance.now() - t;
  t = performance.now();
  insert.int8.run(BigInt(id), b);
  buildMs.int8 += performance.now() - t;
  if (insert.exact) {
    t = performance.now();
    insert.exact.run(BigInt(id), b);
    buildMs.exact += performance.now() - t;
  }
  if (++i % 5000 === 0) {
    db.exec('COMMIT');
    db.exec('BEGIN');
    if (i % 50000 === 0) log(`${i} vectors`);
  }
}
db.exec('COMMIT');
for (const schema of ['main', 'bit', 'bit_c', 'int8', ...(SKIP_EXACT_VEC0 ? [] : ['exact'])])
  db.exec(`PRAGMA ${schema}.wal_checkpoint(TRUNCATE)`);

const k = 10;
const scanExact = db.prepare('SELECT id FROM v ORDER BY vec_distance_cosine(vector, ?) LIMIT 10');
const vec0Exact = SKIP_EXACT_VEC0
  ? undefined
  : db.prepare(`SELECT rowid AS id FROM exact.q WHERE e MATCH ? AND k = ${k}`);
const rescore = db.prepare(
  'SELECT id FROM v WHERE id IN (SELECT value FROM json_each(?)) ORDER BY vec_distance_cosine(vector, ?) LIMIT 10',
);
const coarse = {
  bit: (q, c) =>
    db.prepare(`SELECT rowid AS id FROM bit.q WHERE b MATCH vec_quantize_binary(vec_f32(?)) AND k = ${c}`).all(blob(q)),
  'bit-c': (q, c) =>
    db
      .prepare(`SELECT rowid AS id FROM bit_c.q WHERE b MATCH vec_quantize_binary(vec_f32(?)) AND k = ${c}`)
      .all(blob(centred(q))),
  int8: (q, c) =>
    db
      .prepare(`SELECT rowid AS id FROM int8.q WHERE b MATCH vec_quantize_int8(vec_f32(?), 'unit') AND k = ${c}`)
      .all(blob(q)),
};

log('ground truth (exact scan of the float copy)');
const truth = [];
const scanTimes = [];
for (const q of queries) {
  const r = time(() => scanExact.all(blob(q)).map((row) => row.id));
  truth.push(new Set(r.result));
  scanTimes.push(r.ms);
}
const rows = [];
rows.push({
  name: 'exact: scan of the float BLOBs in SQL (vec_distance_cosine)',
  times: scanTimes,
  recall: 1,
  bytes: bytesOf(floatPath),
});
if (vec0Exact) {
  const times = [];
  let hit = 0;
  for (const [j, q] of queries.entries()) {
    const r = time(() => vec0Exact.all(blob(q)));
    times.push(r.ms);
    hit += r.result.filter((row) => truth[j].has(row.id)).length;
  }
  rows.push({
    name: 'exact: vec0 float KNN (a second float copy)',
    times,
    recall: hit / (k * queries.length),
    bytes: bytesOf(paths.exact),
  });
}
for (const form of ['bit', 'bit-c', 'int8']) {
  for (const c of CANDIDATES) {
    if (c > 4096) continue;
    const times = [];
    const coarseTimes = [];
    let hit = 0;
    for (const [j, q] of queries.entries()) {
      const t = performance.now();
      const ids = coarse[form](q, c).map((row) => row.id);
      const t2 = performance.now();
      const top = rescore.all(JSON.stringify(ids), blob(q)).map((row) => row.id);
      times.push(performance.now() - t);
      coarseTimes.push(t2 - t);
      hit += top.filter((id) => truth[j].has(id)).length;
    }
    rows.push({
      name: `${form} coarse k=${c} + exact re-score`,
      times,
      coarse: coarseTimes,
      recall: hit / (k * queries.length),
      bytes: bytesOf(paths[form]),
    });
    log(`${form} k=${c}: recall ${(hit / (k * queries.length)).toFixed(3)}, p50 ${fmt(quantile(times, 0.5))} ms`);
  }
}
db.close();

const source = INDEX
  ? `real tiny-model embeddings from ${INDEX.split('/').slice(-2).join('/')} (${Q} held-out vectors as queries)`
  : `synthetic clustered vectors (${Q} queries)`;
const lines = [
  `## ${N.toLocaleString('en-US')} vectors × ${D} dims: ${source}`,
  '',
  `\`node bench/experiments/vec/quant.mjs ${argv.slice(2).join(' ')}\` on Node ${process.version}, sqlite-vec 0.1.9; load ${loadStart} at start, ${loadAverage()} at end. Build: ${Object.entries(
    buildMs,
  )
    .map(([n, ms]) => `${n} ${(ms / 1000).toFixed(1)} s`)
    .join(', ')}.`,
  '',
  '| search | p50 ms | p95 ms | coarse pass p50 ms | recall@10 | bytes/vector of its table |',
  '|---|---|---|---|---|---|',
  ...rows.map(
    (r) =>
      `| ${r.name} | ${fmt(quantile(r.times, 0.5))} | ${fmt(quantile(r.times, 0.95))} | ${r.coarse ? fmt(quantile(r.coarse, 0.5)) : '—'} | ${r.recall.toFixed(3)} | ${Math.round(r.bytes / N)} |`,
  ),
  '',
];
process.stdout.write(lines.join('\n'));
if (out) writeFileSync(out, lines.join('\n'), { flag: 'a' });
