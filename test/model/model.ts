/**
 * The model behind the generated path tests: which events the real host can produce in each
 * state, how to serialise a snapshot, how to replay a path against the real host with fakes,
 * and which transitions the machine defines (computed from its definition, never listed).
 */

import { expect } from 'vitest';
import { __unsafe_getAllOwnEventDescriptors, type AnyMachineSnapshot, type InspectionEvent } from 'xstate';
import { type LifecycleEvent, lifecycleMachine } from '../../machines/lifecycle.js';
import type { TriggerEvent } from '../../machines/triggers.js';
import { flush } from '../support/fake-clock.js';
import { createHarness, type Harness } from '../support/lifecycle-harness.js';

export const DRAIN_MS = 5000;
export const STEP_MS = 2000;
export const WATCHDOG_MS = 1000;
export const INPUT = { drainTimeoutMs: DRAIN_MS, stepTimeoutMs: STEP_MS };

type Snapshot = AnyMachineSnapshot;

export interface EventBounds {
  /** Handlers in flight at most (the traversal never ends without a bound). */
  maxInflight: number;
  /** Handlers may start after teardown began (true) or only while connected (false). */
  startsDuringTeardown: boolean;
  /** Two payload variants for the first trigger (exit code 0 and an earlier 3), or one. */
  exitCodeVariants: boolean;
}

/**
 * Events offered in a snapshot, built from the snapshot's own event descriptors (so a new
 * transition in the machine is explored without touching this file), with payloads added.
 * Nothing is offered once the machine is final: the traversal would otherwise go on.
 */
export function eventsFor(bounds: EventBounds) {
  return (snapshot: Snapshot): LifecycleEvent[] => {
    if (snapshot.status !== 'active') return [];
    const connected = snapshot.value === 'connected';
    const inflight = snapshot.context.inflight as number;
    return __unsafe_getAllOwnEventDescriptors(snapshot).flatMap((type): LifecycleEvent[] => {
      switch (type) {
        case 'handler.started':
          return inflight < bounds.maxInflight && (connected || bounds.startsDuringTeardown) ? [{ type }] : [];
        case 'handler.settled':
          return inflight > 0 ? [{ type }] : [];
        case 'signal.received':
          if (!connected) return [{ type, signal: 'SIGTERM' }];
          return bounds.exitCodeVariants
            ? [
                { type, signal: 'SIGTERM', exitCode: 0 },
                { type, signal: 'SIGINT', exitCode: 3 },
              ]
            : [{ type, signal: 'SIGTERM', exitCode: 0 }];
        case 'shutdown.requested':
          return connected ? variants({ type, reason: 'test' }, bounds) : [];
        case 'transport.closed':
          return connected ? variants({ type }, bounds) : [];
        case 'stdin.end':
        case 'stdin.close':
        case 'stdout.closed':
        case 'parent.gone':
        case 'http.stop':
          return connected ? variants({ type }, bounds) : [{ type }];
        default:
          // xstate.done.actor.*, xstate.error.actor.*, xstate.after.*: results and delays.
          return [{ type } as unknown as LifecycleEvent];
      }
    });
  };
}

function variants(event: TriggerEvent, bounds: EventBounds): LifecycleEvent[] {
  const at = (exitCode: number) => ({ ...event, exitCode }) as TriggerEvent;
  return bounds.exitCodeVariants ? [at(0), at(3)] : [at(0)];
}

/** What behaviour depends on: the rest of the context (messages, the trigger's payload) is not state. */
export function serializeState(snapshot: Snapshot): string {
  const c = snapshot.context;
  return JSON.stringify([
    snapshot.value,
    c.inflight,
    c.priorExitCode,
    c.trigger?.type ?? null,
    c.failedSteps.map((f: { step: string }) => f.step),
    c.escalatedBy !== null,
    c.drain,
  ]);
}

export function describePath(steps: Array<{ event: { type: string } }>): string {
  return steps
    .slice(1)
    .map((s) => {
      const e = s.event as { type: string; signal?: string; exitCode?: number };
      const type = e.type
        .replace(/^xstate\.(done|error)\.actor\./, '$1:')
        .replace(/^xstate\.after\.(\w+)\..*/, 'after:$1');
      return `${type}${e.signal ? `(${e.signal})` : ''}${e.exitCode ? `[exit ${e.exitCode}]` : ''}`;
    })
    .join(' → ');
}

// ---- the machine's own definition --------------------------------------------------------

interface TransitionLike {
  source: { id: string };
  eventType: string;
}

interface NodeLike {
  id: string;
  states: Record<string, NodeLike>;
  transitions: Map<string, TransitionLike[]>;
  always?: TransitionLike[];
}

export function transitionKey(t: TransitionLike, index: number): string {
  return `${t.source.id} | ${t.eventType || 'always'} | #${index}`;
}

/** Every state id of the machine, from `machine.root`. */
export function definedStates(): string[] {
  const out: string[] = [];
  const walk = (node: NodeLike): void => {
    for (const child of Object.values(node.states)) {
      out.push(child.id);
      walk(child);
    }
  };
  walk(lifecycleMachine.root as unknown as NodeLike);
  return out;
}

/** Every transition the machine defines (event, delayed, done/error and eventless), keyed. */
export function definedTransitions(): string[] {
  const out: string[] = [];
  const walk = (node: NodeLike): void => {
    for (const list of [...node.transitions.values(), node.always ?? []]) {
      for (const [i, t] of list.entries()) out.push(transitionKey(t, i));
    }
    for (const child of Object.values(node.states)) walk(child);
  };
  walk(lifecycleMachine.root as unknown as NodeLike);
  return out;
}

/** Keys of the transitions a real actor took, from the inspection API's microsteps. */
export function transitionRecorder() {
  const taken = new Set<string>();
  const states = new Set<string>();
  const observe = (event: InspectionEvent): void => {
    if (event.actorRef.sessionId !== event.rootId) return;
    if (event.type !== '@xstate.microstep') return;
    const snapshot = event.snapshot as Snapshot;
    states.add(`lifecycle.${String(snapshot.value)}`);
    for (const t of event._transitions as unknown as TransitionLike[]) {
      const source = t.source as unknown as NodeLike;
      const list = t.eventType ? source.transitions.get(t.eventType) : source.always;
      taken.add(transitionKey(t, list?.indexOf(t) ?? -1));
    }
  };
  return { taken, states, observe };
}

// ---- replay against the real host --------------------------------------------------------

/** Does in the real world what the event stands for: a fake source fires, a step settles, time passes. */
export async function perform(h: Harness, event: LifecycleEvent): Promise<void> {
  const e = event as LifecycleEvent & { exitCode?: number };
  if (e.exitCode !== undefined) h.exitCode = e.exitCode;
  switch (e.type) {
    case 'stdin.end':
      h.stdin.end();
      break;
    case 'stdin.close':
      h.stdin.close();
      break;
    case 'stdout.closed':
      h.stdout.fail();
      break;
    case 'signal.received':
      h.signal(e.signal);
      break;
    case 'parent.gone':
      await h.parentDies();
      break;
    case 'http.stop':
      h.lifecycle.trigger({ type: 'http.stop' });
      break;
    case 'transport.closed':
      h.transportCloses();
      break;
    case 'shutdown.requested':
      void h.lifecycle.shutdown(e.reason);
      break;
    case 'handler.started':
      h.startHandler();
      break;
    case 'handler.settled': {
      const open = h.handlers.find((p) => !settled.has(p));
      if (!open) throw new Error('no handler in flight to settle');
      settled.add(open);
      open.settle();
      break;
    }
    default: {
      const type = (e as { type: string }).type;
      const step = /^xstate\.(done|error)\.actor\.(closeTransport|disposeStore)$/.exec(type);
      if (step) {
        const pending = h.pending[step[2] as 'closeTransport' | 'disposeStore'].at(-1);
        if (!pending) throw new Error(`${step[2]} is not running`);
        if (step[1] === 'done') pending.resolve();
        else pending.reject(new Error(`${step[2]} failed in the model`));
      } else if (/^xstate\.after\.stepTimeout\./.test(type)) await h.clock.advance(STEP_MS);
      else if (/^xstate\.after\.drainTimeout\./.test(type)) await h.clock.advance(DRAIN_MS);
      else throw new Error(`no way to perform ${type}`);
    }
  }
  await flush();
}

const settled = new WeakSet<object>();

const EXPECTED_STEPS: Record<string, string[]> = {
  connected: [],
  closingTransport: ['closeTransport'],
  draining: ['closeTransport'],
  disposingStore: ['closeTransport', 'disposeStore'],
  done: ['closeTransport', 'disposeStore'],
};

/**
 * Replays one generated path against the real host and checks, after every step, the state,
 * the context that matters and the ordered calls; at the end, the exit-code rule, that each
 * step ran at most once and in order, that listeners were removed and no ref'd timer is left.
 */
export async function replay(
  steps: Array<{ event: LifecycleEvent; state: Snapshot }>,
  observe?: (event: InspectionEvent) => void,
): Promise<void> {
  const h = createHarness({
    closeTransport: 'manual',
    disposeStore: 'manual',
    drainTimeoutMs: DRAIN_MS,
    stepTimeoutMs: STEP_MS,
    watchdogMs: WATCHDOG_MS,
    parentPollMs: 10,
    ...(observe && { inspect: [observe] }),
  });
  let firstTrigger: { exitCode?: number } | undefined;
  let failures = 0;
  for (const [i, step] of steps.entries()) {
    if (i > 0) {
      const e = step.event as LifecycleEvent & { exitCode?: number };
      if (firstTrigger === undefined && e.exitCode !== undefined) firstTrigger = e;
      if (/^xstate\.(error\.actor|after\.stepTimeout)/.test(e.type)) failures++;
      await perform(h, step.event);
    }
    const expected = step.state;
    const where = `after step ${i} (${step.event.type})`;
    expect(h.state(), where).toBe(expected.value);
    const actual = h.lifecycle.actor.getSnapshot().context;
    const value = String(expected.value);
    // The gate's count is the truth while connected. Unobserved, the host sends the actor no
    // handler events until teardown starts (the trigger carries the count): its count stays 0.
    if (value === 'connected') expect(h.lifecycle.gate.size, `${where}: gate`).toBe(expected.context.inflight);
    const unobservedConnected = value === 'connected' && !observe;
    expect(
      {
        inflight: unobservedConnected ? h.lifecycle.gate.size : actual.inflight,
        priorExitCode: actual.priorExitCode,
        failedSteps: actual.failedSteps.map((f) => f.step),
        drain: actual.drain,
        escalated: actual.escalatedBy !== null,
      },
      where,
    ).toEqual({
      inflight: expected.context.inflight,
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
    expect(h.calls.filter((c) => c.startsWith('log:Shutting down (')).length, where).toBe(
      value === 'connected' ? 0 : 1,
    );
  }

  const last = steps.at(-1)!.state;
  if (last.value !== 'connected') expect(h.listeners().stdin, 'stdin listeners removed').toBe(0);
  if (last.status === 'done') {
    const prior = firstTrigger?.exitCode ?? 0;
    const code = prior !== 0 ? prior : failures > 0 ? 1 : 0;
    expect(h.exitCode, 'exit-code rule').toBe(code);
    expect(h.steps()).toEqual(['closeTransport', 'disposeStore']);
    expect(h.clock.pending('ref'), "no ref'd timer left after done").toBe(0);
    expect(h.clock.pending('unref'), 'only the watchdog is left').toBe(1);
    expect(h.exits).toEqual([]);
    await h.clock.advance(WATCHDOG_MS);
    expect(h.exits, 'the watchdog exits with the computed code').toEqual([code]);
  }
}
