import { mkdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { openStore } from '../../src/store/index.js';
import type { Store } from '../../src/store/types.js';
import { type CachedCorpus, cachedCorpus, querySet } from '../lib/corpus.js';
import { type Contender, interleave } from '../lib/interleave.js';
import { latencyTable } from '../lib/latency.js';
import { QMD_BIN, TMP } from '../lib/paths.js';
import { qmdEnv, runQmdOk } from '../lib/qmd.js';
import { summarize } from '../lib/stats.js';
import type { Benchmark, BenchmarkReport, Cell, Goal, Table } from '../lib/types.js';

interface Indexed {
  corpus: CachedCorpus;
  index: string;
  queries: string[];
}

/** Runs `qmd collection add` `runs` times into fresh indexes; keeps the last for the queries. */
async function measureIndexing(
  corpus: CachedCorpus,
  runs: number,
  dir: string,
  log: (line: string) => void,
): Promise<{ row: Cell[]; wallFilesPerS: number; index: string }> {
  const walls: number[] = [];
  const own: number[] = [];
  let index = '';
  for (let run = 0; run < runs; run++) {
    index = join(dir, `index-${corpus.files}-${run}.sqlite`);
    log(`search: indexing ${corpus.files} notes, run ${run + 1}/${runs}`);
    const result = await runQmdOk(['collection', 'add', corpus.dir, '--name', 'notes'], qmdEnv({ QMD_INDEX: index }));
    walls.push(result.ms / 1000);
    // "… in 0.76 s": the store's own time, without node's start-up and module loading.
    const seconds = /in ([\d.]+) s\s*$/m.exec(result.stdout)?.[1];
    if (seconds !== undefined) own.push(Number(seconds));
    if (run < runs - 1) rmSync(index, { force: true });
  }
  const wall = summarize(walls).p50;
  const store = own.length > 0 ? summarize(own).p50 : Number.NaN;
  const mb = corpus.bytes / 2 ** 20;
  return {
    index,
    wallFilesPerS: corpus.files / wall,
    row: [
      `${corpus.files.toLocaleString('en-US')} notes`,
      runs,
      mb,
      statSync(index).size / 2 ** 20,
      wall * 1000,
      corpus.files / wall,
      corpus.files / store,
      mb / wall,
    ],
  };
}

interface InProcess extends Contender {
  store: Store;
  queries: string[];
  api: 'query' | 'search';
}

interface OverMcp extends Contender {
  client: Client;
  queries: string[];
}

/** One pass over the query set: the latency of each call, in ms. */
async function pass(queries: readonly string[], call: (query: string) => Promise<unknown>): Promise<number[]> {
  const times: number[] = [];
  for (const query of queries) {
    const started = performance.now();
    await call(query);
    times.push(performance.now() - started);
  }
  return times;
}

/**
 * Benchmark 5: BM25 on generated corpora. Indexing throughput of `qmd collection add` (the
 * whole command as a user runs it, and the store's own time it reports), then `query`
 * latency in-process (`store.query`, what the MCP tool runs, and `store.search`) and over MCP
 * (a spawned `qmd mcp` and the SDK's `Client`, as an agent sees it). Corpora are generated
 * once into `bench/.tmp/`; indexes are rebuilt every run, since building them is measured.
 */
export const searchBenchmark: Benchmark = {
  name: 'search',
  title: 'Search latency and indexing throughput',
  async run({ quick, log }): Promise<BenchmarkReport> {
    const sizes = quick ? [100, 200] : [1000, 10_000];
    const dir = join(TMP, `search-${process.pid}`);
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    const tables: Table[] = [];
    const goals: Goal[] = [];
    try {
      const indexed: Indexed[] = [];
      const indexRows: Cell[][] = [];
      let largestRate = Number.NaN;
      for (const files of sizes) {
        log(`search: corpus of ${files} notes (generated once, cached in bench/.tmp)`);
        const corpus = cachedCorpus(files);
        const runs = quick ? 1 : files <= 1000 ? 3 : 1;
        const measured = await measureIndexing(corpus, runs, dir, log);
        indexRows.push(measured.row);
        largestRate = measured.wallFilesPerS;
        indexed.push({ corpus, index: measured.index, queries: querySet(corpus) });
      }
      tables.push({
        title: '`qmd collection add` (p50 over runs; "wall" is the whole command, "store" the time it reports)',
        columns: [
          { label: 'corpus', unit: 'text' },
          { label: 'runs', unit: 'count' },
          { label: 'markdown MB', unit: 'MB' },
          { label: 'index MB', unit: 'MB' },
          { label: 'wall', unit: 'ms' },
          { label: 'files/s wall', unit: 'per-s' },
          { label: 'files/s store', unit: 'per-s' },
          { label: 'MB/s wall', unit: 'MB' },
        ],
        rows: indexRows,
      });
      const largest = indexed.at(-1) as Indexed;
      goals.push({
        name: `indexing throughput, ${largest.corpus.files.toLocaleString('en-US')} notes (whole command)`,
        target: '≥ 1,000 files/s',
        measured: `${Math.round(largestRate).toLocaleString('en-US')} files/s`,
        met: largestRate >= 1000,
      });

      // In-process.
      const stores = indexed.map((i) => ({ ...i, store: openStore(i.index, { readonly: true }) }));
      try {
        const contenders: InProcess[] = stores.flatMap((s) =>
          (['query', 'search'] as const).map((api) => ({
            name: `${s.corpus.files.toLocaleString('en-US')} notes, store.${api}`,
            store: s.store,
            queries: s.queries,
            api,
          })),
        );
        const rounds = quick ? 2 : 15;
        const samples = await interleave(
          contenders,
          { rounds, warmup: 1, onRound: (r, n) => log(`search in-process: round ${r}/${n}`) },
          (c) => pass(c.queries, (q) => (c.api === 'query' ? c.store.query(q) : Promise.resolve(c.store.search(q)))),
        );
        const { table, summaries } = latencyTable(contenders, samples, {
          title: `In-process BM25 latency (ms per call; ${largest.queries.length} queries per pass, ${rounds} passes)`,
          unit: 'ms',
        });
        tables.push(table);
        const p50 = summaries.get(`${largest.corpus.files.toLocaleString('en-US')} notes, store.query`)?.p50;
        goals.push({
          name: `in-process \`store.query\` p50, ${largest.corpus.files.toLocaleString('en-US')} notes`,
          target: '≤ 5 ms',
          measured: p50 === undefined ? 'n/a' : `${p50.toFixed(2)} ms`,
          met: p50 === undefined ? null : p50 <= 5,
        });
      } finally {
        for (const s of stores) await s.store.close();
      }

      // Over MCP: one spawned server per corpus, both alive, calls interleaved.
      const servers: OverMcp[] = [];
      try {
        for (const i of indexed) {
          const client = new Client({ name: 'qmd-bench', version: '0.0.0' });
          await client.connect(
            new StdioClientTransport({
              command: process.execPath,
              args: [QMD_BIN, 'mcp'],
              env: qmdEnv({ QMD_INDEX: i.index }) as Record<string, string>,
              stderr: 'ignore',
            }),
          );
          await client.listTools();
          servers.push({
            name: `${i.corpus.files.toLocaleString('en-US')} notes, qmd mcp`,
            client,
            queries: i.queries,
          });
        }
        const rounds = quick ? 1 : 10;
        const samples = await interleave(
          servers,
          { rounds, warmup: 1, onRound: (r, n) => log(`search over MCP: round ${r}/${n}`) },
          (s) =>
            pass(s.queries, async (query) => {
              const result = await s.client.callTool({ name: 'query', arguments: { query } });
              if (result.isError) throw new Error(`query failed: ${JSON.stringify(result.content)}`);
            }),
        );
        tables.push(
          latencyTable(servers, samples, {
            title: `Over MCP: \`query\` tool round trip from an SDK Client over stdio (ms; ${rounds} passes)`,
            unit: 'ms',
          }).table,
        );
      } finally {
        for (const s of servers) await s.client.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    return {
      tables,
      goals,
      notes: [
        `Corpora from \`generateCorpus\` (seed 7): ${sizes.join(' and ')} notes. Queries: common words, pairs, planted rare words, and three-word mixes that fall back to any-term.`,
        'Indexes are rebuilt every run (their build is the throughput figure); the 1,000-note corpus is indexed 3 times, the 10,000-note one once.',
      ],
    };
  },
};
