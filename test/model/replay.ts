/**
 * One generated path replayed against the real host (see `replay`).
 */
import { expect } from 'vitest';
import type { AnyMachineSnapshot, InspectionEvent } from 'xstate';
import type { LifecycleEvent } from '../../machines/lifecycle.js';
import type { Harness } from '../support/host-harness.js';
import { replaySteps } from './driver.js';
import { perform, replayHarness, TIMING, WATCHDOG_MS } from './model.js';
import { Oracle } from './oracle.js';

type Snapshot = AnyMachineSnapshot;

const EXPECTED_STEPS: Record<string, string[]> = {
  connected: [],
  closingTransport: ['closeTransport'],
  draining: ['closeTransport'],
  disposingStore: ['closeTransport', 'disposeStore'],
  done: ['closeTransport', 'disposeStore'],
};

/**
 * Replays one generated path against the real host. After every step the contract oracle
 * (`./oracle.ts`, independent of the machine) checks what was observed; then the host is
 * compared with the machine: the state, the context that matters and the ordered calls; at
 * the end, the exit-code rule, that each step ran at most once and in order, that listeners
 * were removed and no ref'd timer is left. ./driver.ts `replaySteps` reports a broken
 * guarantee before any disagreement between host and machine.
 */
export async function replay(
  steps: Array<{ event: LifecycleEvent; state: Snapshot }>,
  observe?: (event: InspectionEvent) => void,
): Promise<void> {
  const h = replayHarness(observe);
  const oracle = new Oracle(TIMING);
  let firstTrigger: { exitCode?: number } | undefined;
  let failures = 0;
  await replaySteps(steps, {
    perform: async (event) => {
      const e = event as LifecycleEvent & { exitCode?: number };
      if (firstTrigger === undefined && e.exitCode !== undefined) firstTrigger = e;
      if (/^xstate\.(error\.actor|after\.stepTimeout)/.test(e.type)) failures++;
      await perform(h, oracle, event);
    },
    // The oracle judges in `check`, after `perform`: whatever `perform` throws is a disagreement.
    isVerdict: () => false,
    check: () => oracle.check(h),
    compare: (step, where) => expectAsMachineSays(h, step, where, observe),
    end: async (asMachineSays) => {
      const last = steps.at(-1)!.state;
      asMachineSays(() => expectEndAsMachineSays(h, last, firstTrigger?.exitCode ?? 0, failures));
      if (last.status !== 'done') return;
      oracle.feed({ kind: 'advance', ms: WATCHDOG_MS });
      await h.clock.advance(WATCHDOG_MS);
      oracle.check(h);
      const code = exitCodeRule(firstTrigger?.exitCode ?? 0, failures);
      asMachineSays(() => expect(h.exits, 'the watchdog exits with the computed code').toEqual([code]));
    },
  });
}

function exitCodeRule(prior: number, failures: number): number {
  return prior !== 0 ? prior : failures > 0 ? 1 : 0;
}

/** After a step: the host is in the state the machine reached, with the same context and calls. */
function expectAsMachineSays(
  h: Harness,
  step: { event: LifecycleEvent; state: Snapshot },
  where: string,
  observe: ((event: InspectionEvent) => void) | undefined,
): void {
  const expected = step.state;
  expect(h.state(), where).toBe(expected.value);
  const actual = h.lifecycle.actor.getSnapshot().context;
  const value = String(expected.value);
  // The gate's count is the truth while connected. Unobserved, the host sends the actor no
  // handler events until teardown starts (the trigger carries the count): its count stays 0.
  if (value === 'connected') expect(h.lifecycle.gate.size, `${where}: gate`).toBe(expected.context.inflight);
  // The watcher's writes are the world's: started and not yet settled, whatever the state.
  expect(h.watcher?.unsettled, `${where}: the watcher's writes`).toBe(expected.context.writes);
  const unobservedConnected = value === 'connected' && !observe;
  expect(
    {
      inflight: unobservedConnected ? h.lifecycle.gate.size : actual.inflight,
      writes: actual.writes,
      priorExitCode: actual.priorExitCode,
      failedSteps: actual.failedSteps.map((f) => f.step),
      drain: actual.drain,
      escalated: actual.escalatedBy !== null,
    },
    where,
  ).toEqual({
    inflight: expected.context.inflight,
    writes: expected.context.writes,
    priorExitCode: expected.context.priorExitCode,
    failedSteps: expected.context.failedSteps.map((f: { step: string }) => f.step),
    drain: expected.context.drain,
    escalated: expected.context.escalatedBy !== null,
  });
  if (unobservedConnected) expect(actual.inflight, `${where}: no handler events sent while connected`).toBe(0);
  // Ordered calls so far: the breadcrumb before any step, steps once each and in order.
  const stepsSoFar = h.steps();
  if (value === 'failedStep') expect(stepsSoFar.length, where).toBeGreaterThan(0);
  else expect(stepsSoFar, where).toEqual(EXPECTED_STEPS[value]);
  const crumb = h.calls.findIndex((c) => c.startsWith('log:Shutting down ('));
  if (value === 'connected') expect(crumb, where).toBe(-1);
  else expect(crumb, where).toBeLessThan(h.calls.indexOf('closeTransport'));
  expect(h.calls.filter((c) => c.startsWith('log:Shutting down (')).length, where).toBe(value === 'connected' ? 0 : 1);
}

/** At the end of the path, before the watchdog's time passes. */
function expectEndAsMachineSays(h: Harness, last: Snapshot, prior: number, failures: number): void {
  if (last.value !== 'connected') expect(h.listeners().stdin, 'stdin listeners removed').toBe(0);
  if (last.status !== 'done') return;
  expect(h.exitCode, 'exit-code rule').toBe(exitCodeRule(prior, failures));
  expect(h.steps()).toEqual(['closeTransport', 'disposeStore']);
  expect(h.clock.pending('ref'), "no ref'd timer left after done").toBe(0);
  expect(h.clock.pending('unref'), 'only the watchdog is left').toBe(1);
  expect(h.exits).toEqual([]);
}
