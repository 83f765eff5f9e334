import { mkdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { openStore } from '../../src/core/index.js';
import type { Store } from '../../src/core/types.js';
import { type CachedCorpus, cachedCorpus, querySet } from '../lib/corpus.js';
import { tinyModel } from '../lib/fixture.js';
import { type Contender, interleave } from '../lib/interleave.js';
import { latencyTable } from '../lib/latency.js';
import { QMD_BIN, TMP } from '../lib/paths.js';
import { PEER_BIN, PEER_VERSION, peerEnv, peerUnavailable } from '../lib/peer.js';
import { lastLine, qmdEnv, runCommand, runQmd, runQmdOk } from '../lib/qmd.js';
import { summarize } from '../lib/stats.js';
import type { Benchmark, BenchmarkReport, Cell, Goal, Table } from '../lib/types.js';

interface Indexed {
  corpus: CachedCorpus;
  index: string;
  queries: string[];
  /** The peer's environment with its own index of the same notes, when it ran. */
  peer?: NodeJS.ProcessEnv;
}

/** The rest of an indexing row that could not be measured (the table has 8 columns). */
const DASHES = ['—', '—', '—', '—', '—', '—'];

/** Notes in the embedded index of the hybrid contender (the tiny model embeds 60–400 ms a chunk here). */
const HYBRID_NOTES = 30;

/**
 * The peer's `collection add` of the same notes into a fresh home, `runs` times; keeps the last
 * home for its queries. Its wall time is the whole command (its launcher re-spawns node).
 */
async function measurePeerIndexing(
  corpus: CachedCorpus,
  runs: number,
  dir: string,
  log: (line: string) => void,
): Promise<{ row: Cell[]; env?: NodeJS.ProcessEnv; skip?: string }> {
  const label = `${corpus.files.toLocaleString('en-US')} notes, peer (qmd ${PEER_VERSION})`;
  const unavailable = peerUnavailable();
  if (unavailable !== undefined) return { row: [label, unavailable, ...DASHES], skip: unavailable };
  const walls: number[] = [];
  let env: NodeJS.ProcessEnv | undefined;
  for (let run = 0; run < runs; run++) {
    const home = join(dir, `peer-${corpus.files}-${run}`);
    env = peerEnv(home);
    log(`search: the peer indexing ${corpus.files} notes, run ${run + 1}/${runs}`);
    const result = await runCommand(
      process.execPath,
      [PEER_BIN, 'collection', 'add', corpus.dir, '--name', 'notes'],
      env,
    );
    if (result.code !== 0) {
      const why = `its collection add failed (${result.code ?? result.signal}): ${lastLine(result.stderr)}`;
      return { row: [label, why, ...DASHES], skip: why };
    }
    walls.push(result.ms / 1000);
    if (run < runs - 1) rmSync(home, { recursive: true, force: true });
  }
  const wall = summarize(walls).p50;
  const mb = corpus.bytes / 2 ** 20;
  const size = statSync(String(env?.INDEX_PATH)).size / 2 ** 20;
  return { env, row: [label, runs, mb, size, wall * 1000, corpus.files / wall, '—', mb / wall] };
}

/** A `qmd collection add` + `qmd embed` of a small corpus with the tiny model: what the hybrid row queries. */
async function embeddedIndex(
  dir: string,
  quick: boolean,
  log: (line: string) => void,
): Promise<{ corpus: CachedCorpus; index: string; model: string } | { skip: string }> {
  const corpus = cachedCorpus(quick ? 10 : HYBRID_NOTES);
  const model = tinyModel();
  const index = join(dir, 'hybrid.sqlite');
  const env = qmdEnv({ QMD_INDEX: index, QMD_EMBED_MODEL: model });
  log(`search: indexing and embedding ${corpus.files} notes with the tiny model (hybrid row)`);
  await runQmdOk(['collection', 'add', corpus.dir, '--name', 'notes'], env);
  const run = await runQmd(['embed'], { ...env, QMD_EMBED_THREADS: '1' });
  if (run.code !== 0) return { skip: `qmd embed failed (${run.code ?? run.signal}): ${lastLine(run.stderr)}` };
  return { corpus, index, model };
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
  client?: Client;
  queries: string[];
  /** The `query` tool's arguments for one query: ours take `{ query }`, the peer's lex sub-queries. */
  args: (query: string) => Record<string, unknown>;
}

/** An SDK client on a spawned server. */
async function connect(args: string[], env: NodeJS.ProcessEnv): Promise<Client> {
  const client = new Client({ name: 'qmd-bench', version: '0.0.0' });
  await client.connect(
    new StdioClientTransport({ command: process.execPath, args, env: env as Record<string, string>, stderr: 'ignore' }),
  );
  await client.listTools();
  return client;
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
        const peer = await measurePeerIndexing(corpus, runs, dir, log);
        indexRows.push(peer.row);
        largestRate = measured.wallFilesPerS;
        indexed.push({ corpus, index: measured.index, queries: querySet(corpus), peer: peer.env });
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

      // Over MCP: one spawned server per corpus (and the peer's beside each, and a hybrid one),
      // all alive, calls interleaved.
      const servers: OverMcp[] = [];
      const ours = (query: string) => ({ query });
      // The peer's BM25 alone: a `lex` sub-query, no reranking (no model, as ours without embeddings).
      const peerLex = (query: string) => ({ searches: [{ type: 'lex', query }], rerank: false });
      try {
        for (const i of indexed) {
          const files = i.corpus.files.toLocaleString('en-US');
          servers.push({
            name: `${files} notes, qmd mcp (BM25)`,
            client: await connect([QMD_BIN, 'mcp'], qmdEnv({ QMD_INDEX: i.index })),
            queries: i.queries,
            args: ours,
          });
          const name = `${files} notes, peer (BM25: lex, no rerank)`;
          servers.push(
            i.peer === undefined
              ? { name, queries: [], args: peerLex, skip: peerUnavailable() ?? 'its index could not be built' }
              : { name, client: await connect([PEER_BIN, 'mcp'], i.peer), queries: i.queries, args: peerLex },
          );
        }
        const hybrid = await embeddedIndex(dir, quick, log);
        const hybridName = `${'corpus' in hybrid ? hybrid.corpus.files : HYBRID_NOTES} notes embedded, qmd mcp (hybrid: BM25 + vectors, tiny model)`;
        servers.push(
          'corpus' in hybrid
            ? {
                name: hybridName,
                client: await connect(
                  [QMD_BIN, 'mcp'],
                  qmdEnv({ QMD_INDEX: hybrid.index, QMD_EMBED_MODEL: hybrid.model }),
                ),
                queries: querySet(hybrid.corpus),
                args: ours,
              }
            : { name: hybridName, queries: [], args: ours, skip: hybrid.skip },
        );
        const rounds = quick ? 1 : 10;
        const samples = await interleave(
          servers,
          { rounds, warmup: 1, onRound: (r, n) => log(`search over MCP: round ${r}/${n}`) },
          (s) =>
            pass(s.queries, async (query) => {
              const result = await (s.client as Client).callTool(
                { name: 'query', arguments: s.args(query) },
                { timeout: 120_000 },
              );
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
        for (const s of servers) await s.client?.close();
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
        `The peer (qmd ${PEER_VERSION}) indexes the same notes with its own \`collection add\` into a fresh home each run (its wall time includes its launcher re-spawning node; it reports no store time). Over MCP it answers its \`query\` tool with a \`lex\` sub-query and \`rerank: false\`: its BM25 alone. Its hybrid search needs its own embedding, expansion and reranking models from Hugging Face, which this machine cannot reach: no peer hybrid row.`,
        `Hybrid: qmd's \`query\` tool on ${quick ? 10 : HYBRID_NOTES} notes embedded with the tiny test model (random weights, ~400 KB): BM25 and vector search fused, the query embedded each call. It measures the path (llama.cpp embedding + sqlite-vec + fusion), not a real model's cost.`,
      ],
    };
  },
};
