/**
 * How long each way a client can leave takes, from the trigger to the process being gone.
 *
 *   npm run build && npx tsx bench/triggers.ts [--runs 20]
 *
 * For every trigger, `runs` fresh `qmd mcp` processes (the built binary, a small real index):
 * each is brought to serving (stdio: `initialize` answered; HTTP: `Listening on` printed and
 * `/health` answered), then the trigger is fired and the clock runs until the exit is seen —
 * the child's `exit` event, or for parent death (where qmd is nobody's child any more) the
 * EOF of the stderr pipe whose last writer is qmd. The "teardown" column is the server's own
 * `Shutdown complete in X ms` (from the breadcrumb to `done`), so the rest is signal delivery,
 * noticing the trigger, and the process leaving. Prints a table, writes
 * `bench/results-triggers.md`.
 */
import type { ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { BUNDLE_OPTIONS } from '../scripts/build.js';
import { DEFAULT_PARENT_POLL_MS } from '../src/lifecycle/parent.js';
import { within } from '../test/support/bounded.js';
import { QMD_BIN, qmdEnv, runQmd, tempWorkspace } from '../test/support/qmd.js';
import { type Spawned, spawnProcess } from '../test/support/spawn.js';

const runsArg = process.argv.indexOf('--runs');
const RUNS = runsArg > 0 ? Number(process.argv[runsArg + 1]) : 20;
const BOUND_MS = 30_000;
const FIXTURE = fileURLToPath(new URL('../test/e2e/fixtures/intermediate-parent.mjs', import.meta.url));
const RESULTS = fileURLToPath(new URL('./results-triggers.md', import.meta.url));

interface Sample {
  ms: number;
  teardownMs: number | null;
  reason: string | null;
}

interface Run {
  /** What the test process holds: the child it waits on, with its output. */
  p: Spawned;
  /** Resolves when the server is gone (see the header). */
  gone: Promise<unknown>;
  /** Fires the trigger; returns nothing, the clock starts just before. */
  fire(): void;
  /** SIGKILLs what may be left. */
  cleanup(): void;
}

/** A run whose server is the child itself: gone at its `exit` event. */
function childRun(p: Spawned, fire: () => void): Run {
  return { p, gone: p.exited, fire, cleanup: () => p.kill() };
}

const INITIALIZE = `${JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '1' } },
})}\n`;

/** `qmd mcp` over stdio, serving: `initialize` answered, so the lifecycle is listening. */
async function stdioRun(index: string, fire: (child: ChildProcess) => void): Promise<Run> {
  const p = spawnProcess(process.execPath, [QMD_BIN, 'mcp'], { env: qmdEnv(index) });
  p.child.stdin?.write(INITIALIZE);
  await p.waitFor(() => p.stdout().includes('"id":1') || undefined, 'the reply to initialize', BOUND_MS);
  return childRun(p, () => fire(p.child));
}

/** test → intermediate parent → qmd mcp, a sibling `sleep` holding qmd's stdin open. */
async function parentDeathRun(index: string): Promise<Run> {
  const parent = spawnProcess(process.execPath, [FIXTURE, QMD_BIN, 'shared'], {
    env: qmdEnv(index),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const gone = new Promise<void>((resolve) => parent.child.stderr?.once('end', () => resolve()));
  const line = await parent.waitFor(
    () =>
      parent
        .stdout()
        .split('\n')
        .find((l) => l.includes('"holder"')),
    'the pids of the process tree',
    BOUND_MS,
  );
  const pids = JSON.parse(line) as { qmd: number; holder: number };
  return {
    p: parent,
    gone,
    fire: () => parent.kill(),
    cleanup: () => {
      for (const pid of [pids.holder, pids.qmd]) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // Already gone.
        }
      }
      parent.kill();
    },
  };
}

function getHealth(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/health', agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}

async function httpRun(index: string): Promise<Run> {
  const p = spawnProcess(process.execPath, [QMD_BIN, 'mcp', '--http', '--port', '0'], {
    env: qmdEnv(index),
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const port = await p.waitFor(
    () => /Listening on http:\/\/127\.0\.0\.1:(\d+)\//.exec(p.stderr())?.[1],
    'the HTTP server to listen',
    BOUND_MS,
  );
  if ((await getHealth(Number(port))) !== 200) throw new Error('/health did not answer 200');
  return childRun(p, () => p.child.kill('SIGTERM'));
}

/**
 * The floor under every row: a node process that has loaded what `qmd mcp` loads (the CLI, the
 * SDK, the store's native addons) and leaves the moment SIGTERM empties its loop. No teardown:
 * what is left is signal delivery and Node's own exit.
 */
async function baselineRun(): Promise<Run> {
  const code = [
    `await import(${JSON.stringify(pathToFileURL(await baselineBundle()).href)});`,
    'const keep = setInterval(() => {}, 1 << 30);',
    "process.on('SIGTERM', () => clearInterval(keep));",
    "process.stderr.write('ready\\n');",
  ].join('\n');
  const p = spawnProcess(process.execPath, ['--input-type=module', '-e', code], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  await p.waitForStderr('ready', BOUND_MS);
  return childRun(p, () => p.child.kill('SIGTERM'));
}

let baseline: Promise<string> | undefined;

/**
 * What the baseline loads: `src/serve/stdio.ts` and `http.ts` bundled as `qmd` is
 * (scripts/build.ts), built once per run into `bench/.tmp/triggers-baseline/`.
 */
function baselineBundle(): Promise<string> {
  baseline ??= (async () => {
    const outdir = fileURLToPath(new URL('./.tmp/triggers-baseline/', import.meta.url));
    await build({
      ...BUNDLE_OPTIONS,
      stdin: {
        contents: "import './src/serve/stdio.ts';\nimport './src/serve/http.ts';\n",
        resolveDir: BUNDLE_OPTIONS.absWorkingDir,
        sourcefile: 'baseline.ts',
        loader: 'ts',
      },
      entryNames: 'baseline',
      outdir,
    });
    return `${outdir}baseline.mjs`;
  })();
  return baseline;
}

const TRIGGERS: Array<{ name: string; start: (index: string) => Promise<Run> }> = [
  { name: 'stdin EOF', start: (index) => stdioRun(index, (c) => c.stdin?.end()) },
  { name: 'SIGTERM', start: (index) => stdioRun(index, (c) => c.kill('SIGTERM')) },
  { name: 'SIGINT', start: (index) => stdioRun(index, (c) => c.kill('SIGINT')) },
  { name: 'SIGHUP', start: (index) => stdioRun(index, (c) => c.kill('SIGHUP')) },
  { name: `parent death (poll ${DEFAULT_PARENT_POLL_MS} ms)`, start: parentDeathRun },
  {
    name: 'stdout EPIPE',
    // The client stops reading, then asks for something: the reply's write fails with EPIPE.
    start: (index) =>
      stdioRun(index, (c) => {
        c.stdout?.destroy();
        c.stdin?.write(`${JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' })}\n`);
      }),
  },
  { name: 'HTTP SIGTERM', start: httpRun },
  { name: 'baseline: node with these modules, SIGTERM, no teardown', start: baselineRun },
];

async function measure(start: () => Promise<Run>): Promise<Sample> {
  const run = await start();
  try {
    const t0 = performance.now();
    run.fire();
    await within(run.gone, () => `the server to exit; stderr:\n${run.p.stderr()}`, BOUND_MS);
    const ms = performance.now() - t0;
    // The breadcrumb and the summary line may still be in the pipe when the exit is seen.
    const text = run.p.stderr();
    const teardown = /Shutdown complete in ([\d.]+) ms/.exec(text);
    const reason = /Shutting down \(([^)]+)\)/.exec(text);
    return { ms, teardownMs: teardown ? Number(teardown[1]) : null, reason: reason?.[1] ?? null };
  } finally {
    run.cleanup();
  }
}

function quantile(sorted: number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const index = Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1);
  return sorted[Math.max(0, index)] as number;
}

const fmt = (n: number): string => (Number.isFinite(n) ? n.toFixed(1) : '–');

async function main(): Promise<void> {
  const ws = tempWorkspace();
  try {
    const added = await runQmd(['collection', 'add', ws.notesDir, '--name', 'notes'], qmdEnv(ws.index));
    if (added.code !== 0) throw new Error(`collection add failed: ${added.stderr}`);
    const rows: string[] = [];
    const header = '| trigger | runs | p50 ms | p90 ms | max ms | teardown p50 ms | breadcrumb |';
    console.log(`${TRIGGERS.length} triggers × ${RUNS} runs, round-robin...`);
    // Round-robin, so a shared machine's load drifting over the minutes touches every trigger alike.
    const samples = new Map<string, Sample[]>(TRIGGERS.map((t) => [t.name, []]));
    for (let i = 0; i < RUNS; i++) {
      for (const trigger of TRIGGERS) samples.get(trigger.name)?.push(await measure(() => trigger.start(ws.index)));
    }
    for (const trigger of TRIGGERS) {
      const mine = samples.get(trigger.name) ?? [];
      const ms = mine.map((s) => s.ms).sort((a, b) => a - b);
      const teardown = mine
        .map((s) => s.teardownMs)
        .filter((t): t is number => t !== null)
        .sort((a, b) => a - b);
      const reasons = [...new Set(mine.map((s) => s.reason ?? 'none'))].join(', ');
      const row = `| ${trigger.name} | ${mine.length} | ${fmt(quantile(ms, 0.5))} | ${fmt(quantile(ms, 0.9))} | ${fmt(ms.at(-1) ?? Number.NaN)} | ${fmt(quantile(teardown, 0.5))} | ${reasons} |`;
      rows.push(row);
    }
    console.log([header, '|---|---:|---:|---:|---:|---:|---|', ...rows].join('\n'));
    const load = loadavg()
      .map((l) => l.toFixed(2))
      .join(' ');
    writeFileSync(
      RESULTS,
      [
        '# Trigger → exit',
        '',
        `Measured by \`bench/triggers.ts\` on ${new Date().toISOString()}: node ${process.version}, ${cpus().length} cores, load average ${load} at the end (a shared machine).`,
        'From firing the trigger to seeing the process gone; "teardown" is the server’s own `Shutdown complete in X ms`.',
        `An idle server with a small index (no handler in flight, no model loaded). Parent death includes the ${DEFAULT_PARENT_POLL_MS} ms PPID poll, and its parent is killed a few ms after the server starts serving, so every run meets the poll at about the same phase (with 500 ms, nearly a whole interval before the next look); bench/experiments/parent-watch.ts kills at random phases.`,
        'The baseline row is the floor: a node process with the same modules loaded that leaves as soon as SIGTERM empties its loop. Most of the gap between "teardown" and the total is that floor (signal delivery and Node’s own exit), not the lifecycle.',
        '',
        header,
        '|---|---:|---:|---:|---:|---:|---|',
        ...rows,
        '',
      ].join('\n'),
    );
    console.log(`\nwrote ${RESULTS}`);
  } finally {
    ws.cleanup();
  }
}

await main();
