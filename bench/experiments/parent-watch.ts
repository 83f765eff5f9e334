/**
 * Experiment (not part of `npm run bench`): how soon can `qmd mcp` notice
 * that its parent died, and what does looking cost while it idles? On Linux, with the
 * lifecycle's own `watchParent` and real clock (`src/lifecycle/parent.ts`):
 *
 * A. Is there a signal cheaper than polling? Node has no prctl(PR_SET_PDEATHSIG) and no pidfd;
 *    the candidate left is inotify: `fs.watch` on `/proc/<ppid>` and `/proc/<ppid>/status`.
 *    A child watches both (and polls the PPID every 10 ms as ground truth) while its parent is
 *    SIGKILLed: which of them reports anything within 2 s?
 * B. Detection latency by poll interval: the parent is SIGKILLed at a random moment (uniform
 *    over two intervals, so every phase of the poll is hit alike), and the time from the kill
 *    to the child's `parent.gone` is taken in this process (a line on stderr).
 * C. CPU time per hour while idle: children that only wait (a ref'd timer stands in for stdin),
 *    with the watch at each interval and without it, all running at once for the same wall
 *    time, report `process.cpuUsage()` over it; the watch's cost is the difference.
 *
 *   npx tsx bench/experiments/parent-watch.ts [--runs 20] [--seconds 120]
 *
 * Prints tables and writes `bench/results-parent-watch.md`.
 */
import { watch, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { realClock } from '../../src/lifecycle/clock.js';
import { watchParent } from '../../src/lifecycle/parent.js';
import { type Spawned, spawnProcess } from '../../test/support/spawn.js';

const SELF = fileURLToPath(import.meta.url);
const RESULTS = fileURLToPath(new URL('../results-parent-watch.md', import.meta.url));
const INTERVALS = [500, 250, 100, 50];
const BOUND_MS = 10_000;

/** This file again, as another role, through the same loader (tsx). */
function spawnRole(role: string[], stdio: Array<'ignore' | 'pipe' | 'inherit'>): Spawned {
  return spawnProcess(process.execPath, [...process.execArgv, SELF, ...role], { stdio });
}

// ---- roles that run in child processes ---------------------------------------------------

/** The parent that gets killed: starts the watcher with our stderr, reports its pid, waits. */
function middle(role: string[]): void {
  const { child } = spawnRole(role, ['ignore', 'ignore', 'inherit']);
  process.stdout.write(`${JSON.stringify({ child: child.pid })}\n`);
  setInterval(() => {}, 1 << 30);
}

/** `watchParent` as the lifecycle runs it; says `gone` on stderr, then leaves. */
function childWatch(interval: number): void {
  const keepAlive = setInterval(() => {}, 1 << 30); // stands in for stdin
  const stop = watchParent({ ppid: () => process.ppid, clock: realClock, intervalMs: interval }, () => {
    process.stderr.write('gone\n');
    stop();
    clearInterval(keepAlive);
  });
  process.stderr.write('watching\n');
}

/** inotify on procfs, against a 10 ms PPID poll as ground truth. */
function childInotify(): void {
  const ppid = process.ppid;
  const events: string[] = [];
  for (const path of [`/proc/${ppid}`, `/proc/${ppid}/status`]) {
    try {
      watch(path, (event, name) => events.push(`${path}: ${event} ${name ?? ''}`.trim())).on('error', (error) =>
        events.push(`${path}: error ${error.message}`),
      );
    } catch (error) {
      events.push(`${path}: watch failed (${(error as Error).message})`);
    }
  }
  process.stderr.write('watching\n');
  const poll = setInterval(() => {
    if (process.ppid === ppid) return;
    clearInterval(poll);
    // Whatever inotify will say, it has had 2 s to say it.
    setTimeout(() => {
      process.stderr.write(`${JSON.stringify({ events })}\n`);
      process.exit(0);
    }, 2000);
  }, 10);
}

/** Idles for `seconds` with the watch at `interval` (or none) and reports its CPU time. */
function childIdle(interval: string, seconds: number): void {
  const keepAlive = setInterval(() => {}, 1 << 30);
  let polls = 0;
  if (interval !== 'none') {
    const ppid = (): number => {
      polls++;
      return process.ppid;
    };
    watchParent({ ppid, clock: realClock, intervalMs: Number(interval) }, () => {});
  }
  // Start counting once start-up (module loading, JIT) is over.
  setTimeout(() => {
    const start = process.cpuUsage();
    const polled = polls;
    setTimeout(() => {
      const used = process.cpuUsage(start);
      process.stdout.write(`${JSON.stringify({ interval, cpuUs: used.user + used.system, polls: polls - polled })}\n`);
      clearInterval(keepAlive);
      process.exit(0);
    }, seconds * 1000);
  }, 2000);
}

// ---- the experiment ----------------------------------------------------------------------

/** The first whole line of `text` that `match` accepts. */
function lineOf(text: string, match: (line: string) => boolean): string | undefined {
  return text.split('\n').slice(0, -1).find(match);
}

function killQuietly(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}

/** Starts middle → child(`role`); resolves once the child says it is watching. */
async function tree(role: string[]): Promise<{ middle: Spawned; child: number }> {
  const parent = spawnRole(['middle', ...role], ['ignore', 'pipe', 'pipe']);
  const pid = await parent.waitFor(() => lineOf(parent.stdout(), () => true), 'the child pid', BOUND_MS);
  await parent.waitFor(() => lineOf(parent.stderr(), (l) => l === 'watching'), 'the child to watch', BOUND_MS);
  return { middle: parent, child: (JSON.parse(pid) as { child: number }).child };
}

async function inotifyProbe(): Promise<string[]> {
  const t = await tree(['child-inotify']);
  try {
    t.middle.kill();
    const report = await t.middle.waitFor(
      () => lineOf(t.middle.stderr(), (l) => l.startsWith('{')),
      'the inotify report',
      BOUND_MS,
    );
    return (JSON.parse(report) as { events: string[] }).events;
  } finally {
    killQuietly(t.child);
  }
}

async function detectionMs(interval: number): Promise<number> {
  const t = await tree(['child-watch', String(interval)]);
  try {
    await new Promise((resolve) => setTimeout(resolve, Math.random() * 2 * interval));
    // Timed where the line arrives: the check runs as each chunk of stderr comes in.
    const gone = t.middle.waitFor(
      () => (lineOf(t.middle.stderr(), (l) => l === 'gone') === undefined ? undefined : performance.now()),
      'parent.gone',
      BOUND_MS,
    );
    const killed = performance.now();
    t.middle.kill();
    return (await gone) - killed;
  } finally {
    killQuietly(t.child);
  }
}

async function idleCpu(seconds: number): Promise<Map<string, { cpuUs: number; polls: number }[]>> {
  const kinds = ['none', ...INTERVALS.map(String)];
  const replicas = 2;
  const children = kinds.flatMap((kind) =>
    Array.from({ length: replicas }, () =>
      spawnRole(['child-idle', kind, String(seconds)], ['ignore', 'pipe', 'inherit']),
    ),
  );
  const reports = await Promise.all(
    children.map(async (child) => {
      const line = await child.waitFor(
        () => lineOf(child.stdout(), () => true),
        "an idle child's report",
        (seconds + 60) * 1000,
      );
      return JSON.parse(line) as { interval: string; cpuUs: number; polls: number };
    }),
  );
  const byKind = new Map<string, { cpuUs: number; polls: number }[]>();
  for (const r of reports) byKind.set(r.interval, [...(byKind.get(r.interval) ?? []), r]);
  return byKind;
}

const quantile = (xs: number[], q: number): number => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? Number.NaN;
};
const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;

async function experiment(): Promise<void> {
  const { values } = parseArgs({
    args: process.argv.slice(2),
    options: { runs: { type: 'string', default: '20' }, seconds: { type: 'string', default: '120' } },
  });
  const runs = Number(values.runs);
  const seconds = Number(values.seconds);
  const out: string[] = [];
  const say = (line = ''): void => {
    console.log(line);
    out.push(line);
  };
  say('# Parent death: how soon, at what cost');
  say();
  say(
    `${new Date().toISOString()}, node ${process.version}, ${process.platform}, ${availableParallelism()} cores, load average ${loadavg()[0]?.toFixed(2)} at start.`,
  );
  say(`Command: \`npx tsx bench/experiments/parent-watch.ts --runs ${runs} --seconds ${seconds}\`.`);
  say();

  say('## A. inotify on procfs when the parent is SIGKILLed');
  say();
  const events = await inotifyProbe();
  say(
    events.length === 0
      ? 'No event within 2 s of the PPID change from `fs.watch` on `/proc/<ppid>` or `/proc/<ppid>/status`: procfs does not feed inotify, so there is nothing to wait on.'
      : `Events: ${events.join('; ')}`,
  );
  say();

  say(`## B. Kill → \`parent.gone\`, parent killed at a random phase (${runs} runs per interval, interleaved)`);
  say();
  const detection = new Map<number, number[]>(INTERVALS.map((i) => [i, []]));
  for (let r = 0; r < runs; r++) {
    for (const interval of INTERVALS) detection.get(interval)?.push(await detectionMs(interval));
  }
  say('| poll interval ms | p50 ms | p90 ms | max ms |');
  say('|---:|---:|---:|---:|');
  for (const [interval, xs] of detection) {
    say(
      `| ${interval} | ${quantile(xs, 0.5).toFixed(1)} | ${quantile(xs, 0.9).toFixed(1)} | ${Math.max(...xs).toFixed(1)} |`,
    );
  }
  say();

  say(`## C. CPU time while idle (${seconds} s per child, all children at once, 2 per row)`);
  say();
  const cpu = await idleCpu(seconds);
  const base = mean((cpu.get('none') ?? []).map((r) => r.cpuUs));
  say('| watch | polls | CPU ms in the run | CPU ms per hour | of which the watch, ms per hour | µs per poll |');
  say('|---|---:|---:|---:|---:|---:|');
  for (const [kind, reports] of cpu) {
    const used = mean(reports.map((r) => r.cpuUs));
    const polls = mean(reports.map((r) => r.polls));
    const perHour = (us: number): number => (us / 1000) * (3600 / seconds);
    const watchCost = kind === 'none' ? '–' : perHour(used - base).toFixed(0);
    const perPoll = kind === 'none' || polls === 0 ? '–' : ((used - base) / polls).toFixed(1);
    say(
      `| ${kind === 'none' ? 'none (baseline)' : `every ${kind} ms`} | ${polls.toFixed(0)} | ${(used / 1000).toFixed(1)} | ${perHour(used).toFixed(0)} | ${watchCost} | ${perPoll} |`,
    );
  }
  say();
  say(`Load average ${loadavg()[0]?.toFixed(2)} at the end.`);
  writeFileSync(RESULTS, `${out.join('\n')}\n`);
  console.log(`\nwrote ${RESULTS}`);
}

const [role, ...rest] = process.argv.slice(2);
if (role === 'middle') middle(rest);
else if (role === 'child-watch') childWatch(Number(rest[0]));
else if (role === 'child-inotify') childInotify();
else if (role === 'child-idle') childIdle(rest[0] ?? 'none', Number(rest[1]));
else await experiment();
