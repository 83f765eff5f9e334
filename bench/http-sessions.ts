/**
 * HTTP session memory (issue 34 item 7): `qmd mcp --http` serving round after round of 2025-era
 * clients, each a Streamable HTTP session (the SDK's `Client` over its HTTP transport: it
 * initializes, lists the tools, runs a query, reads a note, and leaves with `close()`, as a
 * client app does, sending no DELETE). 64 clients a round (the default `QMD_HTTP_MAX_SESSIONS`:
 * each round's sessions evict the last round's). The server's RSS (VmRSS) is read before the
 * first round and after each, once it has been quiet for `--settle-ms`. Goal: the RSS after
 * the second round and after the third within 10% of the first.
 *
 *   npm run build && npx tsx bench/http-sessions.ts [--rounds 3] [--clients 64] [--settle-ms 12000] [--before DIST/qmd.mjs]
 *
 * `--settle-ms` is longer than the server's idle collector needs (quiet 1 s, at most one per
 * 10 s: `src/serve/heap.ts`). With `--before`, an older build is measured first, in the same
 * table. Prints the table and writes bench/results-http-sessions.md.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { QMD_BIN, qmdEnv, runQmd, tempWorkspace } from '../test/support/qmd.js';
import { spawnProcess } from '../test/support/spawn.js';

const arg = (name: string): string | undefined => {
  const at = process.argv.indexOf(name);
  return at > 0 ? process.argv[at + 1] : undefined;
};
const ROUNDS = Number(arg('--rounds') ?? 3);
const CLIENTS = Number(arg('--clients') ?? 64);
const SETTLE_MS = Number(arg('--settle-ms') ?? 12_000);
const BEFORE = arg('--before');
const RESULTS = fileURLToPath(new URL('./results-http-sessions.md', import.meta.url));

const NOTES = Object.fromEntries(
  Array.from({ length: 40 }, (_, i) => [
    `bread-${i}.md`,
    `# Bread ${i}\n\n${'Sourdough needs a starter, flour, water and salt; bake it hot. '.repeat(12)}\n`,
  ]),
);

const rssMb = (pid: number): number =>
  Number(/^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) / 1024;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** One client app's visit: connect, list, query, read, leave. */
async function visit(url: URL, i: number): Promise<void> {
  const transport = new StreamableHTTPClientTransport(url);
  transport.onerror = () => {};
  const client = new Client({ name: `visitor-${i}`, version: '1.0.0' });
  await client.connect(transport);
  await client.listTools();
  await client.callTool({ name: 'query', arguments: { query: 'sourdough starter', limit: 10 } });
  await client.callTool({ name: 'get', arguments: { file: `notes/bread-${i % 40}.md` } });
  await client.close();
}

interface Row {
  label: string;
  rss: number;
  ms: number;
}

/** Rounds of clients against the server `bin` starts; RSS before the first and after each. */
async function measure(bin: string, env: NodeJS.ProcessEnv): Promise<Row[]> {
  const server = spawnProcess(process.execPath, [bin, 'mcp', '--http', '--port', '0', '--no-auth'], { env });
  try {
    await server.waitForStderr(/Listening on http:\/\/\S+/);
    const url = new URL(/Listening on (http:\/\/\S+)/.exec(server.stderr())?.[1] ?? '');
    const pid = server.child.pid!;
    await sleep(SETTLE_MS);
    const rows: Row[] = [{ label: 'started', rss: rssMb(pid), ms: 0 }];
    for (let round = 1; round <= ROUNDS; round++) {
      const started = performance.now();
      // Eight at a time: a busy client app, not a flood.
      for (let i = 0; i < CLIENTS; i += 8)
        await Promise.all(Array.from({ length: Math.min(8, CLIENTS - i) }, (_, k) => visit(url, i + k)));
      const ms = performance.now() - started;
      await sleep(SETTLE_MS);
      rows.push({ label: `after round ${round}`, rss: rssMb(pid), ms });
      console.error(`${bin === QMD_BIN ? 'this build' : bin}: round ${round}: ${rows.at(-1)!.rss.toFixed(1)} MB`);
    }
    return rows;
  } finally {
    server.kill();
  }
}

const worstRatio = (rows: Row[]): number => Math.max(...rows.slice(2).map((r) => r.rss / rows[1]!.rss));
const ratio = (rows: Row[], i: number): string => (i === 0 ? '—' : `${(rows[i]!.rss / rows[1]!.rss).toFixed(2)}×`);

const ws = tempWorkspace(NOTES);
try {
  const env = qmdEnv(ws.index);
  const added = await runQmd(['collection', 'add', ws.notesDir, '--name', 'notes'], env);
  if (added.code !== 0) throw new Error(added.stderr);
  const before = BEFORE === undefined ? undefined : await measure(BEFORE, env);
  const after = await measure(QMD_BIN, env);
  const lines = [
    before === undefined
      ? '| | RSS (MB) | ÷ after round 1 | round took (ms) |'
      : '| | before: RSS (MB) | before: ÷ round 1 | after: RSS (MB) | after: ÷ round 1 | after: round took (ms) |',
    before === undefined ? '|---|---:|---:|---:|' : '|---|---:|---:|---:|---:|---:|',
    ...after.map((r, i) => {
      const took = i === 0 ? '—' : r.ms.toFixed(0);
      const mine = `${r.rss.toFixed(1)} | ${ratio(after, i)} | ${took}`;
      return before === undefined
        ? `| ${r.label} | ${mine} |`
        : `| ${r.label} | ${before[i]!.rss.toFixed(1)} | ${ratio(before, i)} | ${mine} |`;
    }),
  ];
  const worst = worstRatio(after);
  const goal = `Goal: every round after the first within 10% of the first's RSS: ${worst.toFixed(2)}× at worst, ${worst <= 1.1 ? 'met' : 'MISSED'}${before === undefined ? '' : ` (before: ${worstRatio(before).toFixed(2)}×)`}.`;
  const report = [
    '# HTTP sessions: RSS over rounds of clients (`bench/http-sessions.ts`)',
    '',
    `\`npx tsx bench/http-sessions.ts --rounds ${ROUNDS} --clients ${CLIENTS} --settle-ms ${SETTLE_MS}${BEFORE === undefined ? '' : ` --before ${BEFORE}`}\`,`,
    `Node ${process.version}, load ${loadavg()[0]!.toFixed(1)} at the end. Each client: initialize, tools/list, a query, a get, close() (no DELETE; the next round's sessions evict it).`,
    '',
    ...lines,
    '',
    goal,
    '',
  ].join('\n');
  console.log(report);
  writeFileSync(RESULTS, report);
} finally {
  ws.cleanup();
}
