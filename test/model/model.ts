/**
 * The model behind the generated path tests: which events the real host can produce in each
 * state, how to serialise a snapshot, how to perform a step against the real host with fakes,
 * and which transitions the machine defines (computed from its definition, never listed).
 */

import { __unsafe_getAllOwnEventDescriptors, type AnyMachineSnapshot, type InspectionEvent } from 'xstate';
import type { LifecycleEvent } from '../../machines/lifecycle.js';
import type { TriggerEvent } from '../../machines/triggers.js';
import { flush } from '../support/fake-clock.js';
import { createHarness, type Harness } from '../support/host-harness.js';
import type { Input, Step, Timing } from './contract.js';
import type { Recorder, Traversal } from './driver.js';
import { takenKey } from './graph.js';
import type { Oracle } from './oracle.js';

// Not the machine's defaults (5000, 2000): a machine that ignored its input would pass with them.
export const DRAIN_MS = 4000;
export const STEP_MS = 1500;
export const WATCHDOG_MS = 1000;
export const PARENT_POLL_MS = 10;
export const INPUT = { drainTimeoutMs: DRAIN_MS, stepTimeoutMs: STEP_MS };
export const TIMING: Timing = {
  drainMs: DRAIN_MS,
  stepMs: STEP_MS,
  watchdogMs: WATCHDOG_MS,
  parentPollMs: PARENT_POLL_MS,
};

type Snapshot = AnyMachineSnapshot;

export interface EventBounds {
  /** Handlers in flight at most (the traversal never ends without a bound). */
  maxInflight: number;
  /** Handlers may start after teardown began (true) or only while connected (false). */
  startsDuringTeardown: boolean;
  /** Two payload variants for the first trigger (exit code 0 and an earlier 3), or one. */
  exitCodeVariants: boolean;
  /**
   * Index writes of the watcher in flight at most; they may start in every state (the machine
   * counts them wherever they arrive, and a watcher closing late may still report one).
   */
  maxWrites: number;
  /** Writes may start after teardown began (true) or only while connected (false). */
  writesDuringTeardown?: boolean;
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
    const writes = snapshot.context.writes as number;
    return __unsafe_getAllOwnEventDescriptors(snapshot).flatMap((type): LifecycleEvent[] => {
      switch (type) {
        case 'watch.write.started':
          return writes < bounds.maxWrites && (connected || bounds.writesDuringTeardown !== false) ? [{ type }] : [];
        case 'watch.write.settled':
          return writes > 0 ? [{ type }] : [];
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
        case 'http.closed':
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
    c.writes,
    c.priorExitCode,
    c.trigger?.type ?? null,
    // A set, not a list: the real machine fails each step at most once, and a broken one that
    // repeats a step must give a finite graph (a mutant fails its tests, it does not hang them).
    [...new Set(c.failedSteps.map((f: { step: string }) => f.step))],
    c.escalatedBy !== null,
    c.drain,
  ]);
}

/** The lifecycle's traversal with these bounds. */
export function lifecycleTraversal(bounds: EventBounds): Traversal<LifecycleEvent> {
  return { input: INPUT, serializeState, events: eventsFor(bounds) };
}

/** Keys of the transitions a real actor took, from the inspection API's microsteps. */
export function transitionRecorder(): Recorder {
  const taken = new Set<string>();
  const states = new Set<string>();
  const observe = (event: InspectionEvent): void => {
    if (event.actorRef.sessionId !== event.rootId) return;
    if (event.type !== '@xstate.microstep') return;
    const snapshot = event.snapshot as Snapshot;
    states.add(`lifecycle.${String(snapshot.value)}`);
    for (const t of event._transitions as never[]) taken.add(takenKey(t));
  };
  return { taken, states, observe };
}

// ---- replay against the real host --------------------------------------------------------

/** Does in the real world what the event stands for, and tells the oracle what it did. */
export async function perform(h: Harness, oracle: Oracle, event: LifecycleEvent): Promise<void> {
  const e = event as LifecycleEvent & { exitCode?: number };
  const feed = (input: Input): void => oracle.feed(input);
  if (e.exitCode !== undefined) {
    h.exitCode = e.exitCode;
    feed({ kind: 'exitCode', code: e.exitCode });
  }
  switch (e.type) {
    case 'stdin.end':
      feed({ kind: 'trigger', source: 'stdin.end' });
      h.stdin.end();
      break;
    case 'stdin.close':
      feed({ kind: 'trigger', source: 'stdin.close' });
      h.stdin.close();
      break;
    case 'stdout.closed':
      feed({ kind: 'trigger', source: 'stdout' });
      h.stdout.fail();
      break;
    case 'signal.received':
      feed({ kind: 'trigger', source: 'signal', signal: e.signal });
      h.signal(e.signal);
      break;
    case 'parent.gone':
      feed({ kind: 'trigger', source: 'parent' });
      await h.parentDies();
      break;
    case 'http.closed':
      feed({ kind: 'trigger', source: 'http' });
      h.lifecycle.trigger({ type: 'http.closed' });
      break;
    case 'transport.closed':
      feed({ kind: 'trigger', source: 'transport' });
      h.transportCloses();
      break;
    case 'shutdown.requested':
      feed({ kind: 'trigger', source: 'shutdown', ...(e.reason !== undefined && { reason: e.reason }) });
      void h.lifecycle.shutdown(e.reason);
      break;
    case 'handler.started':
      feed({ kind: 'handler.start', handler: h.startHandler() });
      break;
    case 'handler.settled': {
      const open = h.handlers.find((p) => !settled.has(p));
      if (!open) throw new Error('no handler in flight to settle');
      settled.add(open);
      feed({ kind: 'handler.settle', handler: open });
      open.settle();
      break;
    }
    case 'watch.write.started': {
      if (!h.watcher) throw new Error('the harness has no watcher');
      const write = h.watcher.startWrite();
      feed({ kind: 'write.start', write });
      break;
    }
    case 'watch.write.settled': {
      if (!h.watcher) throw new Error('the harness has no watcher');
      const write = h.watcher.writes.find((w) => !w.settled);
      if (!write) throw new Error('no write of the watcher to settle');
      feed({ kind: 'write.settle', write });
      h.watcher.settleWrite();
      break;
    }
    default: {
      const type = (e as { type: string }).type;
      const step = /^xstate\.(done|error)\.actor\.(closeTransport|disposeStore)$/.exec(type);
      if (step) {
        const name = step[2] as Step;
        const pending = h.pending[name].at(-1);
        if (!pending || settledSteps.has(pending)) throw new Error(`${name} is not running`);
        settledSteps.add(pending);
        if (step[1] === 'done') {
          feed({ kind: 'step.resolve', step: name });
          pending.resolve();
        } else {
          // A step can fail with anything thrown: an Error for one step, a bare string for the other.
          const message = `${name} failed in the model`;
          feed({ kind: 'step.reject', step: name, message });
          pending.reject(name === 'closeTransport' ? new Error(message) : message);
        }
      } else if (/^xstate\.after\.stepTimeout\./.test(type)) {
        feed({ kind: 'advance', ms: STEP_MS });
        await h.clock.advance(STEP_MS);
      } else if (/^xstate\.after\.drainTimeout\./.test(type)) {
        feed({ kind: 'advance', ms: DRAIN_MS });
        await h.clock.advance(DRAIN_MS);
      } else throw new Error(`no way to perform ${type}`);
    }
  }
  await flush();
}

const settled = new WeakSet<object>();
const settledSteps = new WeakSet<object>();

/** Whether the host is running `step` and the test has not settled it yet. */
export function stepRunning(h: Harness, step: Step): boolean {
  const pending = h.pending[step].at(-1);
  return pending !== undefined && !settledSteps.has(pending);
}

/** The harness every replay uses: steps settle on the replay's say-so, one simulated clock. */
export function replayHarness(observe?: (event: InspectionEvent) => void): Harness {
  return createHarness({
    closeTransport: 'manual',
    disposeStore: 'manual',
    drainTimeoutMs: DRAIN_MS,
    stepTimeoutMs: STEP_MS,
    watchdogMs: WATCHDOG_MS,
    parentPollMs: PARENT_POLL_MS,
    watcher: true,
    ...(observe && { inspect: [observe] }),
  });
}
