/**
 * Benchmark and experiment for embeddings (not part of CI). Three measurements on the built
 * binary (`npm run build` first), with the tiny generated model (nothing is downloaded):
 *
 * 1. `qmd embed` throughput on a generated corpus: chunks/s and files/s, the whole command
 *    (model load included) and the embedding phase alone, for 1 llama.cpp thread and the
 *    default (one per core).
 * 2. `qmd mcp` start-up (spawn → `initialize` answered) without a configured model (the
 *    default `hf:` URI, never loaded at start-up) and with one (`QMD_EMBED_MODEL` = the tiny
 *    model), interleaved A B A B so load drifts hit both alike; p50/p90. Plus, for scale, the
 *    first hybrid query of a fresh server (the model loads then).
 * 3. The crash experiment: N spawned `qmd mcp`, each closing stdin the moment an embedding
 *    enters llama.cpp (`QMD_DEBUG_EMBED`), with our dispose (waits for the running call)
 *    against two naive orders (context → model → llama, and all at once, neither waiting:
 *    the contender `bench/contenders/naive-server.ts`, the same server with another embedder).
 *    Counts exit codes and signals.
 *
 * Run: `npm run build && npx tsx bench/embed.ts [--files 100] [--startup 10] [--crash 30] [--only SECTION]`
 * Prints tables and writes `bench/results-embed.md`. Numbers depend on the machine's load:
 * the load average is recorded with them.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Client } from '@modelcontextprotocol/client';
import { ChildTransport } from '../test/support/child-transport.js';
import { generateCorpus } from '../test/support/corpus.js';
import { tinyModelPath } from '../test/support/gguf.js';
import { QMD_BIN, qmdEnv, runQmd, spawnMcp } from '../test/support/qmd.js';
import { spawnProcess, waitForExit } from '../test/support/spawn.js';
import { NAIVE_SERVER, TSX_LOADER } from './lib/paths.js';

const { values } = parseArgs({
  options: {
    files: { type: 'string', default: '100' },
    startup: { type: 'string', default: '10' },
    crash: { type: 'string', default: '30' },
    only: { type: 'string' },
  },
});
/** `--only startup` (or `throughput`, `crash`): run one section and print it; the results file is written by full runs only. */
const ONLY = values.only;
const runs = (section: string): boolean => ONLY === undefined || ONLY === section;
const FILES = Number(values.files);
const STARTUP_RUNS = Number(values.startup);
const CRASH_RUNS = Number(values.crash);

if (!existsSync(QMD_BIN)) {
  console.error(`no ${QMD_BIN}: run npm run build first`);
  process.exit(2);
}

mkdirSync(join(process.cwd(), 'bench', '.tmp'), { recursive: true });
const root = mkdtempSync(join(process.cwd(), 'bench', '.tmp', 'embed-'));
const model = tinyModelPath();
const report: string[] = [];
const say = (line = ''): void => {
  console.log(line);
  report.push(line);
};
const load = (): string => loadavg()[0]?.toFixed(2) ?? '?';
const quantile = (values: number[], q: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
};

interface EmbedJson {
  documents: number;
  chunks: number;
  embedded: number;
  ms: number;
}

async function throughput(): Promise<void> {
  say(`## 1. qmd embed throughput (${FILES} generated notes, tiny model)`);
  say();
  const notes = join(root, 'corpus');
  const corpus = generateCorpus(notes, { files: FILES, seed: 11 });
  say(
    `Corpus: ${corpus.files.length} files, ${(corpus.bytes / 1024).toFixed(0)} KiB. Load average at start ${load()}.`,
  );
  say();
  say('| threads | chunks | command s | chunks/s | files/s | embed() s | chunks/s in embed() |');
  say('|---|---|---|---|---|---|---|');
  for (const threads of ['1', String(availableParallelism())]) {
    const index = join(root, `throughput-${threads}.sqlite`);
    const env = qmdEnv(index, { QMD_EMBED_MODEL: model, QMD_EMBED_THREADS: threads });
    const added = await runQmd(['collection', 'add', notes, '--name', 'bench'], env);
    if (added.code !== 0) throw new Error(added.stderr);
    const started = performance.now();
    const run = await runQmd(['embed', '--json'], env);
    const seconds = (performance.now() - started) / 1000;
    if (run.code !== 0) throw new Error(run.stderr);
    const result = JSON.parse(run.stdout) as EmbedJson;
    const phase = result.ms / 1000; // the store's own time: model load, chunking, embedding, writes
    say(
      `| ${threads} | ${result.embedded} | ${seconds.toFixed(2)} | ${(result.embedded / seconds).toFixed(1)} | ` +
        `${(FILES / seconds).toFixed(1)} | ${phase.toFixed(2)} | ${(result.embedded / phase).toFixed(1)} |`,
    );
  }
  say();
  say(
    '"command s": spawn to exit. "embed() s": the report\'s own time (model load, chunking, embedding and writes; not node start-up).',
  );
  say();
}

/** An index of `files` notes embedded with the tiny model (one thread), for the server runs. */
async function embeddedIndex(name: string, files: number): Promise<string> {
  const index = join(root, `${name}.sqlite`);
  if (existsSync(index)) return index;
  const notes = join(root, `${name}-notes`);
  generateCorpus(notes, { files, seed: 12 });
  const env = qmdEnv(index, { QMD_EMBED_MODEL: model, QMD_EMBED_THREADS: '1' });
  for (const args of [['collection', 'add', notes, '--name', 'bench'], ['embed']]) {
    const run = await runQmd(args, env);
    if (run.code !== 0) throw new Error(run.stderr);
  }
  return index;
}

async function initializeMs(env: NodeJS.ProcessEnv): Promise<number> {
  const started = performance.now();
  const server = spawnMcp(env);
  const transport = new ChildTransport(server.child);
  try {
    const client = new Client({ name: 'bench', version: '1.0.0' });
    await client.connect(transport);
    const ms = performance.now() - started;
    await transport.close();
    await waitForExit(server);
    return ms;
  } finally {
    server.kill();
  }
}

async function firstQueryMs(env: NodeJS.ProcessEnv): Promise<number> {
  const server = spawnMcp(env);
  const transport = new ChildTransport(server.child);
  try {
    const client = new Client({ name: 'bench', version: '1.0.0' });
    await client.connect(transport);
    const started = performance.now();
    const result = await client.callTool({ name: 'query', arguments: { query: 'search notes' } });
    const ms = performance.now() - started;
    if ((result.structuredContent as { mode?: string }).mode !== 'hybrid') throw new Error('expected a hybrid query');
    await transport.close();
    await waitForExit(server);
    return ms;
  } finally {
    server.kill();
  }
}

async function startup(): Promise<void> {
  say(`## 2. qmd mcp start-up, spawn → initialize answered (${STARTUP_RUNS} runs each, interleaved)`);
  say();
  const index = await embeddedIndex('servers', 20);
  const without = qmdEnv(index); // the default hf: model: configured implicitly, never loaded at start-up
  const withModel = qmdEnv(index, { QMD_EMBED_MODEL: model, QMD_EMBED_THREADS: '1' });
  const a: number[] = [];
  const b: number[] = [];
  await initializeMs(without); // warm the page cache once, not counted
  for (let i = 0; i < STARTUP_RUNS; i++) {
    a.push(await initializeMs(without));
    b.push(await initializeMs(withModel));
  }
  const firstQuery: number[] = [];
  for (let i = 0; i < Math.min(5, STARTUP_RUNS); i++) firstQuery.push(await firstQueryMs(withModel));
  say(`Load average ${load()}.`);
  say();
  say('| configuration | p50 ms | p90 ms | min ms | max ms |');
  say('|---|---|---|---|---|');
  const row = (name: string, xs: number[]): void =>
    say(
      `| ${name} | ${quantile(xs, 0.5).toFixed(0)} | ${quantile(xs, 0.9).toFixed(0)} | ${Math.min(...xs).toFixed(0)} | ${Math.max(...xs).toFixed(0)} |`,
    );
  row('no model configured (default hf: URI)', a);
  row('QMD_EMBED_MODEL = tiny model', b);
  row("for scale: a fresh server's first hybrid query (call → answer; the model loads)", firstQuery);
  say();
}

interface CrashOutcome {
  code: number | null;
  signal: NodeJS.Signals | null;
  running: boolean;
}

type Variant = 'ours' | 'ordered' | 'all';

async function crashRun(index: string, variant: Variant): Promise<CrashOutcome> {
  const extra: Record<string, string> = { QMD_EMBED_MODEL: model, QMD_EMBED_THREADS: '1', QMD_DEBUG_EMBED: '1' };
  const server =
    variant === 'ours'
      ? spawnMcp(qmdEnv(index, extra))
      : spawnProcess(process.execPath, ['--import', TSX_LOADER, NAIVE_SERVER, variant], { env: qmdEnv(index, extra) });
  const transport = new ChildTransport(server.child);
  try {
    const client = new Client({ name: 'crash', version: '1.0.0' });
    await client.connect(transport);
    const query = Array.from({ length: 120 }, (_, i) => `search notes ${i}`).join(' ');
    const pending = client.callTool({ name: 'query', arguments: { query } }).catch(() => undefined);
    await server.waitForStderr('QMD debug: embedding call entering llama.cpp', 60_000);
    await transport.close();
    const exit = await waitForExit(server, 60_000);
    await pending;
    return { ...exit, running: /closing: 1 embedding call\(s\) running natively/.test(server.stderr()) };
  } finally {
    server.kill();
  }
}

async function crashes(): Promise<void> {
  say(`## 3. Crash experiment: stdin closed while an embedding runs natively (${CRASH_RUNS} runs each)`);
  say();
  const index = await embeddedIndex('servers', 20);
  const outcomes: Record<Variant, CrashOutcome[]> = { ours: [], ordered: [], all: [] };
  // Interleaved, so every variant sees the same machine.
  for (let i = 0; i < CRASH_RUNS; i++) {
    for (const variant of ['ours', 'ordered', 'all'] as const) outcomes[variant].push(await crashRun(index, variant));
  }
  say(`Load average ${load()}.`);
  say();
  say('| dispose | runs | exit 0 | exit ≠ 0 | killed by signal | call running at close |');
  say('|---|---|---|---|---|---|');
  for (const [name, list] of [
    ['ours: Embedder.dispose() waits for the running call', outcomes.ours],
    ['naive: context → model → llama, not waiting (naive-server.ts ordered)', outcomes.ordered],
    ['naive: all three at once, not waiting (naive-server.ts all)', outcomes.all],
  ] as const) {
    const signals = new Map<string, number>();
    for (const o of list) if (o.signal) signals.set(o.signal, (signals.get(o.signal) ?? 0) + 1);
    const bySignal = [...signals].map(([s, n]) => `${s} ${n}`).join(', ') || '0';
    say(
      `| ${name} | ${list.length} | ${list.filter((o) => o.code === 0).length} | ` +
        `${list.filter((o) => o.code !== null && o.code !== 0).length} | ${bySignal} | ${list.filter((o) => o.running).length} |`,
    );
  }
  say();
}

try {
  say('# qmd embeddings benchmark');
  say();
  say(`${new Date().toISOString()}, node ${process.version}, ${availableParallelism()} cores, load average ${load()}.`);
  const only = ONLY === undefined ? '' : ` --only ${ONLY}`;
  say(
    'Command: `npm run build && npx tsx bench/embed.ts' +
      ` --files ${FILES} --startup ${STARTUP_RUNS} --crash ${CRASH_RUNS}${only}\`.`,
  );
  say();
  if (runs('throughput')) await throughput();
  if (runs('startup')) await startup();
  if (runs('crash') && CRASH_RUNS > 0) await crashes();
  if (ONLY === undefined) {
    writeFileSync(join(process.cwd(), 'bench', 'results-embed.md'), `${report.join('\n')}\n`);
    console.log('\nwrote bench/results-embed.md');
  }
} finally {
  rmSync(root, { recursive: true, force: true });
}
