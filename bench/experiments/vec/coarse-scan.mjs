/**
 * sqlite-vec 0.1.9's KNN cost grows with k (results-quant.md: bit codes, 100k × 768, k = 100
 * → 4,000 goes from ~0.2 s to ~2.8 s), so a large oversampling is dear through vec0. Two
 * k-independent coarse passes over the same codes, on quant.mjs's files (run it first):
 *  - `sql`: a plain table of codes, `ORDER BY vec_distance_hamming(code, ?) LIMIT C`
 *    (SQLite keeps a top-C sorter);
 *  - `js`: the codes in one Uint32Array in memory, popcount of XOR per vector, a bounded
 *    selection of the C best; then the same exact re-score from the float BLOBs.
 *
 *   node bench/experiments/vec/coarse-scan.mjs --label syn-100000-768 [--queries 30] [--centred]
 */
import { writeFileSync } from 'node:fs';
import { blob, clustered, fmt, loadAverage, open, quantile } from './lib.mjs';

const argv = process.argv;
const arg = (name, d) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : d);
const LABEL = arg('--label', 'syn-100000-768');
const Q = Number(arg('--queries', 30));
const CANDIDATES = String(arg('--candidates', '100,400,1000,4000')).split(',').map(Number);
const out = arg('--out', undefined);
const [, nText, dText] = LABEL.split('-');
const N = Number(nText);
const D = Number(dText);
const loadStart = loadAverage();
const { db } = open(`quant-${LABEL}-float.sqlite`, { fresh: false });
const words = D / 32;

// Codes: sign bits of each float vector (the same as vec_quantize_binary), in memory and in a plain table.
const codes = new Uint32Array(N * words);
const ids = new Int32Array(N);
let n = 0;
for (const row of db.prepare('SELECT id, vector FROM v ORDER BY id').iterate()) {
  const v = new Float32Array(row.vector.buffer, row.vector.byteOffset, D);
  ids[n] = row.id;
  for (let d = 0; d < D; d++) if (v[d] > 0) codes[n * words + (d >> 5)] |= 1 << (d & 31);
  n++;
}
db.exec('CREATE TEMP TABLE codes (id INTEGER PRIMARY KEY, code BLOB NOT NULL)');
const ins = db.prepare('INSERT INTO codes(id, code) VALUES (?, vec_quantize_binary(vec_f32(?)))');
db.exec('BEGIN');
for (const row of db.prepare('SELECT id, vector FROM v ORDER BY id').iterate()) ins.run(row.id, row.vector);
db.exec('COMMIT');

const queries = INDEXLESS();
function INDEXLESS() {
  return [...clustered(Q, D, 99)];
}
const truthSql = db.prepare('SELECT id FROM v ORDER BY vec_distance_cosine(vector, ?) LIMIT 10');
const truth = queries.map((q) => new Set(truthSql.all(blob(q)).map((r) => r.id)));
const rescore = db.prepare(
  'SELECT id FROM v WHERE id IN (SELECT value FROM json_each(?)) ORDER BY vec_distance_cosine(vector, ?) LIMIT 10',
);

function popcount(x) {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return (((x + (x >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
}
function jsCoarse(q, c) {
  const qc = new Uint32Array(words);
  for (let d = 0; d < D; d++) if (q[d] > 0) qc[d >> 5] |= 1 << (d & 31);
  // Counting selection: distances are 0..D, so a histogram finds the C-th smallest in two passes.
  const dist = new Uint16Array(N);
  const hist = new Uint32Array(D + 1);
  for (let i = 0; i < N; i++) {
    let s = 0;
    const base = i * words;
    for (let w = 0; w < words; w++) s += popcount(codes[base + w] ^ qc[w]);
    dist[i] = s;
    hist[s]++;
  }
  let cut = 0;
  for (let acc = 0; cut <= D && acc + hist[cut] < c; cut++) acc += hist[cut];
  const found = [];
  for (let i = 0; i < N && found.length < c; i++) if (dist[i] <= cut) found.push(ids[i]);
  return found;
}
const sqlCoarse = (q, c) =>
  db
    .prepare(
      `SELECT id FROM codes ORDER BY vec_distance_hamming(vec_bit(code), vec_quantize_binary(vec_f32(?))) LIMIT ${c}`,
    )
    .all(blob(q))
    .map((r) => r.id);

const rows = [];
for (const [name, coarse] of [
  ['js', jsCoarse],
  ['sql', sqlCoarse],
]) {
  for (const c of CANDIDATES) {
    const times = [];
    const coarseTimes = [];
    let hit = 0;
    for (const [j, q] of queries.entries()) {
      const t = performance.now();
      const found = coarse(q, c);
      const t2 = performance.now();
      const top = rescore.all(JSON.stringify(found), blob(q)).map((r) => r.id);
      times.push(performance.now() - t);
      coarseTimes.push(t2 - t);
      hit += top.filter((id) => truth[j].has(id)).length;
    }
    rows.push({
      name: `${name === 'js' ? 'bit codes in memory, popcount in JS' : 'bit codes in a plain table, ORDER BY vec_distance_hamming LIMIT'} C=${c} + exact re-score`,
      times,
      coarseTimes,
      recall: hit / (10 * Q),
    });
    process.stderr.write(
      `[coarse] ${name} C=${c}: recall ${(hit / (10 * Q)).toFixed(3)} p50 ${fmt(quantile(times, 0.5))}\n`,
    );
  }
}
const lines = [
  `## k-independent coarse passes over the bit codes of ${LABEL} (${Q} queries)`,
  '',
  `\`node bench/experiments/vec/coarse-scan.mjs ${argv.slice(2).join(' ')}\` on Node ${process.version}; load ${loadStart} at start, ${loadAverage()} at end.`,
  '',
  '| search | p50 ms | p95 ms | coarse pass p50 ms | recall@10 |',
  '|---|---|---|---|---|',
  ...rows.map(
    (r) =>
      `| ${r.name} | ${fmt(quantile(r.times, 0.5))} | ${fmt(quantile(r.times, 0.95))} | ${fmt(quantile(r.coarseTimes, 0.5))} | ${r.recall.toFixed(3)} |`,
  ),
  '',
];
process.stdout.write(lines.join('\n'));
if (out) writeFileSync(out, lines.join('\n'), { flag: 'a' });
