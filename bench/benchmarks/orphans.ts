import { copyFileSync, existsSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Sqlite } from '../../src/store/sqlite.js';
import { within } from '../../test/support/bounded.js';
import { spawnProcess } from '../../test/support/spawn.js';
import { qmdFixture } from '../lib/fixture.js';
import { pool } from '../lib/interleave.js';
import { CONTENDERS, QMD_BIN, TMP } from '../lib/paths.js';
import { findByMarker, isAliveWithMarker } from '../lib/proc.js';
import { pause } from '../lib/rpc-child.js';
import { summarize } from '../lib/stats.js';
import type { Benchmark, BenchmarkReport, Cell, Goal, Table } from '../lib/types.js';

type Scenario = 'startup' | 'mid-request' | 'idle';

interface SessionPlan {
  scenario: Scenario;
  polite: boolean;
  /** Abrupt: SIGKILL the client parent this long after the scenario's event. Polite: close after. */
  delayMs: number;
}

interface SessionOutcome {
  plan: SessionPlan;
  /** The server's pid, when the client parent reported it. */
  pid?: number;
  /** From the kill (or the polite close) to the server's disappearance, polled; undefined if it never went. */
  goneMs?: number;
  /** From the client parent's spawn of the server to `initialize` answered, as reported to us. */
  startMs?: number;
  /** Why the session did not go as planned (the client parent failed first). */
  error?: string;
}

/** A small seedable PRNG (mulberry32), so a run's plan is the same every time. */
function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Polls until `pid` is gone (or no longer ours); resolves with the time it took, or undefined after `boundMs`. */
async function timeUntilGone(pid: number, marker: string, since: number, boundMs: number): Promise<number | undefined> {
  while (performance.now() - since < boundMs) {
    if (!isAliveWithMarker(pid, marker)) return performance.now() - since;
    await pause(10);
  }
  return undefined;
}

interface SoakSettings {
  index: string;
  marker: string;
  query: string;
  slowQueryMs: number;
}

/** The moment (after which event) an abrupt kill is timed from, per scenario. */
const KILL_AFTER: Record<Scenario, string> = { startup: 'spawned', 'mid-request': 'request-sent', idle: 'idle' };

function runSession(plan: SessionPlan, settings: SoakSettings): Promise<SessionOutcome> {
  const config = {
    qmd: QMD_BIN,
    index: settings.index,
    marker: settings.marker,
    scenario: plan.scenario,
    polite: plan.polite,
    query: settings.query,
    closeAfterMs: plan.delayMs,
    ...(plan.scenario === 'mid-request' && { failpoints: `tool.query=delay(${settings.slowQueryMs})` }),
  };
  const p = spawnProcess(process.execPath, [`${CONTENDERS}/client-parent.mjs`, JSON.stringify(config)], {
    stdio: ['ignore', 'pipe', 'pipe'],
    keepStdout: false,
  });
  const child = p.child;
  const outcome: SessionOutcome = { plan };
  let endedAt: number | undefined;
  let gone: Promise<number | undefined> = Promise.resolve(undefined);
  const watch = (): void => {
    endedAt = performance.now();
    if (outcome.pid !== undefined) gone = timeUntilGone(outcome.pid, settings.marker, endedAt, 15_000);
  };
  let buffered = '';
  let spawnedAt: number | undefined;
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    buffered += chunk;
    for (let nl = buffered.indexOf('\n'); nl !== -1; nl = buffered.indexOf('\n')) {
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      const message = JSON.parse(line) as { event: string; pid?: number | null; message?: string; stderr?: string };
      if (message.event === 'spawned' && typeof message.pid === 'number') {
        outcome.pid = message.pid;
        spawnedAt = performance.now();
      }
      if (message.event === 'initialized' && spawnedAt !== undefined) outcome.startMs = performance.now() - spawnedAt;
      if (message.event === 'error')
        outcome.error = `${message.message} ${message.stderr?.trim().split('\n').at(-1) ?? ''}`;
      if (!plan.polite && message.event === KILL_AFTER[plan.scenario]) {
        setTimeout(() => {
          watch();
          child.kill('SIGKILL');
        }, plan.delayMs);
      }
      if (plan.polite && message.event === 'closing') watch();
    }
  });
  const finished = within(p.exited, 'the client parent to finish', 60_000).catch(() => {
    outcome.error ??= 'the client parent did not finish within 60 s';
    p.kill();
    return p.exited;
  });
  return finished.then(async () => {
    if (endedAt === undefined) watch();
    const ms = await gone;
    if (ms !== undefined) outcome.goneMs = ms;
    return outcome;
  });
}

function integrity(index: string): string {
  const db = new Sqlite(index, { readOnly: true });
  try {
    return db.column<[], string>('PRAGMA integrity_check').all().join('; ');
  } finally {
    db.close();
  }
}

/**
 * Benchmark 6: sessions whose client parent (`bench/contenders/client-parent.mjs`) is
 * SIGKILLed at a random moment — during start-up, mid-request (a slow query held by the
 * `tool.query=delay` failpoint), or idle — then as many closed politely. After each batch,
 * and a grace period, the `qmd mcp` servers still alive are counted by pid and by scanning
 * `/proc` for the batch's marker (in each server's environment), and the shared index is
 * checked with `PRAGMA integrity_check`.
 */
export const orphansBenchmark: Benchmark = {
  name: 'orphans',
  title: 'Orphan soak: client parents SIGKILLed or closing politely',
  async run({ quick, log }): Promise<BenchmarkReport> {
    const fixture = await qmdFixture(quick, log);
    const sessions = quick ? 4 : 100;
    const concurrency = quick ? 2 : 4;
    const graceMs = quick ? 1000 : 5000;
    const slowQueryMs = quick ? 600 : 2000;
    const runId = `qmd-bench-soak-${process.pid}-${Date.now()}`;
    const dir = join(TMP, runId);
    mkdirSync(dir, { recursive: true });
    const index = join(dir, 'index.sqlite');
    copyFileSync(fixture.index, index);
    const random = prng(20_261_202);
    const between = (min: number, max: number) => Math.round(min + random() * (max - min));
    const abruptScenarios: Scenario[] = ['startup', 'mid-request', 'idle'];
    const windows: Record<Scenario, [number, number]> = {
      startup: [0, 150],
      'mid-request': [0, Math.round(slowQueryMs * 0.75)],
      idle: [0, 300],
    };
    const batches = [
      {
        name: 'SIGKILLed',
        plans: Array.from({ length: sessions }, (): SessionPlan => {
          const scenario = abruptScenarios[Math.floor(random() * 3)] as Scenario;
          return { scenario, polite: false, delayMs: between(...windows[scenario]) };
        }),
      },
      {
        name: 'closed politely',
        plans: Array.from({ length: sessions }, (): SessionPlan => {
          const scenario: Scenario = random() < 0.5 ? 'idle' : 'mid-request';
          return { scenario, polite: true, delayMs: between(...windows[scenario]) };
        }),
      },
    ];

    const scenarioRows: Cell[][] = [];
    const batchRows: Cell[][] = [];
    const goals: Goal[] = [];
    const notes: string[] = [];
    let leftovers = 0;
    try {
      for (const batch of batches) {
        const marker = `${runId}-${batch.name === 'SIGKILLed' ? 'kill' : 'close'}`;
        const settings = { index, marker, query: fixture.query, slowQueryMs };
        let done = 0;
        const outcomes = await pool(batch.plans, concurrency, async (plan) => {
          const outcome = await runSession(plan, settings);
          if (++done % 10 === 0 || done === batch.plans.length) log(`orphans (${batch.name}): ${done}/${sessions}`);
          return outcome;
        });
        await pause(graceMs);
        const alivePids = outcomes.filter((o) => o.pid !== undefined && isAliveWithMarker(o.pid, marker)).length;
        const aliveScan = findByMarker(marker);
        // Before the check: opening the index, even read-only, may create a -wal of its own.
        const wal = existsSync(`${index}-wal`);
        const check = integrity(index);
        batchRows.push([batch.name, outcomes.length, alivePids, aliveScan.length, check, wal ? 'yes' : 'no']);
        for (const scenario of ['startup', 'mid-request', 'idle'] as const) {
          const group = outcomes.filter((o) => o.plan.scenario === scenario);
          if (group.length === 0) continue;
          const gone = summarize(group.flatMap((o) => (o.goneMs === undefined ? [] : [o.goneMs])));
          const start = summarize(group.flatMap((o) => (o.startMs === undefined ? [] : [o.startMs])));
          scenarioRows.push([
            batch.name,
            scenario,
            group.length,
            group.filter((o) => o.pid !== undefined).length,
            start.n > 0 ? start.p50 : '—',
            gone.n > 0 ? gone.p50 : '—',
            gone.n > 0 ? gone.p90 : '—',
            gone.n > 0 ? gone.max : '—',
            group.filter((o) => o.goneMs === undefined && o.pid !== undefined).length,
            group.filter((o) => o.error !== undefined).length,
          ]);
        }
        for (const o of outcomes.filter((x) => x.error !== undefined).slice(0, 3)) {
          notes.push(`${batch.name}, ${o.plan.scenario}: client parent failed: ${o.error}`);
        }
        const alive = Math.max(alivePids, aliveScan.length);
        goals.push({
          name: `${batch.name}: servers alive ${graceMs / 1000} s after the batch (of ${sessions})`,
          target: '0',
          measured: String(alive),
          met: alive === 0,
        });
        goals.push({
          name: `${batch.name}: PRAGMA integrity_check`,
          target: 'ok',
          measured: check,
          met: check === 'ok',
        });
        // Leftovers would skew the next batch and outlive the benchmark: end them, and say so.
        for (const pid of aliveScan) process.kill(pid, 'SIGKILL');
        leftovers += aliveScan.length;
      }
    } finally {
      for (const pid of findByMarker(runId)) process.kill(pid, 'SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
    if (leftovers > 0) notes.push(`${leftovers} leftover server(s) were SIGKILLed after counting.`);
    const tables: Table[] = [
      {
        title: `Per batch: ${sessions} sessions, ${concurrency} at a time; counted ${graceMs / 1000} s after the last session`,
        columns: [
          { label: 'batch', unit: 'text' },
          { label: 'sessions', unit: 'count' },
          { label: 'alive by pid', unit: 'count' },
          { label: 'alive by /proc scan', unit: 'count' },
          { label: 'integrity_check', unit: 'text' },
          { label: '-wal left', unit: 'text' },
        ],
        rows: batchRows,
      },
      {
        title: 'Per scenario: from the kill (or `client.close()`) to the server gone, polled every 10 ms',
        columns: [
          { label: 'batch', unit: 'text' },
          { label: 'scenario', unit: 'text' },
          { label: 'sessions', unit: 'count' },
          { label: 'server pid seen', unit: 'count' },
          { label: 'start p50', unit: 'ms' },
          { label: 'gone p50', unit: 'ms' },
          { label: 'gone p90', unit: 'ms' },
          { label: 'gone max', unit: 'ms' },
          { label: 'not gone in 15 s', unit: 'count' },
          { label: 'client failed', unit: 'count' },
        ],
        rows: scenarioRows,
      },
    ];
    notes.unshift(
      `Abrupt sessions pick a scenario at random (seeded): start-up (kill 0–${windows.startup[1]} ms after spawn), mid-request (a \`query\` held by \`QMD_FAILPOINTS=tool.query=delay(${slowQueryMs})\`, kill 0–${windows['mid-request'][1]} ms after sending it), idle (kill 0–${windows.idle[1]} ms after a query answered). Polite sessions close idle or mid-request with the SDK's \`client.close()\`.`,
      '"start" is spawn → `initialize` answered in the sessions that got that far, under the soak\'s own concurrency; a server killed during start-up can only notice once it has started, so its "gone" time is mostly the rest of its start-up.',
      'All sessions share one index (a copy of the fixture); each server carries the batch marker in its environment and the run id in its `--index` path.',
    );
    return { tables, goals, notes };
  },
};
