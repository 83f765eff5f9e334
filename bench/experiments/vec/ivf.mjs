/**
 * Is an inverted file (IVF) inside sqlite-vec fast enough at 1M × 768, and what recall does it
 * give? Vectors are grouped into `cells` by k-means (trained in JS on a sample); the int8 codes
 * go into a vec0 table whose partition key is (collection, cell); a query finds the `probe`
 * nearest centroids and runs the KNN only in those partitions, then re-scores the candidates
 * exactly from the float vectors held here in memory.
 *
 *   node bench/experiments/vec/ivf.mjs [--n 200000] [--dims 768] [--cells 1024] [--probes 8,16,32]
 *        [--chunk 128] [--queries 40] [--out FILE]
 *
 * Queries: held-out vectors of the data's own clusters ("near", like a question about notes one
 * has) and vectors of other clusters ("far", seed 99 as results-quant.md used; their true
 * neighbours are barely similar, so any order of them is noise).
 */
import { appendFileSync } from 'node:fs';
import { blob, clustered, fmt, loadAverage, open, quantile } from './lib.mjs';

const argv = process.argv;
const arg = (name, d) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : d);
const N = Number(arg('--n', 200000));
const D = Number(arg('--dims', 768));
const CELLS = Number(arg('--cells', 1024));
const PROBES = String(arg('--probes', '8,16,32')).split(',').map(Number);
const CHUNK = Number(arg('--chunk', 128));
const Q = Number(arg('--queries', 40));
const OUT = arg('--out', undefined);
const COLLECTIONS = 4;
const K = 40;
const log = (s) => process.stderr.write(`[ivf] ${s}\n`);
const loadStart = loadAverage();

// Data (flat, in memory for exact truth and the re-score) and near queries.
const data = new Float32Array(N * D);
const near = [];
let i = 0;
for (const v of clustered(N + Q, D, 1)) {
  if (i < N) data.set(v, i * D);
  else near.push(v);
  i++;
}
const far = [...clustered(Q, D, 99)];
log(`generated ${N}`);

function dotAt(q, base, off) {
  let s = 0;
  for (let d = 0; d < D; d++) s += q[d] * base[off + d];
  return s;
}

// k-means on a sample: start at random points, Lloyd iterations.
const t0 = performance.now();
const sampleSize = Math.min(N, CELLS * 32);
const step = N / sampleSize;
const sample = new Int32Array(sampleSize).map((_, j) => Math.floor(j * step));
const centroids = new Float32Array(CELLS * D);
for (let c = 0; c < CELLS; c++) centroids.set(data.subarray(sample[(c * 7919) % sampleSize] * D, (sample[(c * 7919) % sampleSize] + 1) * D), c * D);
function nearestCell(v, off) {
  let best = -Infinity;
  let arg = 0;
  for (let c = 0; c < CELLS; c++) {
    let s = 0;
    const o = c * D;
    for (let d = 0; d < D; d++) s += v[off + d] * centroids[o + d];
    if (s > best) {
      best = s;
      arg = c;
    }
  }
  return arg;
}
const ITER = Number(arg('--iterations', 5));
for (let it = 0; it < ITER; it++) {
  const sums = new Float64Array(CELLS * D);
  const counts = new Int32Array(CELLS);
  for (const j of sample) {
    const c = nearestCell(data, j * D);
    counts[c]++;
    for (let d = 0; d < D; d++) sums[c * D + d] += data[j * D + d];
  }
  for (let c = 0; c < CELLS; c++) {
    if (counts[c] === 0) continue;
    let norm = 0;
    for (let d = 0; d < D; d++) norm += sums[c * D + d] ** 2;
    norm = Math.sqrt(norm) || 1;
    for (let d = 0; d < D; d++) centroids[c * D + d] = sums[c * D + d] / norm;
  }
}
const trainMs = performance.now() - t0;
log(`trained ${CELLS} cells on ${sampleSize} in ${fmt(trainMs)} ms`);
const t1 = performance.now();
const cellOf = new Int32Array(N);
for (let j = 0; j < N; j++) cellOf[j] = nearestCell(data, j * D);
const assignMs = performance.now() - t1;
const sizes = new Int32Array(CELLS);
for (const c of cellOf) sizes[c]++;
const sorted = [...sizes].sort((a, b) => a - b);
log(`assigned in ${fmt(assignMs)} ms; cell sizes min ${sorted[0]} p50 ${sorted[CELLS >> 1]} max ${sorted[CELLS - 1]}`);

function code(v, off = 0) {
  let max = 0;
  for (let d = 0; d < D; d++) max = Math.max(max, Math.abs(v[off + d]));
  const out = new Int8Array(D);
  for (let d = 0; d < D; d++) out[d] = Math.round((v[off + d] * 127) / (max || 1));
  return out;
}

const { db, path } = open(`ivf-${N}-${D}-${CELLS}-${CHUNK}.sqlite`);
const t2 = performance.now();
db.exec(
  `CREATE VIRTUAL TABLE codes USING vec0(collection TEXT PARTITION KEY, cell INTEGER PARTITION KEY, code int8[${D}] distance_metric=cosine, chunk_size=${CHUNK})`,
);
const ins = db.prepare('INSERT INTO codes(rowid, collection, cell, code) VALUES (?, ?, ?, vec_int8(?))');
const order = [...cellOf.keys()].sort((a, b) => (a % COLLECTIONS) - (b % COLLECTIONS) || cellOf[a] - cellOf[b]);
db.exec('BEGIN');
let n = 0;
for (const j of order) {
  ins.run(BigInt(j + 1), `c${j % COLLECTIONS}`, BigInt(cellOf[j]), code(data, j * D));
  if (++n % 20000 === 0) {
    db.exec('COMMIT');
    db.exec('BEGIN');
  }
}
db.exec('COMMIT');
const insertMs = performance.now() - t2;
log(`inserted in ${fmt(insertMs)} ms`);

function exactTop(q, filter) {
  const best = [];
  for (let j = 0; j < N; j++) {
    if (filter !== undefined && j % COLLECTIONS !== filter) continue;
    const s = dotAt(q, data, j * D);
    if (best.length < 10 || s > best[9][1]) {
      best.push([j, s]);
      best.sort((a, b) => b[1] - a[1]);
      if (best.length > 10) best.pop();
    }
  }
  return new Set(best.map(([j]) => j));
}
function probeCells(q, probe) {
  const scores = [];
  for (let c = 0; c < CELLS; c++) scores.push([c, dotAt(q, centroids, c * D)]);
  scores.sort((a, b) => b[1] - a[1]);
  return scores.slice(0, probe).map(([c]) => c);
}
const knn = db.prepare(
  `SELECT rowid FROM codes WHERE code MATCH vec_int8(?) AND k = ${K}
   AND cell IN (SELECT value FROM json_each(?)) AND collection IN (SELECT value FROM json_each(?))`,
);
const knnAll = db.prepare(
  `SELECT rowid FROM codes WHERE code MATCH vec_int8(?) AND k = ${K} AND collection IN (SELECT value FROM json_each(?))`,
);
const allCollections = JSON.stringify([...Array(COLLECTIONS).keys()].map((c) => `c${c}`));
function search(q, probe, filter) {
  const t = performance.now();
  const cells = probe === 0 ? undefined : JSON.stringify(probeCells(q, probe));
  const colls = filter === undefined ? allCollections : JSON.stringify([`c${filter}`]);
  const rows = cells === undefined ? knnAll.all(code(q), colls) : knn.all(code(q), cells, colls);
  const scored = rows.map((r) => [Number(r.rowid) - 1, dotAt(q, data, (Number(r.rowid) - 1) * D)]);
  scored.sort((a, b) => b[1] - a[1]);
  const top = scored.slice(0, 10).map(([j]) => j);
  return { ms: performance.now() - t, top };
}

const lines = [
  `## ${N.toLocaleString('en-US')} × ${D}, ${CELLS} cells, vec0 chunk_size ${CHUNK}, ${Q} queries of each kind`,
  '',
  `\`node bench/experiments/vec/ivf.mjs --n ${N} --dims ${D} --cells ${CELLS} --chunk ${CHUNK}\` on Node ${process.version}; load ${loadStart} at start. Train (${ITER} iterations on ${sampleSize.toLocaleString('en-US')}) ${fmt(trainMs / 1000)} s, assign ${fmt(assignMs / 1000)} s, insert ${fmt(insertMs / 1000)} s; cell sizes min ${sorted[0]}, median ${sorted[CELLS >> 1]}, max ${sorted[CELLS - 1]}.`,
  '',
  '| queries | filter | probes | p50 ms | p95 ms | recall@10 |',
  '|---|---|---:|---:|---:|---:|',
];
for (const [kind, qs] of [
  ['near', near],
  ['far', far],
]) {
  for (const filter of [undefined, 1]) {
    const truth = qs.map((q) => exactTop(q, filter));
    for (const probe of [...PROBES, 0]) {
      if (probe === 0 && N > 300000 && kind === 'far') continue;
      const times = [];
      let right = 0;
      for (const [qi, q] of qs.entries()) {
        const { ms, top } = search(q, probe, filter);
        times.push(ms);
        right += top.filter((j) => truth[qi].has(j)).length;
      }
      const row = `| ${kind} | ${filter === undefined ? 'none' : 'one collection of 4'} | ${probe === 0 ? 'all (no IVF)' : probe} | ${fmt(quantile(times, 0.5))} | ${fmt(quantile(times, 0.95))} | ${(right / (10 * qs.length)).toFixed(3)} |`;
      lines.push(row);
      log(row);
    }
  }
}
lines.push('', `Load ${loadAverage()} at end. File ${path}.`, '');
process.stdout.write(`${lines.join('\n')}\n`);
if (OUT) appendFileSync(OUT, `${lines.join('\n')}\n`);
