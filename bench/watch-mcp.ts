/**
 * `npx tsx bench/watch-mcp.ts [--notes 1000] [--rounds 10] [--writes 20] [--out FILE]`: what
 * keeping the index fresh costs `qmd mcp` over stdio, seen from its client, and how fresh it is.
 * Writes bench/results-watch-mcp.md.
 *
 * 1. Exit: stdin EOF → exit and SIGTERM → exit, a fresh server each time, with the watcher
 *    running (the default) and without (`--no-watch`), interleaved round by round (the machine
 *    is shared: the ratio of p50s is the figure, not either alone). Each server is asked
 *    `status` until its watcher has started (or says why it has not) before the trigger.
 * 2. Write → searchable: a note written under the collection's folder, then the `query` tool
 *    asked (lex) every 10 ms until it finds it; and a note deleted, until it is gone. p50, p95.
 *
 * The corpus: `--notes` generated notes (test/support/corpus.ts) in one collection, indexed once
 * into bench/.tmp. Nothing here asserts a speed; the numbers are for the notes.
 */
import { mkdirSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { type CallToolResult, Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { generateCorpus } from '../test/support/corpus.js';
import { loadAverage, machineInfo } from './lib/machine.js';
import { QMD_BIN, ROOT, TMP } from './lib/paths.js';
import { qmdEnv, runQmdOk } from './lib/qmd.js';
import { quantile } from './lib/stats.js';
import { renderMarkdown, renderText } from './lib/table.js';
import type { Cell, Table } from './lib/types.js';

const args = process.argv.slice(2);
const flag = (name: string): string | undefined => {
  const i = args.indexOf(name);
  return i === -1 ? undefined : args[i + 1];
};
const NOTES = Number(flag('--notes') ?? 1000);
const ROUNDS = Number(flag('--rounds') ?? 10);
const WRITES = Number(flag('--writes') ?? 20);
const OUT = flag('--out') ?? join(ROOT, 'bench/results-watch-mcp.md');
/** A change not searchable within this long is counted as missed (and the run goes on). */
const MISS_MS = 30_000;

const log = (line: string): void => {
  process.stderr.write(`[watch-mcp] ${line}\n`);
};

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The corpus indexed once; its notes folder and index. */
async function fixture(): Promise<{ notes: string; index: string; env: NodeJS.ProcessEnv }> {
  const dir = join(TMP, `watch-mcp-${NOTES}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const notes = join(dir, 'notes');
  generateCorpus(notes, { files: NOTES, seed: 41 });
  const index = join(dir, 'index.sqlite');
  const env = qmdEnv({ QMD_INDEX: index, QMD_RERANK_MODEL: 'off', QMD_EXPAND_MODEL: 'off' });
  log(`indexing ${NOTES} notes`);
  await runQmdOk(['collection', 'add', notes, '--name', 'notes'], env, 3_600_000);
  return { notes, index, env };
}

interface Watch {
  role: string;
  off?: string;
}

/** A client of `qmd mcp ARGS` (the SDK's, as hosts run it), once its watcher has started or said why not. */
async function session(env: NodeJS.ProcessEnv, extra: string[]) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [QMD_BIN, 'mcp', ...extra],
    env: env as Record<string, string>,
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  const client = new Client({ name: 'bench-watch', version: '1.0.0' });
  await client.connect(transport);
  const call = async (name: string, a: Record<string, unknown> = {}) =>
    (await client.callTool({ name, arguments: a })) as CallToolResult;
  const watch = async (): Promise<Watch> =>
    ((await call('status')).structuredContent as { watch?: Watch }).watch ?? { role: 'off', off: 'not reported' };
  let state = await watch();
  const started = performance.now();
  while (state.role === 'off' && state.off === 'starting' && performance.now() - started < 60_000) {
    await pause(20);
    state = await watch();
  }
  const child = (transport as unknown as { _process: import('node:child_process').ChildProcess })._process;
  return { client, transport, call, child, state, stderr: () => stderr };
}

async function exitMs(env: NodeJS.ProcessEnv, extra: string[], trigger: 'eof' | 'SIGTERM'): Promise<number> {
  const s = await session(env, extra);
  const exited = new Promise<number>((resolve) => s.child.once('exit', () => resolve(performance.now())));
  const sent = performance.now();
  if (trigger === 'eof') s.child.stdin?.end();
  else s.child.kill('SIGTERM');
  const at = await exited;
  await s.client.close().catch(() => {});
  return at - sent;
}

async function main(): Promise<void> {
  const { notes, env } = await fixture();
  const machine = machineInfo();
  const loadBefore = loadAverage();

  // 1. Exit times, interleaved: watching vs --no-watch, EOF and SIGTERM.
  const contenders = [
    { name: 'watching', extra: [] as string[] },
    { name: '--no-watch', extra: ['--no-watch'] },
  ];
  const exits = new Map<string, number[]>();
  for (let round = 0; round < ROUNDS; round++) {
    log(`exit round ${round + 1}/${ROUNDS}`);
    const order = round % 2 === 0 ? contenders : [...contenders].reverse();
    for (const trigger of ['eof', 'SIGTERM'] as const) {
      for (const c of order) {
        const key = `${trigger}|${c.name}`;
        exits.set(key, [...(exits.get(key) ?? []), await exitMs(env, c.extra, trigger)]);
      }
    }
  }
  const probe = await session(env, []);
  const watching = probe.state;
  log(`the watcher: ${JSON.stringify(watching)}`);

  // 2. Write → searchable, delete → gone, through the watching server.
  const searchable: number[] = [];
  const gone: number[] = [];
  let missed = 0;
  const files = async (word: string): Promise<string[]> => {
    const result = await probe.call('query', { searches: [{ type: 'lex', query: word }] });
    return ((result.structuredContent as { results?: Array<{ file: string }> }).results ?? []).map((r) => r.file);
  };
  const waitUntil = async (fact: () => Promise<boolean>): Promise<number | undefined> => {
    const from = performance.now();
    while (performance.now() - from < MISS_MS) {
      if (await fact()) return performance.now() - from;
      await pause(10);
    }
    return undefined;
  };
  if (watching.role !== 'off') {
    mkdirSync(join(notes, 'bench'), { recursive: true });
    for (let i = 0; i < WRITES; i++) {
      const word = `benchword${i}x${Date.now().toString(36)}`;
      const file = join(notes, 'bench', `w${i}.md`);
      writeFileSync(file, `# Written ${i}\n\n${word} appears here.\n`);
      const found = await waitUntil(async () => (await files(word)).length > 0);
      if (found === undefined) missed++;
      else searchable.push(found);
      unlinkSync(file);
      const left = await waitUntil(async () => (await files(word)).length === 0);
      if (left === undefined) missed++;
      else gone.push(left);
    }
  }
  probe.child.stdin?.end();
  await probe.client.close().catch(() => {});

  const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
  const p = (xs: number[], q: number): Cell => (xs.length === 0 ? 'not measured' : quantile(sorted(xs), q));
  const exitTable: Table = {
    title: `qmd mcp (stdio) exit, ${NOTES} notes: watching vs --no-watch (ms, trigger → exit event, ${ROUNDS} interleaved rounds)`,
    columns: [
      { label: 'trigger', unit: 'text' },
      { label: 'server', unit: 'text' },
      { label: 'p50', unit: 'ms' },
      { label: 'p90', unit: 'ms' },
      { label: 'max', unit: 'ms' },
      { label: '÷ --no-watch p50', unit: 'x' },
    ],
    rows: (['eof', 'SIGTERM'] as const).flatMap((trigger) =>
      contenders.map((c) => {
        const xs = exits.get(`${trigger}|${c.name}`) ?? [];
        const base = exits.get(`${trigger}|--no-watch`) ?? [];
        const ratio = xs.length && base.length ? quantile(sorted(xs), 0.5) / quantile(sorted(base), 0.5) : 'n/a';
        return [trigger === 'eof' ? 'stdin EOF' : 'SIGTERM', c.name, p(xs, 0.5), p(xs, 0.9), p(xs, 1), ratio];
      }),
    ),
  };
  const freshTable: Table = {
    title: `write → searchable over MCP (ms, from the write to the query tool finding it; polled every 10 ms; ${WRITES} notes)`,
    columns: [
      { label: 'change', unit: 'text' },
      { label: 'n', unit: 'count' },
      { label: 'p50', unit: 'ms' },
      { label: 'p95', unit: 'ms' },
      { label: 'max', unit: 'ms' },
      { label: `missed (> ${MISS_MS / 1000} s)`, unit: 'count' },
    ],
    rows: [
      ['a note written', searchable.length, p(searchable, 0.5), p(searchable, 0.95), p(searchable, 1), missed],
      ['that note deleted', gone.length, p(gone, 0.5), p(gone, 0.95), p(gone, 1), ''],
    ],
  };
  const tables = [exitTable, freshTable];
  for (const table of tables) process.stdout.write(`${renderText(table)}\n\n`);
  const lines = [
    '# qmd mcp with its watcher: exit times and freshness over MCP',
    '',
    `\`npx tsx bench/watch-mcp.ts --notes ${NOTES} --rounds ${ROUNDS} --writes ${WRITES}\` (after \`npm run build\`), ${new Date().toISOString()}.`,
    `Machine: ${machine.cpuModel} (${machine.cpuCount} cores), Node ${machine.node}, commit ${machine.commit}; load ${loadBefore} before, ${loadAverage()} after (a shared machine: read the ratios).`,
    `The watcher as the server reported it: \`${JSON.stringify(watching)}\`.`,
    ...(watching.role === 'off'
      ? [
          '',
          `**The watcher did not run (${watching.off ?? 'off'})**: the exit rows compare a server that looked for it with one told not to, and nothing was written.`,
        ]
      : []),
    '',
    ...tables.flatMap((table) => [renderMarkdown(table), '']),
  ];
  writeFileSync(OUT, `${lines.join('\n')}\n`);
  log(`wrote ${OUT}`);
}

await main();
