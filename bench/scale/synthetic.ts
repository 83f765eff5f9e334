/**
 * `npx tsx bench/scale/synthetic.ts [--n 100000] [--dims 768] [--queries 20] [--out FILE]`:
 * the vector index at a size and dimension the tiny model cannot reach in time. N clustered
 * unit vectors (bench/experiments/vec/lib.mjs: 2,000 centres, cosine ≈ 0.7 to the centre) are
 * written into a fresh qmd index through the store's own write path for vectors
 * (`Vectors.adopt` and `Vectors.write`, in transactions of 5,000: the embeddings, the triggers
 * that place them in `vector_rows`, the int8 codes), as one-chunk documents spread over 4
 * collections. Then `bench/scale/vector-index.ts` measures search latency without and with a
 * one-collection filter, recall@10 against exact search over the float copy, and disk per
 * vector. Appends a section to FILE (default bench/results-scale-vectors.md).
 */
import { appendFileSync, existsSync, mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { silentLog } from '../../src/log.js';
import { openDatabase } from '../../src/store/database.js';
import { defaultProbes, Vectors } from '../../src/store/vectors.js';
// @ts-expect-error: a plain .mjs helper of the experiments, without types.
import { clustered } from '../experiments/vec/lib.mjs';
import { loadAverage } from '../lib/machine.js';
import { ROOT, TMP } from '../lib/paths.js';
import { measureVectorIndex, p } from './vector-index.js';

const args = process.argv.slice(2);
const flag = (name: string, fallback: string): string => {
  const i = args.indexOf(name);
  return i === -1 ? fallback : (args[i + 1] as string);
};
const N = Number(flag('--n', '100000'));
const D = Number(flag('--dims', '768'));
const Q = Number(flag('--queries', '20'));
const OUT = flag('--out', join(ROOT, 'bench/results-scale-vectors.md'));
const COLLECTIONS = ['c0', 'c1', 'c2', 'c3'];
const BATCH = 5000;
const log = (line: string) => process.stderr.write(`[synthetic] ${line}\n`);

const loadAtStart = loadAverage();
const dir = join(TMP, `synthetic-${N}-${D}`);
rmSync(dir, { recursive: true, force: true });
mkdirSync(dir, { recursive: true });
const file = join(dir, 'index.sqlite');
const { db } = openDatabase(file, { readonly: false, busyTimeoutMs: 5000, quickCheck: false });
const vectors = new Vectors(db, { extension: true, log: silentLog });
const fingerprint = `synthetic-${D}`;

const started = performance.now();
db.transaction(() => {
  db.prepare("UPDATE embedding_state SET chunker = 'synthetic'").run();
  for (const name of COLLECTIONS) {
    db.prepare("INSERT INTO collections (name, root, mask, updated_at) VALUES (?, ?, '**/*.md', 'now')").run(
      name,
      `/synthetic/${name}`,
    );
  }
  vectors.adopt({ spec: `${fingerprint}.gguf`, fingerprint, dims: D, maxTokens: 512, chunker: 'synthetic' });
});
const content = db.prepare<[string, string]>('INSERT INTO content (hash, body) VALUES (?, ?)');
const chunk = db.prepare<[string, string]>(
  'INSERT INTO chunks (content_hash, seq, hash, start_offset, end_offset, line) VALUES (?, 0, ?, 0, 1, 1)',
);
const document = db.prepare<[string, string, string, string]>(
  `INSERT INTO documents (collection, path, docid, title, hash, mtime_ms, size, indexed_at)
   VALUES (?, ?, ?, 't', ?, 0, 1, 'now')`,
);
let writeMs = 0;
let batch: { chunkHash: string; vector: Float32Array }[] = [];
let i = 0;
const flush = () => {
  const rows = batch;
  batch = [];
  db.transaction(() => {
    for (const row of rows) {
      const n = Number(row.chunkHash.slice(1));
      content.run(`h${n}`, `${n}`);
      chunk.run(`h${n}`, row.chunkHash);
      document.run(COLLECTIONS[n % COLLECTIONS.length] as string, `f${Math.floor(n / 500)}/n${n}.md`, `d${n}`, `h${n}`);
    }
    const t = performance.now();
    vectors.write(fingerprint, D, rows, 'now');
    writeMs += performance.now() - t;
  });
};
const near: Float32Array[] = [];
for (const vector of clustered(N + Q, D, 1) as Iterable<Float32Array>) {
  if (i === N) {
    near.push(vector);
    continue;
  }
  batch.push({ chunkHash: `k${i++}`, vector });
  if (batch.length === BATCH) {
    flush();
    if (i % 50_000 === 0) log(`${i} vectors`);
  }
}
if (batch.length > 0) flush();
db.pragma('wal_checkpoint(TRUNCATE)');
db.close();
const buildS = (performance.now() - started) / 1000;
log(`built in ${buildS.toFixed(0)} s (vector writes ${(writeMs / 1000).toFixed(0)} s); measuring`);

const far = [...(clustered(Q, D, 99) as Iterable<Float32Array>)];
const cellCount = (() => {
  const { db: reader } = openDatabase(file, { readonly: true, busyTimeoutMs: 5000, quickCheck: false });
  try {
    return reader.value<number>('SELECT count(*) FROM vector_cells') ?? 0;
  } finally {
    reader.close();
  }
})();
// Probe settings: the product's default, then any fixed counts asked for (`--probes 16,64`).
const settings: { label: string; probes?: (cells: number, k: number) => number }[] = [{ label: 'default' }];
for (const n of flag('--probes', '').split(',').filter(Boolean).map(Number)) {
  settings.push({ label: String(n), probes: (cells, k) => Math.min(cells, Math.ceil((n * Math.max(k, 40)) / 40)) });
}
const ms = (x: number) => (x < 10 ? x.toFixed(1) : x.toFixed(0));
const size = statSync(file).size;
const rows: string[] = [];
let f: ReturnType<typeof measureVectorIndex> | undefined;
for (const setting of settings) {
  for (const [kind, queries] of [
    ['near', near],
    ['far', far],
  ] as const) {
    f = measureVectorIndex(file, queries, 'c1', setting.probes);
    const probes = cellCount === 0 ? '—' : setting.label === 'default' ? `default (${defaultProbes(cellCount, 40)})` : setting.label;
    rows.push(
      `| ${kind} | ${probes} | ${ms(p(f.searchMs.all, 0.5))} / ${ms(p(f.searchMs.all, 0.95))} | ${f.recall.all.toFixed(3)} | ${ms(p(f.searchMs.filtered, 0.5))} / ${ms(p(f.searchMs.filtered, 0.95))} | ${f.recall.filtered.toFixed(3)} |`,
    );
    log(rows.at(-1) as string);
  }
}
const figures = f as ReturnType<typeof measureVectorIndex>;
const lines = [
  `## ${N.toLocaleString('en-US')} synthetic vectors × ${D} dims, 4 collections, ${cellCount === 0 ? 'no cells' : `${cellCount} cells`} (${Q} queries of each kind)`,
  '',
  `\`npx tsx bench/scale/synthetic.ts --n ${N} --dims ${D} --queries ${Q}${settings.length > 1 ? ` --probes ${flag('--probes', '')}` : ''}\` on Node ${process.version}, sqlite-vec 0.1.9; load ${loadAtStart} at start, ${loadAverage()} at end. Build ${buildS.toFixed(0)} s, of which \`Vectors.write\` (embeddings, triggers, int8 codes, cell training) ${(writeMs / 1000).toFixed(0)} s. Backend: ${figures.backend}.`,
  '',
  'Queries: "near" are held-out vectors of the data\'s own clusters (a question about notes one has); "far" are vectors of other clusters, whose true neighbours are barely similar (any order of them is noise). A search is a page of 10 (KNN over the codes of the probed cells with C = 40, re-score, documents).',
  '',
  '| queries | cells read | no filter: p50 / p95 ms | recall@10 | collections [c1] (a quarter): p50 / p95 ms | recall@10 |',
  '|---|---|---|---|---|---|',
  ...rows,
  '',
  `Disk: ${(size / 2 ** 20).toFixed(0)} MiB for ${figures.vectors.toLocaleString('en-US')} vectors (${Math.round(size / figures.vectors)} bytes a vector in all, documents and chunks included); the float copy ${Math.round(figures.floatBytesPerVector)} bytes a vector (4 × ${D} = ${4 * D} of data), the codes and their rows ${Math.round(figures.codeBytesPerRow)} bytes a row.`,
  '',
];
if (!existsSync(OUT)) {
  writeFileSync(
    OUT,
    '# The vector index on synthetic vectors (int8 codes in vec0 partitioned by collection, exact re-score from `embeddings.vector`)\n\n',
  );
}
appendFileSync(OUT, `${lines.join('\n')}\n`);
process.stdout.write(`${lines.join('\n')}\n`);
if (!args.includes('--keep')) rmSync(dir, { recursive: true, force: true });
