/**
 * Facts about sqlite-vec 0.1.9 that the inverted file (src/store/vectors/vectors.ts, cells) rests on,
 * measured on a vec0 table of int8 codes with two partition keys (cell, collection):
 *  1. an `IN` on a partition key runs the KNN once per value (k rows each);
 *  2. each run first finds the partition's chunks by reading vec0's `_chunks` table without an
 *     index, a cost per run that grows with the partitions; an index of our own on the
 *     partition columns removes it;
 *  3. vec0 refuses a LIMIT beside its own `k` ("Only LIMIT or 'k =?' can be provided"), so
 *     the best k over several runs needs a MATERIALIZED step first;
 *  4. what a distance costs: int8 and float KNN in vec0, vec_distance_cosine in SQL, and a
 *     plain JS loop, over 1,024 vectors of 768 dims;
 *  5. a comparison on a TEXT metadata column fails when a stored value is exactly 12 bytes.
 *
 *   node bench/experiments/vec/ivf-facts.mjs [--n 100000] [--cells 512] [--out FILE]
 */
import { appendFileSync } from 'node:fs';
import { blob, clustered, fmt, loadAverage, mulberry32, open } from './lib.mjs';

const argv = process.argv;
const arg = (name, d) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : d);
const N = Number(arg('--n', 100000));
const CELLS = Number(arg('--cells', 512));
const D = 768;
const OUT = arg('--out', undefined);
const lines = [];
const say = (line) => {
  lines.push(line);
  process.stdout.write(`${line}\n`);
};
const loadStart = loadAverage();

const int8 = (v) => {
  let max = 0;
  for (const x of v) max = Math.max(max, Math.abs(x));
  return Int8Array.from(v, (x) => Math.round((x * 127) / (max || 1)));
};
const best = (fn, runs = 7) => {
  let ms = Infinity;
  let result;
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    result = fn();
    ms = Math.min(ms, performance.now() - t);
  }
  return { ms, result };
};

const { db } = open(`ivf-facts-${N}-${CELLS}.sqlite`);
db.exec(
  `CREATE VIRTUAL TABLE codes USING vec0(cell INTEGER PARTITION KEY, collection TEXT PARTITION KEY, code int8[${D}] distance_metric=cosine, chunk_size=128)`,
);
const ins = db.prepare('INSERT INTO codes (rowid, cell, collection, code) VALUES (?, ?, ?, vec_int8(?))');
const random = mulberry32(5);
db.exec('BEGIN');
let i = 0;
for (const v of clustered(N, D, 1)) {
  ins.run(BigInt(i + 1), BigInt(Math.floor(random() * CELLS)), `c${i % 4}`, int8(v));
  i++;
}
db.exec('COMMIT');
const chunks = db.prepare('SELECT count(*) AS n FROM codes_chunks').get().n;
say(
  `## sqlite-vec 0.1.9 facts for the inverted file (${N.toLocaleString('en-US')} × ${D} int8 codes, ${CELLS} cells × 4 collections, ${chunks} vec0 chunks)`,
);
say('');
say(
  `\`node bench/experiments/vec/ivf-facts.mjs --n ${N} --cells ${CELLS}\` on Node ${process.version}; load ${loadStart} at start. Best of 7 runs each.`,
);
say('');
const query = int8([...clustered(1, D, 9)][0]);
const knn = (where) => db.prepare(`SELECT rowid, distance FROM codes WHERE code MATCH vec_int8(?) AND k = 40 ${where}`);
const eight = "cell IN (SELECT value FROM json_each('[1,2,3,4,5,6,7,8]'))";
const cases = [
  ['one cell, one collection (=)', "AND cell = 3 AND collection = 'c1'"],
  ['8 cells (IN), one collection', `AND ${eight} AND collection = 'c1'`],
  ['8 cells (IN), 4 collections (IN)', `AND ${eight} AND collection IN ('c0','c1','c2','c3')`],
  ['no partition constraint (every code)', ''],
];
say('| KNN, k = 40 | rows returned | no index on the chunk table, ms | with our index, ms |');
say('|---|---:|---:|---:|');
const before = cases.map(([, where]) => best(() => knn(where).all(query)));
db.exec('CREATE INDEX codes_chunks_by_partition ON codes_chunks(partition00, partition01)');
const after = cases.map(([, where]) => best(() => knn(where).all(query)));
for (const [c, [label]] of cases.entries()) {
  say(`| ${label} | ${before[c].result.length} | ${fmt(before[c].ms)} | ${fmt(after[c].ms)} |`);
}
say('');
let refused = '';
try {
  db.prepare(
    `SELECT rowid FROM codes WHERE code MATCH vec_int8(?) AND k = 40 AND ${eight} ORDER BY distance LIMIT 40`,
  ).all(query);
} catch (error) {
  refused = error.message;
}
const materialized = db
  .prepare(
    `WITH knn AS MATERIALIZED (SELECT rowid, distance FROM codes WHERE code MATCH vec_int8(?) AND k = 40 AND ${eight})
     SELECT rowid, distance FROM knn ORDER BY distance LIMIT 40`,
  )
  .all(query);
const all = knn(`AND ${eight}`)
  .all(query)
  .sort((a, b) => a.distance - b.distance)
  .slice(0, 40);
say(
  `- A LIMIT beside \`k\`: ${refused ? `refused ("${refused}")` : 'accepted'}. Through a MATERIALIZED step: ${materialized.length} rows, ${JSON.stringify(materialized.map((r) => r.rowid)) === JSON.stringify(all.map((r) => r.rowid)) ? "the same as sorting every run's rows" : "NOT the same as sorting every run's rows"}.`,
);

// 4. What one distance costs, over 1,024 vectors of 768 dims.
const centroids = [...clustered(1024, D, 3)];
db.exec(`CREATE VIRTUAL TABLE cf USING vec0(v float[${D}] distance_metric=cosine)`);
db.exec(`CREATE VIRTUAL TABLE ci USING vec0(v int8[${D}] distance_metric=cosine)`);
db.exec('CREATE TABLE cp (id INTEGER PRIMARY KEY, v BLOB)');
db.exec('BEGIN');
for (const [c, v] of centroids.entries()) {
  db.prepare('INSERT INTO cf (rowid, v) VALUES (?, ?)').run(BigInt(c), blob(v));
  db.prepare('INSERT INTO ci (rowid, v) VALUES (?, vec_int8(?))').run(BigInt(c), int8(v));
  db.prepare('INSERT INTO cp (id, v) VALUES (?, ?)').run(c, blob(v));
}
db.exec('COMMIT');
const flat = new Float32Array(1024 * D);
for (const [c, v] of centroids.entries()) flat.set(v, c * D);
const q = [...clustered(1, D, 4)][0];
const per = (ms) => `${fmt((ms * 1000) / 1024)} µs`;
const costs = [
  ['vec0 float KNN (k = 1)', best(() => db.prepare('SELECT rowid FROM cf WHERE v MATCH ? AND k = 1').all(blob(q)))],
  [
    'vec0 int8 KNN (k = 1)',
    best(() => db.prepare('SELECT rowid FROM ci WHERE v MATCH vec_int8(?) AND k = 1').all(int8(q))),
  ],
  [
    'plain table, ORDER BY vec_distance_cosine',
    best(() => db.prepare('SELECT id FROM cp ORDER BY vec_distance_cosine(v, ?) LIMIT 1').all(blob(q))),
  ],
  [
    'JS loop over a Float32Array',
    best(() => {
      let top = -2;
      for (let c = 0; c < 1024; c++) {
        let s = 0;
        for (let d = 0; d < D; d++) s += q[d] * flat[c * D + d];
        top = Math.max(top, s);
      }
      return top;
    }),
  ],
];
say('');
say('| nearest of 1,024 vectors × 768 | ms | a vector |');
say('|---|---:|---:|');
for (const [label, { ms }] of costs) say(`| ${label} | ${fmt(ms)} | ${per(ms)} |`);
say('');

// 5. TEXT metadata of 11, 12 and 13 bytes under a range, as a folder filter asks.
say("| stored `path` (bytes) | KNN with `path >= '2024/' AND path < '20240'` |");
say('|---|---|');
for (const path of ['2024/abc.md', '2024/abcd.md', '2024/abcde.md', 'other/jun.md', '2024/abcd.md\u0001']) {
  db.exec('DROP TABLE IF EXISTS m');
  db.exec('CREATE VIRTUAL TABLE m USING vec0(code int8[4], path TEXT)');
  db.prepare('INSERT INTO m (rowid, code, path) VALUES (1, vec_int8(?), ?)').run(new Int8Array([1, 2, 3, 4]), path);
  let answer;
  try {
    answer = `${db.prepare("SELECT rowid FROM m WHERE code MATCH vec_int8(?) AND k = 5 AND path >= '2024/' AND path < '20240'").all(new Int8Array([1, 1, 1, 1])).length} row(s)`;
  } catch (error) {
    answer = `error: ${error.message}`;
  }
  say(`| ${JSON.stringify(path)} (${Buffer.byteLength(path)}) | ${answer} |`);
}
say('');
say(`Load ${loadAverage()} at end.`);
say('');
if (OUT) appendFileSync(OUT, `${lines.join('\n')}\n`);
