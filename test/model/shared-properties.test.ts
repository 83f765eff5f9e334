/**
 * Property-based tests of `qmd mcp --shared`: random interleavings of relays connecting and
 * leaving (half-close, socket close, transport close), handlers starting and settling in any
 * session, signals, `shutdown()`, step outcomes of the server and of every session, and time,
 * against the real shared host. The contract oracle (./shared-oracle.ts) checks after every
 * command; at the end the world is driven to its end and the shared server's invariant is
 * checked from the calls alone: the store is disposed exactly once, after every session's
 * release began (so after its drain), and the watchdog exits with the code set.
 *
 * Bounds carry binary fractions in distinct base-4 digits (¼, 1/16, 1/64, 1/256, 1/1024 ms):
 * a timer's due time then tells which bounds led to it, so two timers can fall due at the same
 * instant only when they are the same kind from the same instant (two sessions told to end at
 * once), and the order in which the fake clock fires simultaneous timers, which is no
 * guarantee of anyone's, never decides a run.
 */
import fc from 'fast-check';
import { expect } from 'vitest';
import { createSharedHarness } from '../support/host-harness.js';
import { describePropertyTest } from './driver.js';
import type { ConnectionEnd, SharedTiming, Signal } from './shared-contract.js';
import { SharedOracle } from './shared-oracle.js';
import { act, advance, open, type World } from './shared-perform.js';

const TIMING: SharedTiming = {
  stepMs: 1700 + 1 / 4,
  drainMs: 4100 + 1 / 16,
  sessionStepMs: 1300 + 1 / 64,
  sessionDrainMs: 2900 + 1 / 256,
  idleMs: 7000 + 1 / 1024,
  watchdogMs: 1000,
};

type Command =
  | { kind: 'open' }
  | { kind: 'connection'; session: number; type: ConnectionEnd }
  | { kind: 'handler.start'; session: number }
  | { kind: 'handler.settle'; index: number }
  | { kind: 'signal'; signal: Signal; exitCode?: number | string }
  | { kind: 'shutdown'; reason?: string; exitCode?: number | string }
  | { kind: 'exitCode'; code: number | string }
  | { kind: 'step'; index: number; ok: boolean; bare: boolean }
  | { kind: 'advance'; ms: number };

const exitCode = fc.constantFrom<number | string | undefined>(undefined, 0, 2, '2');
const command: fc.Arbitrary<Command> = fc.oneof(
  { arbitrary: fc.constant({ kind: 'open' } as const), weight: 4 },
  {
    arbitrary: fc.record({
      kind: fc.constant('connection' as const),
      session: fc.nat(3),
      type: fc.constantFrom<ConnectionEnd>('connection.ended', 'connection.closed', 'transport.closed'),
    }),
    weight: 3,
  },
  { arbitrary: fc.record({ kind: fc.constant('handler.start' as const), session: fc.nat(3) }), weight: 3 },
  { arbitrary: fc.record({ kind: fc.constant('handler.settle' as const), index: fc.nat(5) }), weight: 2 },
  // The world sets an exit code together with a trigger (as leaveOnFatalErrors does), or on its
  // own, at any time: the idle bound has no event to carry it.
  fc.record({ kind: fc.constant('exitCode' as const), code: fc.constantFrom<number | string>(0, 5, '5') }),
  fc.record({
    kind: fc.constant('signal' as const),
    signal: fc.constantFrom<Signal>('SIGTERM', 'SIGINT', 'SIGHUP'),
    exitCode,
  }),
  fc.record({ kind: fc.constant('shutdown' as const), reason: fc.constantFrom('property test', undefined), exitCode }),
  {
    arbitrary: fc.record({
      kind: fc.constant('step' as const),
      index: fc.nat(5),
      ok: fc.boolean(),
      bare: fc.boolean(),
    }),
    weight: 4,
  },
  {
    arbitrary: fc.record({
      kind: fc.constant('advance' as const),
      ms: fc.constantFrom(1, 50, 999, 1300, 1700, 2900, 4100, 7000),
    }),
    weight: 2,
  },
);

function newWorld(): World {
  const h = createSharedHarness({
    idleTimeoutMs: TIMING.idleMs,
    drainTimeoutMs: TIMING.drainMs,
    stepTimeoutMs: TIMING.stepMs,
    sessionDrainTimeoutMs: TIMING.sessionDrainMs,
    sessionStepTimeoutMs: TIMING.sessionStepMs,
    watchdogMs: TIMING.watchdogMs,
    closeListener: 'manual',
    disposeStore: 'manual',
    closeServer: 'manual',
    releaseSession: 'manual',
  });
  return { h, oracle: new SharedOracle(TIMING), timing: TIMING };
}

const STEPS = ['closeListener', 'disposeStore', 'closeServer', 'releaseSession'];

/** Steps running now, in a stable order (the server's, then each session's). */
function running(w: World): string[] {
  return [...w.h.pending.keys()]
    .filter((k) => w.h.stepRunning(k))
    .sort((a, b) => STEPS.indexOf(a.split(':')[0]!) - STEPS.indexOf(b.split(':')[0]!) || a.localeCompare(b));
}

async function perform(w: World, c: Command, ids: string[]): Promise<void> {
  const { h } = w;
  const pick = (n: number) => ids[n % Math.max(1, ids.length)];
  const code = async (value: number | string | undefined) => {
    if (value !== undefined) await act(w, { kind: 'exitCode', code: value }, () => (h.exitCode = value));
  };
  switch (c.kind) {
    case 'open': {
      const id = await open(w);
      if (id !== null) ids.push(id);
      return;
    }
    case 'connection': {
      const id = pick(c.session);
      if (id) await act(w, { kind: 'connection', session: id, type: c.type }, () => h.trigger(id, c.type));
      return;
    }
    case 'handler.start': {
      const id = pick(c.session);
      if (!id) return;
      const handler = h.startHandler(id);
      await act(w, { kind: 'handler.start', session: id, handler }, () => {});
      return;
    }
    case 'handler.settle': {
      const open = h.handlers.filter((x) => !x.settled);
      const handler = open[c.index % Math.max(1, open.length)];
      if (handler) await act(w, { kind: 'handler.settle', handler }, () => handler.settle());
      return;
    }
    case 'signal':
      await code(c.exitCode);
      await act(w, { kind: 'signal', signal: c.signal }, () => h.signal(c.signal));
      return;
    case 'exitCode':
      await code(c.code);
      return;
    case 'shutdown':
      await code(c.exitCode);
      await act(w, { kind: 'shutdown', reason: c.reason }, () => void h.lifecycle.shutdown(c.reason));
      return;
    case 'step': {
      const keys = running(w);
      const key = keys[c.index % Math.max(1, keys.length)];
      if (!key) return;
      if (c.ok) {
        await act(w, { kind: 'step.resolve', step: key }, () => h.settleStep(key));
      } else {
        const message = `${key} failed in the property test`;
        await act(w, { kind: 'step.reject', step: key, message }, () =>
          h.settleStep(key, c.bare ? message : new Error(message)),
        );
      }
      return;
    }
    case 'advance':
      await advance(w, c.ms);
      return;
  }
}

/** Drives any run to its end: a shutdown, every running step answered, then time for every bound. */
async function finish(w: World, ids: string[]): Promise<void> {
  await perform(w, { kind: 'shutdown', reason: 'the end' }, ids);
  for (let i = 0; i < 40 && w.h.output() === undefined; i++) {
    if (running(w).length > 0) await perform(w, { kind: 'step', index: 0, ok: true, bare: false }, ids);
    else await advance(w, TIMING.sessionStepMs + TIMING.sessionDrainMs + TIMING.drainMs);
  }
}

/** The invariant, from the calls alone: one disposal of the store, after every session's release. */
function checkStoreLast(w: World, ids: string[]): void {
  const calls = w.h.calls;
  expect(calls.filter((c) => c === 'disposeStore')).toHaveLength(1);
  const dispose = calls.indexOf('disposeStore');
  for (const id of ids) {
    const release = calls.indexOf(`releaseSession:${id}`);
    expect(release, `${id} released before the store is disposed`).toBeGreaterThanOrEqual(0);
    expect(release).toBeLessThan(dispose);
    expect(calls.indexOf(`closeServer:${id}`)).toBeLessThan(release);
  }
  expect(calls.filter((c) => c.startsWith('exitCode='))).toHaveLength(1);
}

/**
 * Fixed cases, run before the random ones every time (./seeds.ts): each a sequence a random run
 * once needed luck to find.
 */
const FIXED_CASES: Command[][] = [
  // An exit code set with no trigger, a session coming and going, the idle bound: the idle exit
  // keeps the code (it once dropped it: the idle bound has no event to stamp).
  [
    { kind: 'open' },
    { kind: 'exitCode', code: 5 },
    { kind: 'connection', session: 0, type: 'connection.ended' },
    { kind: 'step', index: 0, ok: true, bare: false },
    { kind: 'step', index: 0, ok: true, bare: false },
    { kind: 'advance', ms: 7000 },
    { kind: 'advance', ms: 7000 },
  ],
  // Found by seed 1 (path 197:4:0:2:7:9:11:14:13:13, the 198th run) against the mutant
  // idle-exit-drops-exit-code (test/model/more-mutants.ts); seed 2 missed it in all 500 runs.
  [
    { kind: 'exitCode', code: '5' },
    { kind: 'advance', ms: 7000 },
    { kind: 'advance', ms: 1 },
  ],
];

describePropertyTest({
  title: 'random interleavings against the real shared host',
  name: 'keep every guarantee, and dispose the store once, after every session',
  label: 'shared property test',
  commands: fc.array(command, { maxLength: 40, size: 'max' }),
  numRuns: 500,
  fixedCases: FIXED_CASES,
  run: async (commands) => {
    const w = newWorld();
    const ids: string[] = [];
    for (const c of commands) await perform(w, c, ids);
    await finish(w, ids);
    expect(w.h.output(), 'the run ended').toBeDefined();
    checkStoreLast(w, ids);
    await advance(w, TIMING.watchdogMs);
    expect(w.h.exits).toEqual([w.h.output()!.exitCode]);
    expect(w.h.clock.pending('ref'), "no ref'd timer left").toBe(0);
  },
});
