/**
 * Self-loop probes. A generated path never contains an input the machine ignores
 * (docs/design.md §5: "paths never contain self-loops"), so a machine that ignores what it must
 * not — a signal while draining, a step's result, the passing of a bound — or that re-enters
 * a state on a repeated trigger passes every path test. Here every state a shortest path
 * reaches is offered every input the world can produce there; the ones the machine ignores
 * are replayed after the path, one after another, judged by the contract oracle alone (the
 * machine says "nothing happens", so it has nothing else to check). Then enough time passes
 * for every bound and the watchdog, so each probe also runs teardown to its end.
 */
import type { AnyMachineSnapshot, AnyStateMachine } from 'xstate';
import type { LifecycleEvent } from '../../machines/lifecycle.js';
import type { Step } from './contract.js';
import type { Path as DriverPath } from './driver.js';
import { ignoredBy, inflightAt } from './graph.js';
import {
  DRAIN_MS,
  perform,
  replayHarness,
  STEP_MS,
  serializeState,
  stepRunning,
  TIMING,
  WATCHDOG_MS,
} from './model.js';
import { Oracle } from './oracle.js';

type Path = DriverPath<LifecycleEvent>;

/** Long enough for a hung close, the drain deadline, a hung dispose and the watchdog. */
const TIME_PASSES_MS = STEP_MS + DRAIN_MS + STEP_MS + WATCHDOG_MS;

const TRIGGERS: LifecycleEvent[] = [
  { type: 'stdin.end' },
  { type: 'stdin.close' },
  { type: 'stdout.closed' },
  { type: 'transport.closed' },
  { type: 'signal.received', signal: 'SIGTERM' },
  { type: 'parent.gone' },
  { type: 'http.closed' },
  { type: 'shutdown.requested', reason: 'test' },
];

const STEP_RESULT = /^xstate\.(done|error)\.actor\.(closeTransport|disposeStore)$/;

/**
 * Everything the world can do in `snapshot`: any trigger, a handler or an index write of the
 * watcher starting (in flight ≤ the bounds) or settling, a step answering, a bound's worth of
 * time passing. The counts are the world's (the path's starts minus settles), not the machine's.
 */
function worldInputs(
  snapshot: AnyMachineSnapshot,
  inflight: number,
  writes: number,
  bounds: WorldBounds,
): LifecycleEvent[] {
  const state = `lifecycle.${String(snapshot.value)}`;
  const raw = (type: string) => ({ type }) as unknown as LifecycleEvent;
  return [
    ...TRIGGERS,
    ...(inflight < bounds.maxInflight ? [{ type: 'handler.started' } as const] : []),
    ...(inflight > 0 ? [{ type: 'handler.settled' } as const] : []),
    ...(writes < bounds.maxWrites ? [{ type: 'watch.write.started' } as const] : []),
    ...(writes > 0 ? [{ type: 'watch.write.settled' } as const] : []),
    ...['closeTransport', 'disposeStore'].flatMap((s) => [
      raw(`xstate.done.actor.${s}`),
      raw(`xstate.error.actor.${s}`),
    ]),
    raw(`xstate.after.stepTimeout.${state}`),
    raw(`xstate.after.drainTimeout.${state}`),
  ];
}

/** How many handlers and index writes of the watcher the world may have in flight. */
export interface WorldBounds {
  maxInflight: number;
  maxWrites: number;
}

/** The watcher's writes in flight at the end of `path`, as the world counts them (starts minus settles). */
function writesAt(path: Path): number {
  return path.steps.reduce(
    (n, s) => n + (s.event.type === 'watch.write.started' ? 1 : s.event.type === 'watch.write.settled' ? -1 : 0),
    0,
  );
}

/** The world inputs the machine ignores at the end of `path`: self-loops, in the order the probe tries them. */
export function ignoredInputs(machine: AnyStateMachine, path: Path, bounds: WorldBounds): LifecycleEvent[] {
  const inputs = worldInputs(path.steps.at(-1)!.state, inflightAt(path), writesAt(path), bounds);
  return ignoredBy(machine, path, inputs, serializeState);
}

/** Replays `path`, then each probe, then time passing; the oracle checks after every one. */
export async function probe(path: Path, probes: LifecycleEvent[]): Promise<void> {
  const h = replayHarness();
  const oracle = new Oracle(TIMING);
  for (const step of path.steps.slice(1)) {
    await perform(h, oracle, step.event);
    oracle.check(h);
  }
  for (const event of probes) {
    const result = STEP_RESULT.exec(event.type);
    // The world can answer only a step the host is running and that has not answered yet.
    if (result && !stepRunning(h, result[2] as Step)) continue;
    await perform(h, oracle, event);
    oracle.check(h);
  }
  oracle.feed({ kind: 'advance', ms: TIME_PASSES_MS });
  await h.clock.advance(TIME_PASSES_MS);
  oracle.check(h);
}
