/**
 * Deterministic scenarios of the lifecycle, chosen on purpose rather than found by a traversal
 * or by chance, so a wrong machine dies every time, not by luck. The traversal (./paths.test.ts) runs one configuration, offers the
 * exit code only as a payload of the first trigger, and sends one signal (SIGTERM) during
 * teardown; what it cannot reach is listed here, derived from the machine's inputs and the
 * contract's rules:
 *
 * - every configured bound (drain, step) at 0, 1 and its default (unset: the contract's
 *   documented value, `DOCUMENTED_TIMING`), with hung steps and a handler that never settles,
 *   so time passes over each bound;
 * - the exit code set before the trigger with no payload, and during teardown in each state
 *   (closingTransport, draining, disposingStore, done), with and without a failed step;
 * - each trigger followed by each other trigger, in each teardown state, and a third that is a
 *   signal or another source (a second, different signal after a pipe departure).
 *
 * Where the space is bounded, and why: the two bounds form a 3×3 grid (drain × step; the
 * shared server's five vary one at a time, see ./shared-scenarios.ts): each is read once, into
 * its own context field, and the oracle checks every step's instant exactly. Triples of
 * triggers use 7 classes as first (stdin close stands for stdin end, SIGTERM for any signal:
 * the pairs try them all), the 10 trigger kinds as second and 3 as third (SIGINT, a stdout
 * error, the HTTP listener closing): once teardown began only signals, a stdout error and
 * the HTTP listener closing can still be heard (§2.1: stdin, the parent watch and the transport's own close are detached; a
 * second shutdown() is the same call), and SIGINT stands for a signal other than the SIGTERM
 * every probe sends.
 *
 * Every scenario drives the real host (test/support/host-harness.ts) and the contract
 * oracle (./oracle.ts) checks after every input; at the end enough time passes for every bound
 * and the watchdog, and the run must have ended.
 */
import type { LifecycleEvent } from '../../machines/lifecycle.js';
import { flush } from '../support/fake-clock.js';
import { createHarness, type Harness } from '../support/host-harness.js';
import { bounded } from '../support/run-bounds.js';
import { DOCUMENTED_TIMING, type Signal, type Step, type Timing } from './contract.js';
import { perform, stepRunning } from './model.js';
import { Oracle } from './oracle.js';

export type Trigger =
  | 'stdin.end'
  | 'stdin.close'
  | 'stdout'
  | 'transport'
  | 'SIGTERM'
  | 'SIGINT'
  | 'SIGHUP'
  | 'parent'
  | 'http'
  | 'shutdown';

export const TRIGGERS: Trigger[] = [
  'stdin.end',
  'stdin.close',
  'stdout',
  'transport',
  'SIGTERM',
  'SIGINT',
  'SIGHUP',
  'parent',
  'http',
  'shutdown',
];

/** What a scenario does, one input at a time. */
export type Cmd =
  | Trigger
  | { exitCode: unknown }
  | 'start'
  | 'settle'
  | { resolve: Step }
  | { reject: Step }
  | { advance: number };

/** The configuration a scenario runs with: a bound left out is the machine's default. */
export interface Config {
  drainTimeoutMs?: number;
  stepTimeoutMs?: number;
}

const WATCHDOG_MS = 1000;
const PARENT_POLL_MS = 10;

export function timingOf(config: Config): Timing {
  return {
    drainMs: config.drainTimeoutMs ?? DOCUMENTED_TIMING.drainMs,
    stepMs: config.stepTimeoutMs ?? DOCUMENTED_TIMING.stepMs,
    watchdogMs: WATCHDOG_MS,
    parentPollMs: PARENT_POLL_MS,
  };
}

function eventOf(t: Trigger): LifecycleEvent {
  switch (t) {
    case 'stdout':
      return { type: 'stdout.closed' };
    case 'transport':
      return { type: 'transport.closed' };
    case 'parent':
      return { type: 'parent.gone' };
    case 'http':
      return { type: 'http.closed' };
    case 'shutdown':
      return { type: 'shutdown.requested', reason: 'scenario' };
    case 'SIGTERM':
    case 'SIGINT':
    case 'SIGHUP':
      return { type: 'signal.received', signal: t as Signal };
    default:
      return { type: t };
  }
}

export function describeCmd(c: Cmd): string {
  if (typeof c === 'string') return c;
  if ('exitCode' in c) return `exitCode=${String(c.exitCode)}`;
  if ('resolve' in c) return `${c.resolve} resolves`;
  if ('reject' in c) return `${c.reject} rejects`;
  return `+${c.advance} ms`;
}

/** Runs one scenario against the real host; throws the oracle's verdict, naming the scenario. */
export async function runScenario(config: Config, cmds: Cmd[]): Promise<Harness> {
  const timing = timingOf(config);
  const h = createHarness({
    closeTransport: 'manual',
    disposeStore: 'manual',
    ...config,
    watchdogMs: WATCHDOG_MS,
    parentPollMs: PARENT_POLL_MS,
  });
  const oracle = new Oracle(timing);
  const raw = (type: string) => ({ type }) as unknown as LifecycleEvent;
  try {
    for (const c of cmds) {
      if (typeof c === 'string') {
        if (c === 'start') await perform(h, oracle, { type: 'handler.started' });
        else if (c === 'settle') {
          if (h.lifecycle.gate.size > 0) await perform(h, oracle, { type: 'handler.settled' });
        } else await perform(h, oracle, eventOf(c));
      } else if ('exitCode' in c) {
        h.exitCode = c.exitCode;
        oracle.feed({ kind: 'exitCode', code: c.exitCode });
        await flush();
      } else if ('resolve' in c || 'reject' in c) {
        const step = 'resolve' in c ? c.resolve : c.reject;
        // The world answers only a step the host is running.
        if (!stepRunning(h, step)) continue;
        await perform(h, oracle, raw(`xstate.${'resolve' in c ? 'done' : 'error'}.actor.${step}`));
      } else {
        oracle.feed({ kind: 'advance', ms: c.advance });
        await h.clock.advance(c.advance);
      }
      oracle.check(h);
    }
    // The end of the world: every bound, one after another, and the watchdog.
    const rest = 2 * timing.stepMs + timing.drainMs + timing.watchdogMs + 1;
    oracle.feed({ kind: 'advance', ms: rest });
    await h.clock.advance(rest);
    oracle.check(h);
    if (oracle.contract.first && h.exits.length !== 1) throw new Error(`the run did not end: exits [${h.exits}]`);
  } catch (error) {
    const what = `${JSON.stringify(config)}: ${cmds.map(describeCmd).join(' → ')}`;
    throw new Error(`${(error as Error).message}\n  scenario ${what}`);
  }
  return h;
}

/** Runs every scenario, collecting failures (first line of each) rather than stopping at one. */
export async function runAll(list: Array<{ config: Config; cmds: Cmd[] }>): Promise<string[]> {
  const failures: string[] = [];
  for (const { config, cmds } of list) {
    // Five say enough about a broken machine, and a mutant run need not wait for the rest.
    if (failures.length >= 5) break;
    try {
      await bounded(`${JSON.stringify(config)}: ${cmds.map(describeCmd).join(' → ')}`, () => runScenario(config, cmds));
    } catch (error) {
      failures.push((error as Error).message.split('\n').slice(0, 3).join('\n  '));
    }
  }
  return failures;
}

// ---- the families ------------------------------------------------------------------------

const BIG = 20_000;

/** 0, 1 and the default (unset) for each bound: a 3×3 grid. */
export function boundConfigs(): Config[] {
  const values = [0, 1, undefined];
  return values.flatMap((drain) =>
    values.map((step) => ({
      ...(drain !== undefined && { drainTimeoutMs: drain }),
      ...(step !== undefined && { stepTimeoutMs: step }),
    })),
  );
}

/** Scenarios where time passes over every bound: hung steps, a handler that never settles. */
export function boundScenarios(): Array<{ config: Config; cmds: Cmd[] }> {
  const scripts: Cmd[][] = [
    // Both steps hang, a handler never settles: close times out, the drain deadline, dispose times out.
    ['start', 'stdin.end', { advance: BIG }],
    // Close succeeds: the drain deadline passes with a handler in flight, then dispose times out.
    ['start', 'SIGTERM', { resolve: 'closeTransport' }, { advance: BIG }],
    // Time in small steps across each bound (0 ms, then 1 ms at a time).
    ['start', 'http', { advance: 0 }, { advance: 1 }, { advance: 1 }, { advance: 1 }, { advance: BIG }],
    ['start', 'stdin.close', { resolve: 'closeTransport' }, { advance: 0 }, 'settle', { advance: 1 }],
    // The handler settles within the drain: disposed at once; a second trigger after.
    ['start', 'shutdown', { resolve: 'closeTransport' }, 'settle', { advance: 1 }, 'SIGINT', { advance: BIG }],
    // No handler: the drain ends on entry whatever its bound.
    ['parent', { resolve: 'closeTransport' }, { resolve: 'disposeStore' }],
    // Time passing while connected starts nothing.
    ['start', { advance: BIG }, 'settle', { advance: BIG }, 'transport', { advance: BIG }],
  ];
  return boundConfigs().flatMap((config) => scripts.map((cmds) => ({ config, cmds })));
}

/**
 * The exit code set at each point of a run (before the trigger with no payload, then in each
 * teardown state, then after done), to a non-zero code and back to 0 after an earlier one,
 * with the store's disposal succeeding or failing.
 */
export function exitCodeScenarios(): Array<{ config: Config; cmds: Cmd[] }> {
  const config = { drainTimeoutMs: 4000, stepTimeoutMs: 1500 };
  const route = (fail: boolean): Cmd[] => [
    'start',
    'stdin.end',
    { resolve: 'closeTransport' },
    'settle',
    fail ? { reject: 'disposeStore' } : { resolve: 'disposeStore' },
  ];
  const codes: Cmd[][] = [[{ exitCode: 4 }], [{ exitCode: '6' }], [{ exitCode: 3 }, { exitCode: 0 }]];
  const out: Array<{ config: Config; cmds: Cmd[] }> = [];
  for (const fail of [false, true]) {
    const base = route(fail);
    // Insert before index 1 (connected), 2 (closingTransport), 3 (draining), 4 (disposingStore), 5 (done).
    for (let at = 1; at <= base.length; at++) {
      for (const set of codes) out.push({ config, cmds: [...base.slice(0, at), ...set, ...base.slice(at)] });
    }
  }
  // A code set during teardown, then a later trigger (it carries the code then): still ignored.
  for (let at = 2; at <= 4; at++) {
    for (const later of ['SIGINT', 'stdout', 'http'] as const) {
      const base = route(false);
      out.push({ config, cmds: [...base.slice(0, at), { exitCode: 4 }, later, ...base.slice(at)] });
    }
  }
  // An earlier code, then another before the trigger: the latest before the trigger counts.
  out.push({ config, cmds: [{ exitCode: 2 }, { exitCode: 5 }, 'SIGHUP', { exitCode: 7 }, { advance: BIG }] });
  // An earlier code with hung steps: the code wins over the failed steps' 1.
  out.push({ config, cmds: [{ exitCode: 9 }, 'start', 'http', { exitCode: 0 }, { advance: BIG }] });
  return out;
}

/**
 * Each trigger followed by each other trigger, arriving in each teardown state (closing the
 * transport, draining with a handler in flight, disposing the store, done), and triples whose
 * third is a signal, a stdout error or the HTTP listener closing in the same state as the
 * second.
 */
export function triggerScenarios(withTriples: boolean): Array<{ config: Config; cmds: Cmd[] }> {
  const config = { drainTimeoutMs: 4000, stepTimeoutMs: 1500 };
  const route: Cmd[] = [{ resolve: 'closeTransport' }, 'settle', { resolve: 'disposeStore' }];
  // SIGTERM is what the probes send after every path; SIGINT stands for any other signal.
  const thirds: Trigger[] = ['SIGINT', 'stdout', 'http'];
  const out: Array<{ config: Config; cmds: Cmd[] }> = [];
  // As the first of a triple, stdin close stands for stdin end and SIGTERM for any signal: the
  // machine records the same trigger kind for each pair (§2.1), and the pairs try them all.
  const tripleFirsts = new Set<Trigger>(['stdin.end', 'stdout', 'transport', 'SIGTERM', 'parent', 'http', 'shutdown']);
  for (const first of TRIGGERS) {
    for (const second of TRIGGERS) {
      for (let at = 0; at <= route.length; at++) {
        const triples = withTriples && tripleFirsts.has(first);
        const later: Trigger[][] = [[second], ...(triples ? thirds.map((t) => [second, t]) : [])];
        for (const extra of later) {
          out.push({ config, cmds: ['start', first, ...route.slice(0, at), ...extra, ...route.slice(at)] });
        }
      }
    }
  }
  return out;
}
