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
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { createEmbedder } from '../../src/llm/index.js';
import { silentLog } from '../../src/log.js';
import { openDatabase } from '../../src/store/database.js';
import { defaultProbes, Vectors } from '../../src/store/vectors/vectors.js';
import { writeTinyModel } from '../../test/support/gguf.js';
// @ts-expect-error: a plain .mjs helper of the experiments, without types.
import { clustered } from '../experiments/vec/lib.mjs';
import { loadAverage } from '../lib/machine.js';
import { QMD_BIN, ROOT, TMP } from '../lib/paths.js';
import { qmdEnv } from '../lib/qmd.js';
import { sourceParagraphs } from './corpus.js';
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
/**
 * `--mcp`: also measure the `query` tool over MCP on this index (BM25, vector, hybrid, with
 * and without a collection filter): the documents get real prose (one paragraph of
 * bench/scale/corpus.ts's sources each) for BM25, and the vectors the fingerprint of a tiny
 * generated model of D dimensions (test/support/gguf.ts), with which `qmd mcp` embeds the
 * queries: the whole path of a call at 1M × 768, with the real llama.cpp in it.
 */
const MCP = args.includes('--mcp');

const loadAtStart = loadAverage();
const dir = join(TMP, `synthetic-${N}-${D}`);
const file = join(dir, 'index.sqlite');
/** `--reuse`: measure an index an earlier `--keep` run built (same N, D, --mcp), without building. */
const REUSE = args.includes('--reuse') && existsSync(file);
let fingerprint = `synthetic-${D}`;
let spec = `${fingerprint}.gguf`;
const modelFile = join(TMP, `tiny-embed-${D}.gguf`);
const prose = MCP ? sourceParagraphs() : undefined;
if (MCP) {
  if (!existsSync(modelFile)) writeTinyModel(modelFile, { dims: D });
  const embedder = createEmbedder({ model: modelFile, log: silentLog });
  fingerprint = await embedder.fingerprint();
  await embedder.dispose();
  spec = modelFile;
}

const near: Float32Array[] = [];
let buildS = 0;
let writeMs = 0;
if (REUSE) {
  let n = 0;
  for (const vector of clustered(N + Q, D, 1) as Iterable<Float32Array>) if (n++ >= N) near.push(vector);
  log('reusing the index built before; measuring');
} else {
  build();
}

function build(): void {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const { db } = openDatabase(file, { readonly: false, busyTimeoutMs: 5000, quickCheck: false });
  const vectors = new Vectors(db, { extension: true, log: silentLog });
  const started = performance.now();
  db.transaction(() => {
    db.prepare("UPDATE embedding_state SET chunker = 'synthetic'").run();
    for (const name of COLLECTIONS) {
      db.prepare("INSERT INTO collections (name, root, mask, updated_at) VALUES (?, ?, '**/*.md', 'now')").run(
        name,
        `/synthetic/${name}`,
      );
    }
    vectors.adopt({ spec, fingerprint, dims: D, maxTokens: 512, chunker: 'synthetic' });
  });
  const content = db.prepare<[string, string]>('INSERT INTO content (hash, body) VALUES (?, ?)');
  const chunk = db.prepare<[string, string]>(
    'INSERT INTO chunks (content_hash, seq, hash, start_offset, end_offset, line) VALUES (?, 0, ?, 0, 1, 1)',
  );
  const document = db.prepare<[string, string, string, string, string]>(
    `INSERT INTO documents (collection, path, docid, title, hash, mtime_ms, size, indexed_at)
   VALUES (?, ?, ?, ?, ?, 0, 1, 'now')`,
  );
  const bodyOf = (n: number): string =>
    prose === undefined ? `${n}` : (prose.paragraphs[n % prose.paragraphs.length] as string);
  const titleOf = (n: number): string =>
    prose === undefined ? 't' : (prose.headings[n % prose.headings.length] as string);
  let batch: { chunkHash: string; vector: Float32Array }[] = [];
  let i = 0;
  const flush = () => {
    const rows = batch;
    batch = [];
    db.transaction(() => {
      for (const row of rows) {
        const n = Number(row.chunkHash.slice(1));
        content.run(`h${n}`, bodyOf(n));
        chunk.run(`h${n}`, row.chunkHash);
        document.run(
          COLLECTIONS[n % COLLECTIONS.length] as string,
          `f${Math.floor(n / 500)}/n${n}.md`,
          `d${n}`,
          titleOf(n),
          `h${n}`,
        );
      }
      const t = performance.now();
      vectors.write(fingerprint, D, rows, 'now');
      writeMs += performance.now() - t;
    });
  };
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
  buildS = (performance.now() - started) / 1000;
  log(`built in ${buildS.toFixed(0)} s (vector writes ${(writeMs / 1000).toFixed(0)} s); measuring`);
}

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
const settings: { label: string; probes?: (cells: number, widen: number) => number }[] = [{ label: 'default' }];
for (const n of flag('--probes', '').split(',').filter(Boolean).map(Number)) {
  settings.push({ label: String(n), probes: (cells, widen) => Math.min(cells, n * 4 ** widen) });
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
    const probes =
      cellCount === 0 ? '—' : setting.label === 'default' ? `default (${defaultProbes(cellCount, 0)})` : setting.label;
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
  `\`npx tsx bench/scale/synthetic.ts --n ${N} --dims ${D} --queries ${Q}${MCP ? ' --mcp' : ''}${settings.length > 1 ? ` --probes ${flag('--probes', '')}` : ''}\` on Node ${process.version}, sqlite-vec 0.1.9; load ${loadAtStart} at start, ${loadAverage()} at end. ${REUSE ? 'Index reused from an earlier `--keep` run (`--reuse`).' : `Build ${buildS.toFixed(0)} s, of which \`Vectors.write\` (embeddings, triggers, int8 codes, cell training) ${(writeMs / 1000).toFixed(0)} s.`} Backend: ${figures.backend}.`,
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
if (MCP) lines.splice(-1, 0, '', ...(await overMcp()));
if (!existsSync(OUT)) {
  writeFileSync(
    OUT,
    '# The vector index on synthetic vectors (int8 codes in vec0 partitioned by collection, exact re-score from `embeddings.vector`)\n\n',
  );
}
appendFileSync(OUT, `${lines.join('\n')}\n`);
process.stdout.write(`${lines.join('\n')}\n`);
if (!args.includes('--keep')) rmSync(dir, { recursive: true, force: true });

/**
 * The `query` tool over MCP on this index: `qmd mcp` (the build in dist/, query worker on)
 * with the D-dim tiny model for query embeddings and the loop probe preloaded; 12 calls of
 * each kind after one warm-up call, p50 / p95, and the longest the main thread was held.
 */
async function overMcp(): Promise<string[]> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [QMD_BIN, 'mcp'],
    env: {
      ...qmdEnv({ QMD_INDEX: file, QMD_EMBED_MODEL: modelFile }),
      NODE_OPTIONS: `--import=${join(ROOT, 'bench/scale/loop-probe.mjs')}`,
    } as Record<string, string>,
    stderr: 'pipe',
  });
  const blocks: number[] = [];
  transport.stderr?.on('data', (data: Buffer) => {
    for (const match of data.toString('utf8').matchAll(/\[loop-probe\] blocked (\d+) ms/g))
      blocks.push(Number(match[1]));
  });
  const client = new Client({ name: 'qmd-synthetic-bench', version: '0.0.0' });
  await client.connect(transport);
  const words = (prose?.paragraphs ?? []).slice(0, 600).flatMap((p) => p.toLowerCase().match(/[a-z]{6,}/g) ?? []);
  const texts = Array.from({ length: 12 }, (_, k) => `${words[k * 37]} ${words[k * 53 + 1]}`);
  const call = async (searches: unknown[], collections?: string[]) => {
    const t = performance.now();
    const result = await client.callTool(
      { name: 'query', arguments: { searches, rerank: false, limit: 10, ...(collections && { collections }) } },
      { timeout: 600_000 },
    );
    if (result.isError) throw new Error(`query failed: ${JSON.stringify(result.content).slice(0, 300)}`);
    return performance.now() - t;
  };
  await call([
    { type: 'lex', query: 'warm' },
    { type: 'vec', query: 'warm up' },
  ]);
  const out = [
    `Over MCP (the \`query\` tool, \`rerank: false\`, a page of 10; \`qmd mcp\` from dist/ with the query worker, queries embedded by a generated ${D}-dim tiny model; documents are one prose paragraph each; 12 calls a row; "longest block" is the server's main thread, loop probe, ≥ 20 ms reported):`,
    '',
    '| call | p50 ms | p95 ms | longest block ms |',
    '|---|---:|---:|---:|',
  ];
  for (const [kind, searches] of [
    ['bm25', (q: string) => [{ type: 'lex', query: q }]],
    ['vector', (q: string) => [{ type: 'vec', query: q }]],
    [
      'hybrid',
      (q: string) => [
        { type: 'lex', query: q },
        { type: 'vec', query: q },
      ],
    ],
  ] as const) {
    for (const collections of [undefined, ['c1']]) {
      blocks.length = 0;
      const times: number[] = [];
      for (const text of texts) times.push(await call(searches(text), collections));
      out.push(
        `| ${kind}${collections ? ', collections [c1]' : ''} | ${p(times, 0.5).toFixed(0)} | ${p(times, 0.95).toFixed(0)} | ${blocks.length === 0 ? '< 20' : Math.max(...blocks)} |`,
      );
      log(out.at(-1) as string);
    }
  }
  await client.close();
  return [...out, ''];
}
