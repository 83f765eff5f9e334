/**
 * `npx tsx bench/query-awake.ts [--sizes 10000] [--rounds 2] [--cell-budget-ms 40000] [--out FILE]`:
 * how long `qmd mcp`'s main thread (where the lifecycle hears stdin EOF, signals and its
 * deadlines) is held during the heaviest queries, with the query worker (docs/design.md §8.4)
 * and without it (`QMD_QUERY_WORKER=0`), writing bench/results-query-awake.md.
 *
 * Per size: the scale corpus (bench/scale/corpus.ts, real markdown prose from node_modules, built
 * once into bench/.tmp) indexed as 4 collections and its vectors written through the store's own
 * `embed()` with the stand-in embedder (bench/scale/embed-ours.ts), kept in bench/.tmp for the
 * next run; then two `qmd mcp` servers on that index, the tiny model for query vectors, one
 * with the worker and one without, each with bench/scale/loop-probe.mjs preloaded (a 10 ms timer
 * on the main thread: the longest lateness is the longest the loop was held). The `query` tool
 * is called as `searches` of lex / vec / lex+vec, without and with `collections: ["c1"]`
 * (a KNN in that partition of the int8 codes, schema 4), and the `status` tool, calls
 * alternating between the servers.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { tinyModel } from './lib/fixture.js';
import { loadAverage, machineInfo } from './lib/machine.js';
import { QMD_BIN, ROOT, TMP, TSX_LOADER } from './lib/paths.js';
import { qmdEnv, runQmdOk } from './lib/qmd.js';
import { quantile } from './lib/stats.js';
import { renderMarkdown, renderText } from './lib/table.js';
import type { Cell, Table } from './lib/types.js';
import { collectionRoot, describeCorpus, type ScaleCorpus, scaleCorpus } from './scale/corpus.js';

const args = process.argv.slice(2);
const flag = (name: string): string | undefined => {
  const i = args.indexOf(name);
  return i === -1 ? undefined : args[i + 1];
};
const SIZES = (flag('--sizes') ?? '10000').split(',').map(Number);
const ROUNDS = Number(flag('--rounds') ?? 2);
const QUERIES = Number(flag('--queries') ?? 6);
/** A kind of call stops repeating for a server once it has spent this long. */
const CELL_BUDGET_MS = Number(flag('--cell-budget-ms') ?? 40_000);
const OUT = flag('--out') ?? join(ROOT, 'bench/results-query-awake.md');
const PROBE = join(ROOT, 'bench/scale/loop-probe.mjs');
/** How long each server is watched with no call, for the noise floor of a shared machine. */
const IDLE_MS = Number(flag('--idle-ms') ?? 5000);

const log = (line: string): void => {
  process.stderr.write(`[query-awake] ${line}\n`);
};

/** The index of `corpus` with its vectors, built once and kept (`.ready` is written last). */
async function indexOf(corpus: ScaleCorpus, model: string): Promise<string> {
  const dir = join(TMP, `query-awake-${corpus.notes}`);
  const index = join(dir, 'qmd.sqlite');
  if (existsSync(join(dir, '.ready'))) return index;
  mkdirSync(dir, { recursive: true });
  const env = qmdEnv({ QMD_INDEX: index });
  for (const collection of corpus.collections) {
    log(`collection add ${collection}`);
    await runQmdOk(['collection', 'add', collectionRoot(corpus, collection), '--name', collection], env, 3_600_000);
  }
  log('writing vectors (stand-in embedder)');
  const run = spawnSync(
    process.execPath,
    ['--import', TSX_LOADER, join(ROOT, 'bench/scale/embed-ours.ts'), index, model],
    { env, encoding: 'utf8', maxBuffer: 64 * 2 ** 20 },
  );
  if (run.status !== 0) throw new Error(`vectors failed: ${run.stderr.slice(-2000)}`);
  writeFileSync(join(dir, '.ready'), run.stdout);
  return index;
}

type Mode = 'worker' | 'inline';

interface Server {
  mode: Mode;
  client: Client;
  blocks: number[];
}

async function startServer(mode: Mode, index: string, model: string): Promise<Server> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [QMD_BIN, 'mcp'],
    env: {
      ...qmdEnv({ QMD_INDEX: index, QMD_EMBED_MODEL: model, ...(mode === 'inline' && { QMD_QUERY_WORKER: '0' }) }),
      NODE_OPTIONS: `--import=${PROBE}`,
    } as Record<string, string>,
    stderr: 'pipe',
  });
  const server: Server = { mode, client: new Client({ name: 'qmd-query-awake', version: '0.0.0' }), blocks: [] };
  let buffered = '';
  transport.stderr?.on('data', (data: Buffer) => {
    const lines = (buffered + data.toString('utf8')).split('\n');
    buffered = lines.pop() ?? '';
    for (const line of lines) {
      const ms = /\[loop-probe\] blocked (\d+) ms/.exec(line)?.[1];
      if (ms !== undefined) server.blocks.push(Number(ms));
    }
  });
  await server.client.connect(transport);
  // The first call loads the model: not measured.
  await call(server, searchesFor('hybrid', 'warm up'), undefined);
  return server;
}

type Kind = 'bm25' | 'vector' | 'hybrid' | 'status';
/** `status` (the MCP tool: its counts read every chunk) has no filter: it runs in the unfiltered pass only. */
const KINDS: Kind[] = ['bm25', 'vector', 'hybrid', 'status'];

function searchesFor(kind: Exclude<Kind, 'status'>, query: string): Array<{ type: 'lex' | 'vec'; query: string }> {
  const lex = { type: 'lex' as const, query };
  const vec = { type: 'vec' as const, query };
  return kind === 'bm25' ? [lex] : kind === 'vector' ? [vec] : [lex, vec];
}

async function call(
  server: Server,
  searches: unknown[] | 'status',
  collections: string[] | undefined,
): Promise<number> {
  const started = performance.now();
  const result = await server.client.callTool(
    searches === 'status'
      ? { name: 'status', arguments: {} }
      : { name: 'query', arguments: { searches, limit: 10, ...(collections && { collections }) } },
    { timeout: 300_000 },
  );
  if (result.isError) throw new Error(`${server.mode}: ${JSON.stringify(result.content).slice(0, 300)}`);
  return performance.now() - started;
}

interface Samples {
  times: number[];
  block: number;
}

async function measure(corpus: ScaleCorpus, servers: Server[]): Promise<Map<string, Samples>> {
  const q = corpus.queries;
  const words = [...q.common, ...q.middle, ...q.rare];
  const queries = Array.from({ length: QUERIES }, (_, i) => words[(i * 5) % words.length] as string);
  const cells = new Map<string, Samples>();
  for (const filtered of [false, true]) {
    for (const kind of KINDS) {
      if (filtered && kind === 'status') continue;
      const spent = new Map<Mode, number>();
      for (let round = 0; round < ROUNDS; round++) {
        log(`${kind}${filtered ? ' in c1' : ''}, round ${round + 1}/${ROUNDS}`);
        for (const [i, query] of queries.entries()) {
          for (const server of (round + i) % 2 === 0 ? servers : [...servers].reverse()) {
            if ((spent.get(server.mode) ?? 0) > CELL_BUDGET_MS) continue;
            const key = `${server.mode}|${kind}|${filtered}`;
            const cell = cells.get(key) ?? { times: [], block: 0 };
            cells.set(key, cell);
            server.blocks = [];
            const what = kind === 'status' ? 'status' : searchesFor(kind, query);
            const ms = await call(server, what, filtered ? ['c1'] : undefined);
            // The probe writes its line once the loop is free again: let it arrive.
            await new Promise((resolve) => setTimeout(resolve, 30));
            cell.times.push(ms);
            cell.block = Math.max(cell.block, ...server.blocks);
            spent.set(server.mode, (spent.get(server.mode) ?? 0) + ms);
          }
        }
      }
    }
  }
  return cells;
}

function where(mode: Mode): string {
  return mode === 'worker' ? 'query worker' : 'main thread (QMD_QUERY_WORKER=0)';
}

async function main(): Promise<void> {
  const machine = machineInfo();
  const loadAtStart = loadAverage();
  const started = performance.now();
  const model = tinyModel();
  const rows: Cell[][] = [];
  const notes: string[] = [];
  for (const size of SIZES) {
    const corpus = scaleCorpus(size, log);
    notes.push(describeCorpus(corpus));
    const index = await indexOf(corpus, model);
    const servers: Server[] = [];
    try {
      for (const mode of ['worker', 'inline'] as const) servers.push(await startServer(mode, index, model));
      // The noise floor: how late the timer is with no call at all (other work on the machine).
      const idle = new Map<Mode, number>();
      for (const server of servers) {
        server.blocks = [];
        await new Promise((resolve) => setTimeout(resolve, IDLE_MS));
        idle.set(server.mode, Math.max(0, ...server.blocks));
      }
      for (const server of servers) {
        const block = idle.get(server.mode) ?? 0;
        rows.push([size, `idle, ${IDLE_MS / 1000} s`, where(server.mode), 0, '', '', block === 0 ? '< 20' : block]);
      }
      const cells = await measure(corpus, servers);
      for (const filtered of [false, true]) {
        for (const kind of KINDS) {
          if (filtered && kind === 'status') continue;
          for (const server of servers) {
            const cell = cells.get(`${server.mode}|${kind}|${filtered}`);
            const sorted = [...(cell?.times ?? [])].sort((a, b) => a - b);
            rows.push([
              size,
              `${kind}${filtered ? ', collections [c1]' : ''}`,
              where(server.mode),
              sorted.length,
              quantile(sorted, 0.5),
              quantile(sorted, 0.95),
              cell === undefined || cell.block === 0 ? '< 20' : cell.block,
            ]);
          }
        }
      }
    } finally {
      for (const server of servers) await server.client.close().catch(() => {});
    }
  }
  const table: Table = {
    title: `\`query\` and \`status\` over MCP (stdio, SDK Client), ms; ${ROUNDS} rounds of ${QUERIES} queries, servers alternating; the longest the server's main thread was held during that kind of call`,
    columns: [
      { label: 'notes', unit: 'count' },
      { label: 'call', unit: 'text' },
      { label: 'where the SQL runs', unit: 'text' },
      { label: 'n', unit: 'count' },
      { label: 'p50', unit: 'ms' },
      { label: 'p95', unit: 'ms' },
      { label: 'longest loop block ms', unit: 'count' },
    ],
    rows,
  };
  process.stdout.write(`${renderText(table)}\n`);
  const lines = [
    '# The main thread during the heaviest queries: with and without the query worker',
    '',
    `Generated by \`npx tsx bench/query-awake.ts ${args.join(' ')}\`.`,
    '',
    `- Date: ${machine.date}; commit ${machine.commit}; Node ${process.version}`,
    `- CPU: ${machine.cpuCount} × ${machine.cpuModel}; memory ${machine.memoryGiB} GiB`,
    `- Load average (1/5/15 min): ${loadAtStart} at start, ${loadAverage()} at end; ${Math.round((performance.now() - started) / 1000)} s`,
    '',
    renderMarkdown(table),
    '',
    ...notes.map((n) => `- Corpus: ${n}; vectors written by \`store.embed()\` with the stand-in embedder (64 dims).`),
    '- "longest loop block": the largest lateness of a 10 ms timer on the server\'s main thread (`bench/scale/loop-probe.mjs`, preloaded with NODE_OPTIONS; not in the worker thread) during that kind of call; "< 20" means no tick was 20 ms late. It is how long the lifecycle could not hear stdin EOF, a signal or its drain deadline.',
    `- A kind of call stops repeating for a server after ${CELL_BUDGET_MS / 1000} s of calls (hence n below ${ROUNDS * QUERIES}).`,
    '',
  ];
  writeFileSync(OUT, lines.join('\n'));
  log(`wrote ${OUT}`);
}

await main();
