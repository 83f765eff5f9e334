/**
 * Deterministic scenarios of `qmd mcp --shared`, as ./scenarios.ts has for the
 * lifecycle: inputs the server's and the session's traversals do not reach, chosen from the
 * machines' inputs and the contract's rules, judged by the shared contract oracle after every
 * input, each run to its end.
 *
 * - Every configured bound (idle, drain, step, the session's drain and step) at 0, 1 and its
 *   default (unset: `DOCUMENTED_SHARED_TIMING`), with steps that hang and handlers that never
 *   settle, so time passes over each bound.
 * - Time passing over the idle bound while sessions are open, after the last one leaves, and
 *   after a new one arrives within the idle window.
 * - The exit code set before any trigger (the idle bound has no event to carry it), and in each
 *   state of the server's teardown, for each trigger (signal, shutdown(), the idle bound).
 * - Each trigger of the server followed by each other one in each teardown state; each ending
 *   of a session followed by each other one (a socket closing after a half-close, …) and by the
 *   server hurrying, in each state of the session's teardown.
 *
 * Bounded: the bounds vary one at a time, the others at distinct values with binary fractions
 * (as in ./shared-properties.test.ts, so no two timers fall due at one instant unless they are
 * the same kind from the same instant); each is read once, into its own context field, and the
 * oracle checks every instant exactly, so a pair of bounds has nothing a single one lacks. Two
 * sessions at most, the first with a handler in flight: the server treats every session alike,
 * and two are enough to see "every" and "the last".
 */

import { createSharedHarness } from '../support/host-harness.js';
import { bounded } from '../support/run-bounds.js';
import type { Signal as ContractSignal } from './contract.js';
import { type ConnectionEnd, DOCUMENTED_SHARED_TIMING, type SharedTiming } from './shared-contract.js';
import { SharedOracle } from './shared-oracle.js';
import {
  act,
  advance,
  endSession,
  open,
  settleHandler,
  settleStep,
  startHandler,
  type World,
} from './shared-perform.js';

export interface SharedConfig {
  idleTimeoutMs?: number;
  drainTimeoutMs?: number;
  stepTimeoutMs?: number;
  sessionDrainTimeoutMs?: number;
  sessionStepTimeoutMs?: number;
}

/** Distinct bounds whose fractions never add up to one another's (see the file's comment). */
export const BASE: Required<SharedConfig> = {
  stepTimeoutMs: 1700 + 1 / 4,
  drainTimeoutMs: 4100 + 1 / 16,
  sessionStepTimeoutMs: 1300 + 1 / 64,
  sessionDrainTimeoutMs: 2900 + 1 / 256,
  idleTimeoutMs: 7000 + 1 / 1024,
};

const WATCHDOG_MS = 1000;

export function sharedTimingOf(config: SharedConfig): SharedTiming {
  const d = DOCUMENTED_SHARED_TIMING;
  return {
    idleMs: config.idleTimeoutMs ?? d.idleMs,
    drainMs: config.drainTimeoutMs ?? d.drainMs,
    stepMs: config.stepTimeoutMs ?? d.stepMs,
    sessionDrainMs: config.sessionDrainTimeoutMs ?? d.sessionDrainMs,
    sessionStepMs: config.sessionStepTimeoutMs ?? d.sessionStepMs,
    watchdogMs: WATCHDOG_MS,
  };
}

export type SCmd =
  /** A relay connects; an odd-numbered session starts a handler at once. */
  | 'open'
  | 'shutdown'
  | ContractSignal
  | { start: number }
  | { settle: number }
  | { end: number; type: ConnectionEnd }
  /** Session n ends as production ends it: its connection, its steps, its handlers. */
  | { leave: number }
  | { exitCode: unknown }
  | { resolve: string }
  | { reject: string }
  | { advance: number };

export function describeSCmd(c: SCmd): string {
  if (typeof c === 'string') return c;
  return JSON.stringify(c);
}

const id = (n: number) => `session-${n}`;

/** Runs one scenario against the real shared host; throws the oracle's verdict, naming the scenario. */
export async function runShared(config: SharedConfig, cmds: SCmd[]): Promise<World> {
  const timing = sharedTimingOf(config);
  const h = createSharedHarness({
    ...config,
    watchdogMs: WATCHDOG_MS,
    closeListener: 'manual',
    disposeStore: 'manual',
    closeServer: 'manual',
    releaseSession: 'manual',
  });
  const w: World = { h, oracle: new SharedOracle(timing), timing };
  try {
    for (const c of cmds) await performShared(w, c);
    const t = timing;
    const rest = t.idleMs + 2 * t.stepMs + t.drainMs + 2 * (2 * t.sessionStepMs + t.sessionDrainMs) + t.watchdogMs + 1;
    await advance(w, rest);
    if (w.oracle.contract.finishedAt === undefined) throw new Error('the contract has the server still up');
    if (h.exits.length !== 1) throw new Error(`the run did not end: exits [${h.exits}]`);
  } catch (error) {
    const what = `${JSON.stringify(config)}: ${cmds.map(describeSCmd).join(' → ')}`;
    throw new Error(`${(error as Error).message}\n  scenario ${what}`);
  }
  return w;
}

async function performShared(w: World, c: SCmd): Promise<void> {
  const { h } = w;
  if (c === 'open') {
    const opened = await open(w);
    if (opened !== null && Number(opened.slice('session-'.length)) % 2 === 1) await startHandler(w, opened);
    return;
  }
  if (c === 'shutdown') {
    await act(w, { kind: 'shutdown', reason: 'scenario' }, () => void h.lifecycle.shutdown('scenario'));
    return;
  }
  if (typeof c === 'string') {
    await act(w, { kind: 'signal', signal: c }, () => h.signal(c));
    return;
  }
  if ('start' in c) {
    if (h.calls.includes(`open:${id(c.start)}`)) await startHandler(w, id(c.start));
  } else if ('settle' in c) {
    if (h.handlers.some((x) => x.session === id(c.settle) && !x.settled)) await settleHandler(w, id(c.settle));
  } else if ('end' in c) {
    if (h.calls.includes(`open:${id(c.end)}`))
      await act(w, { kind: 'connection', session: id(c.end), type: c.type }, () => h.trigger(id(c.end), c.type));
  } else if ('leave' in c) {
    if (h.calls.includes(`open:${id(c.leave)}`)) await endSession(w, id(c.leave));
  } else if ('exitCode' in c) {
    await act(w, { kind: 'exitCode', code: c.exitCode }, () => {
      h.exitCode = c.exitCode;
    });
  } else if ('resolve' in c || 'reject' in c) {
    const key = 'resolve' in c ? c.resolve : c.reject;
    if (h.stepRunning(key)) await settleStep(w, key, 'resolve' in c);
  } else await advance(w, c.advance);
}

export async function runAllShared(list: Array<{ config: SharedConfig; cmds: SCmd[] }>): Promise<string[]> {
  const failures: string[] = [];
  for (const { config, cmds } of list) {
    // Five say enough about a broken machine, and a mutant run need not wait for the rest.
    if (failures.length >= 5) break;
    try {
      await bounded(JSON.stringify(config), () => runShared(config, cmds));
    } catch (error) {
      failures.push((error as Error).message.split('\n').slice(0, 3).join('\n  '));
    }
  }
  return failures;
}

// ---- the families ------------------------------------------------------------------------

const BIG = 200_000;

/** Each bound at 0, 1 and its default, the others at BASE; and every bound at its default. */
export function sharedBoundConfigs(): SharedConfig[] {
  const keys = Object.keys(BASE) as Array<keyof SharedConfig>;
  const out: SharedConfig[] = [];
  for (const key of keys) {
    for (const value of [0, 1, undefined]) {
      const config: SharedConfig = { ...BASE };
      if (value === undefined) delete config[key];
      else config[key] = value;
      out.push(config);
    }
  }
  out.push({});
  return out;
}

export function sharedBoundScenarios(): Array<{ config: SharedConfig; cmds: SCmd[] }> {
  const scripts: SCmd[][] = [
    // Nobody comes: the idle bound, then the hung listener's and store's step bounds.
    [{ advance: BIG }],
    // Two sessions, a signal, every step hangs, a handler never settles.
    ['open', 'open', 'SIGTERM', { advance: BIG }],
    // A session ends by itself: its drain deadline, its hung release; then idle.
    ['open', { end: 1, type: 'connection.ended' }, { resolve: 'closeServer:session-1' }, { advance: BIG }],
    // shutdown(): the listener closes, the session's server closes, its drain and the server's.
    ['open', 'shutdown', { resolve: 'closeListener' }, { resolve: 'closeServer:session-1' }, { advance: BIG }],
    // Time in small steps across each bound.
    ['open', 'SIGHUP', { advance: 0 }, { advance: 1 }, { advance: 1 }, { advance: 1 }, { advance: BIG }],
    // Sessions open while time passes over every bound; then they leave, and idle follows.
    ['open', 'open', { advance: BIG }, { leave: 1 }, { leave: 2 }, { advance: BIG }],
  ];
  return sharedBoundConfigs().flatMap((config) => scripts.map((cmds) => ({ config, cmds })));
}

/**
 * The idle bound against time: passing while sessions are open, after the last leaves, after a
 * new one arrives within the idle window (the timer is cancelled, and restarts when it leaves),
 * and the exit code set within the window (the idle exit keeps it, as every trigger does).
 */
export function idleScenarios(): Array<{ config: SharedConfig; cmds: SCmd[] }> {
  const idle = BASE.idleTimeoutMs;
  const config = BASE;
  const scripts: SCmd[][] = [
    // Open at once, time past the bound while open, leave, then just short of it and over it.
    ['open', { advance: idle + 5 }, { leave: 1 }, { advance: idle - 1 }, { advance: 2 }],
    // Half a window, a session arrives; time past where the first window would end; it leaves.
    [{ advance: idle / 2 }, 'open', { advance: idle / 2 + 1 }, { leave: 1 }, { advance: idle - 1 }, { advance: 1 }],
    // The last of two leaves; a new one arrives in the window; the window restarts when it leaves.
    [
      'open',
      'open',
      { leave: 1 },
      { advance: 10 },
      { leave: 2 },
      { advance: idle - 10 },
      'open',
      { advance: idle },
      { leave: 3 },
    ],
    ['open', { leave: 1 }, { advance: idle - 1 }, 'open', { advance: 2 }, { leave: 2 }, { advance: idle + 1 }],
    // A handler still running when its session's relay leaves: the idle window starts when it is done.
    ['open', { end: 1, type: 'connection.ended' }, { resolve: 'closeServer:session-1' }, { advance: idle }],
    // The exit code set with no trigger, then the idle bound: the exit keeps it.
    [{ exitCode: 3 }, { advance: idle + 1 }],
    ['open', { exitCode: 5 }, { leave: 1 }, { advance: idle + 1 }],
    [{ exitCode: '4' }, 'open', { leave: 1 }, { advance: idle / 2 }, { exitCode: 0 }, { advance: idle }],
    // Set within the window, then changed during the idle teardown: the one at the bound counts.
    ['open', { leave: 1 }, { exitCode: 6 }, { advance: idle }, { exitCode: 0 }, { resolve: 'closeListener' }],
    // The idle exit with a failed step: 1 unless an earlier code was set.
    [{ advance: idle }, { reject: 'closeListener' }, { resolve: 'disposeStore' }],
    [{ exitCode: 8 }, { advance: idle }, { reject: 'closeListener' }, { reject: 'disposeStore' }],
  ];
  return scripts.map((cmds) => ({ config, cmds }));
}

type ServerTrigger = 'SIGTERM' | 'SIGINT' | 'SIGHUP' | 'shutdown' | 'idle';
const SERVER_TRIGGERS: ServerTrigger[] = ['SIGTERM', 'SIGINT', 'SIGHUP', 'shutdown', 'idle'];

function triggerCmds(t: ServerTrigger): SCmd[] {
  // Idle: the only session leaves, then the bound passes.
  return t === 'idle' ? [{ leave: 1 }, { advance: BASE.idleTimeoutMs }] : [t];
}

/**
 * The exit code at each point of the server's run, for each trigger; each trigger followed by
 * each other one (signals, shutdown()) in each state of the server's teardown.
 */
export function serverTriggerScenarios(): Array<{ first: ServerTrigger; config: SharedConfig; cmds: SCmd[] }> {
  const config = BASE;
  const out: Array<{ first: ServerTrigger; config: SharedConfig; cmds: SCmd[] }> = [];
  const route: SCmd[] = [
    { resolve: 'closeListener' },
    { resolve: 'closeServer:session-2' },
    { leave: 2 },
    { resolve: 'disposeStore' },
  ];
  for (const first of SERVER_TRIGGERS) {
    // Idle needs no session at its bound; the others meet two, the second still serving.
    const head: SCmd[] = first === 'idle' ? ['open', ...triggerCmds(first), 'open'] : ['open', 'open', first];
    // Sessions the idle trigger meets: none (session-2 is refused during teardown).
    for (let at = 0; at <= route.length; at++) {
      for (const second of ['SIGTERM', 'SIGINT', 'SIGHUP', 'shutdown'] as const) {
        out.push({ first, config, cmds: [...head, ...route.slice(0, at), second, ...route.slice(at)] });
      }
      // Two more signals: the first escalation is the one reported.
      out.push({ first, config, cmds: [...head, ...route.slice(0, at), 'SIGINT', 'SIGHUP', ...route.slice(at)] });
      for (const code of [{ exitCode: 4 }, { exitCode: 0 }]) {
        const cmds: SCmd[] = [{ exitCode: 2 }, ...head, ...route.slice(0, at), code, ...route.slice(at)];
        out.push({ first, config, cmds });
        // A code set during teardown, then a signal (which carries the code then): still ignored.
        out.push({ first, config, cmds: [...head, ...route.slice(0, at), code, 'SIGINT', ...route.slice(at)] });
      }
    }
  }
  return out;
}

/**
 * Each ending of a session followed by each other ending and by the server hurrying (a signal
 * after shutdown()), in each state of the session's teardown; the session has a handler in
 * flight throughout its drain, so every hurry has something to abort.
 */
export function sessionTriggerScenarios(): Array<{ config: SharedConfig; cmds: SCmd[] }> {
  const config = BASE;
  const endings: Array<SCmd[]> = [
    [{ end: 1, type: 'connection.ended' }],
    [{ end: 1, type: 'connection.closed' }],
    [{ end: 1, type: 'transport.closed' }],
    ['shutdown'],
    ['SIGINT'],
  ];
  const route: SCmd[] = [{ resolve: 'closeServer:session-1' }, { settle: 1 }, { resolve: 'releaseSession:session-1' }];
  const out: Array<{ config: SharedConfig; cmds: SCmd[] }> = [];
  for (const first of endings.slice(0, 4)) {
    for (const second of endings) {
      for (let at = 0; at <= route.length; at++) {
        out.push({ config, cmds: ['open', first[0]!, ...route.slice(0, at), ...second, ...route.slice(at)] });
      }
    }
  }
  return out;
}
