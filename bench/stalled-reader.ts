/**
 * A client that never reads (docs/design.md §2.2): what it costs the processes it talks to, and what it
 * costs another client of the same shared server.
 *
 *   npm run build && npx tsx bench/stalled-reader.ts [--before DIST/qmd.mjs] [--queries 20000] [--samples 30]
 *
 * The stalled client writes `initialize` and `--queries` query calls (each reply ~20 KiB: 40
 * notes match) and never reads its stdout. For plain `qmd mcp`, and for `--shared` (its relay,
 * and the shared server), the peak RSS (VmHWM) is read once the process has stopped reading the
 * stalled client (its "not reading its replies" warning), or, for a build that never stops (the
 * one before backpressure on stalled readers), once RSS has not grown for 3 s or 90 s have passed. Meanwhile another
 * client of the shared server runs `--samples` queries one after another; its p50 is compared
 * with the same client's p50 before the stall (goal ≤ 1.5×). With `--before`, the same is run
 * against an older build for the "before" column. Prints a table, writes
 * `bench/results-stalled-reader.md`.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/client';
import { ChildTransport } from '../test/support/child-transport.js';
import { QMD_BIN, qmdEnv, runQmd, tempWorkspace } from '../test/support/qmd.js';
import { type Spawned, spawnProcess } from '../test/support/spawn.js';
import { statusKb } from './lib/proc.js';
import { summarize } from './lib/stats.js';

const arg = (name: string): string | undefined => {
  const at = process.argv.indexOf(name);
  return at > 0 ? process.argv[at + 1] : undefined;
};
const QUERIES = Number(arg('--queries') ?? 20_000);
const SAMPLES = Number(arg('--samples') ?? 30);
const BEFORE = arg('--before');
const RESULTS = fileURLToPath(new URL('./results-stalled-reader.md', import.meta.url));
const STALLED = 'the client is not reading its replies';
const QUIET_MS = 3000;
const CAP_MS = 90_000;

const NOTES = Object.fromEntries(
  Array.from({ length: 40 }, (_, i) => [
    `bread-${i}.md`,
    `# Bread ${i}\n\n${'Sourdough needs a starter, flour, water and salt; bake it hot. '.repeat(12)}\n`,
  ]),
);

function script(): string {
  const lines = [
    JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'stalled', version: '1' } },
    }),
    JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
  ];
  for (let id = 1; id <= QUERIES; id++) {
    lines.push(
      JSON.stringify({
        jsonrpc: '2.0',
        id,
        method: 'tools/call',
        params: { name: 'query', arguments: { query: 'sourdough starter', limit: 40 } },
      }),
    );
  }
  return `${lines.join('\n')}\n`;
}

const mb = (kb: number | undefined): number => (kb ?? Number.NaN) / 1024;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Waits until `stalled()` says the process stopped reading, or its RSS has been flat for
 * QUIET_MS, or CAP_MS pass; returns the peak RSS (MB) and how it ended.
 */
async function peakOf(pid: number, stalled: () => boolean): Promise<{ peak: number; how: string; ms: number }> {
  const start = performance.now();
  let last = 0;
  let flatSince = start;
  for (;;) {
    const now = performance.now();
    const rss = statusKb(pid, 'VmRSS') ?? 0;
    if (rss > last + 1024) {
      last = rss;
      flatSince = now;
    }
    if (stalled()) {
      await sleep(1000); // what was dispatched before the pause finishes
      return { peak: mb(statusKb(pid, 'VmHWM')), how: 'stopped reading', ms: now - start };
    }
    if (now - flatSince > QUIET_MS && now - start > QUIET_MS)
      return { peak: mb(statusKb(pid, 'VmHWM')), how: 'RSS flat', ms: now - start };
    if (now - start > CAP_MS) return { peak: mb(statusKb(pid, 'VmHWM')), how: 'cap', ms: now - start };
    await sleep(100);
  }
}

/** The shared server of `index`, from /proc (it is nobody's child here). */
function sharedServerPid(index: string): number | undefined {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      if (cmdline.includes('--shared-server') && cmdline.includes(index)) return Number(entry);
    } catch {
      // Gone meanwhile.
    }
  }
  return undefined;
}

async function p50(client: Client): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < SAMPLES; i++) {
    const t = performance.now();
    await client.callTool({ name: 'query', arguments: { query: 'sourdough' } });
    times.push(performance.now() - t);
  }
  return summarize(times).p50;
}

interface Figures {
  plain: { peak: number; how: string };
  relay: { peak: number; how: string };
  server: { peak: number; how: string };
  unloaded: number;
  stalled: number;
}

async function measure(bin: string, index: string, env: NodeJS.ProcessEnv): Promise<Figures> {
  const spawnQmd = (args: string[], keepStdout: boolean): Spawned =>
    spawnProcess(process.execPath, [bin, 'mcp', ...args], { env, keepStdout });
  const stall = (args: string[]) => {
    const p = spawnQmd(args, false);
    p.child.stdin!.write(script());
    return p;
  };

  const plain = stall([]);
  const plainPeak = await peakOf(plain.child.pid!, () => plain.stderr().includes(STALLED));
  plain.kill();
  console.error(`plain: ${plainPeak.peak.toFixed(1)} MB (${plainPeak.how} after ${Math.round(plainPeak.ms)} ms)`);

  const other = spawnQmd(['--shared'], true);
  const client = new Client({ name: 'other', version: '1' });
  await client.connect(new ChildTransport(other.child));
  const server = sharedServerPid(index)!;
  const unloaded = await p50(client);
  const relay = stall(['--shared']);
  const log = join(env.XDG_RUNTIME_DIR!, 'qmd');
  const serverLog = () => {
    try {
      return readdirSync(log)
        .filter((f) => f.endsWith('.log'))
        .map((f) => readFileSync(join(log, f), 'utf8'))
        .join('');
    } catch {
      return '';
    }
  };
  // The other client's queries run while the stalled one is being served, then stalled.
  const during = p50(client);
  const serverPeak = await peakOf(server, () => serverLog().includes(STALLED));
  const stalled = await during;
  const relayPeak = { peak: mb(statusKb(relay.child.pid!, 'VmHWM')), how: serverPeak.how };
  console.error(`relay ${relayPeak.peak.toFixed(1)} MB, server ${serverPeak.peak.toFixed(1)} MB (${serverPeak.how})`);
  relay.kill();
  other.kill();
  process.kill(server, 'SIGKILL');
  return { plain: plainPeak, relay: relayPeak, server: serverPeak, unloaded, stalled };
}

const ws = tempWorkspace(NOTES);
const runs: Array<{ label: string; figures: Figures }> = [];
try {
  const base = qmdEnv(ws.index);
  const added = await runQmd(['collection', 'add', ws.notesDir, '--name', 'notes'], base);
  if (added.code !== 0) throw new Error(added.stderr);
  for (const [label, bin] of [...(BEFORE ? [['before', BEFORE] as const] : []), ['after', QMD_BIN] as const]) {
    const runtime = mkdtempSync(join(tmpdir(), 'qmd-run-'));
    try {
      const env = qmdEnv(ws.index, { XDG_RUNTIME_DIR: runtime, QMD_SHARED_IDLE_MS: '60000' });
      console.error(`${label}: ${bin}`);
      runs.push({ label, figures: await measure(bin, ws.index, env) });
    } finally {
      rmSync(runtime, { recursive: true, force: true });
    }
  }
} finally {
  ws.cleanup();
}

const rows: Array<[string, (f: Figures) => string]> = [
  ['plain `qmd mcp`: peak RSS (MB)', (f) => `${f.plain.peak.toFixed(1)} (${f.plain.how})`],
  ['`--shared` relay: peak RSS (MB)', (f) => f.relay.peak.toFixed(1)],
  ['shared server: peak RSS (MB)', (f) => `${f.server.peak.toFixed(1)} (${f.server.how})`],
  ['other client, p50 query, unloaded (ms)', (f) => f.unloaded.toFixed(2)],
  ['other client, p50 query, during the stall (ms)', (f) => f.stalled.toFixed(2)],
  ['ratio (goal ≤ 1.5×)', (f) => `${(f.stalled / f.unloaded).toFixed(2)}×`],
];
const header = `| | ${runs.map((r) => r.label).join(' | ')} |\n|---|${runs.map(() => '---|').join('')}`;
const table = [
  header,
  ...rows.map(([name, cell]) => `| ${name} | ${runs.map((r) => cell(r.figures)).join(' | ')} |`),
].join('\n');
const load = loadavg()
  .map((l) => l.toFixed(2))
  .join(' / ');
console.log(table);
writeFileSync(
  RESULTS,
  [
    '# A client that never reads',
    '',
    `Generated by \`npx tsx bench/stalled-reader.ts${BEFORE ? ' --before …' : ''} --queries ${QUERIES} --samples ${SAMPLES}\` ` +
      `on ${new Date().toISOString()}, Node ${process.version}, load average (1/5/15 min) at the end: ${load}.`,
    '',
    `The stalled client sends \`initialize\` and ${QUERIES} \`query\` calls (~20 KiB of reply each) and never reads.`,
    'Peak RSS is VmHWM, read once the process stopped reading that client ("stopped reading"), or once its RSS was',
    `flat for ${QUIET_MS / 1000} s ("RSS flat") or after ${CAP_MS / 1000} s ("cap"). The other client is a second`,
    `session of the same shared server running ${SAMPLES} queries one after another, before and while the stalled`,
    'session is served and then stalled.',
    '',
    table,
    '',
  ].join('\n'),
);
