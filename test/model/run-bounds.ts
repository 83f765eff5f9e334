/**
 * Every run of a generated test fails rather than hangs. A machine can loop without time
 * passing: a mutant whose failedStep goes back to draining, with a step that rejects at once,
 * cycles failedStep → draining → disposingStore on promise rejections alone. Nothing then
 * leaves the microtask queue, so no timer fires, vitest's own test timeout included, and the
 * run (a CI job) hangs until it is killed (issue 34). So each run is bounded twice:
 *
 * - transitions at one instant of the simulated clock, counted where the loop runs: an
 *   inspection observer on every actor the run's hosts make (`watchHosts`, attached through the
 *   actor's system, so a host that runs "unobserved" stays so). Past the bound the observer
 *   throws inside the transition; XState catches it there and stops the actor with that error,
 *   which ends the loop, and the run fails with a message naming the states it cycled through;
 * - real time, for a loop that yields to the event loop (a timer at the same instant forever):
 *   a real timer, which can fire then, stops the run's actors and fails the run.
 *
 * A loop that never reaches an actor (a host's own promise chain) is beyond both: nothing runs
 * there that a test could hook without mocking modules.
 */
import type { AnyActorRef, InspectionEvent } from 'xstate';
import { type WatchedHost, watchHosts } from '../support/run-watch.js';

export interface RunBounds {
  /** Transitions (microsteps of any of the run's actors) at one instant of the simulated clock. */
  transitionsPerInstant: number;
  /** Transitions in the whole run: a machine that cycles as time passes never stops either. */
  transitionsPerRun: number;
  /** Real time for one run: one path, one probe, one scenario, one property-test sequence. */
  wallMs: number;
}

/**
 * Measured over the whole of test/model with the real machines (26,341 bounded runs, simple
 * paths included; `peakTransitions` written out after each run): at most 59 transitions at one
 * instant and 77 in one run (both the shared server's property test, sessions included), and
 * 353 ms of real time for the longest run (load 7). The bounds leave a factor of 17, 65 and 85.
 */
export const RUN_BOUNDS: RunBounds = { transitionsPerInstant: 1000, transitionsPerRun: 5000, wallMs: 30_000 };

/** What a bounded run threw when it passed a bound; `expectNone` groups these under their own name. */
export class RunBoundError extends Error {
  override name = 'RunBoundError';
}

/** The most transitions seen at one instant by any bounded run in this process (how the bound was chosen). */
export const peakTransitions = { atOneInstant: 0, inOneRun: 0 };

/**
 * Runs `run` (one replay, probe, scenario or property sequence), failing it with a
 * `RunBoundError` that names the loop when it passes `bounds`. `what` names the run.
 */
export async function bounded<T>(what: string, run: () => Promise<T>, bounds: RunBounds = RUN_BOUNDS): Promise<T> {
  const started = performance.now();
  const actors: AnyActorRef[] = [];
  let tripped: string | undefined;
  let instant: { clock: object; at: number } | undefined;
  let count = 0;
  let total = 0;
  const recent: Step[] = [];

  const inspect =
    (host: WatchedHost) =>
    (event: InspectionEvent): void => {
      // Only a microstep is inside the transition's own try/catch: a throw there stops the actor.
      if (event.type !== '@xstate.microstep') return;
      if (tripped !== undefined) throw new RunBoundError(tripped);
      const at = host.clock.now();
      if (instant?.clock !== host.clock || instant.at !== at) {
        instant = { clock: host.clock, at };
        count = 0;
        recent.length = 0;
      }
      count++;
      total++;
      if (count > peakTransitions.atOneInstant) peakTransitions.atOneInstant = count;
      if (total > peakTransitions.inOneRun) peakTransitions.inOneRun = total;
      recent.push({
        state: stateText(event.actorRef as { id?: string }, event.snapshot),
        event: event.event.type,
        eventless: (event._transitions as Array<{ eventType: string }>).every((t) => t.eventType === ''),
      });
      if (recent.length > 64) recent.shift();
      if (count > bounds.transitionsPerInstant) {
        tripped =
          `the machine looped without time passing: more than ${bounds.transitionsPerInstant} transitions ` +
          `at t=${at} ms of the simulated clock; the loop: ${describeLoop(recent)}`;
        throw new RunBoundError(tripped);
      }
      if (total > bounds.transitionsPerRun) {
        tripped =
          `the machine never stopped: more than ${bounds.transitionsPerRun} transitions in one run ` +
          `(now t=${at} ms of the simulated clock); the loop: ${describeLoop(recent)}`;
        throw new RunBoundError(tripped);
      }
      if (performance.now() - started > bounds.wallMs) {
        tripped = `the run took more than ${bounds.wallMs} ms of real time; last transitions: ${describeLoop(recent)}`;
        throw new RunBoundError(tripped);
      }
    };

  const inspections: Array<{ unsubscribe(): void }> = [];
  const detach = (): void => {
    for (const inspection of inspections.splice(0)) inspection.unsubscribe();
  };
  const unwatch = watchHosts((host) => {
    actors.push(host.actor);
    inspections.push(host.actor.system.inspect(inspect(host)));
  });
  let timer: NodeJS.Timeout | undefined;
  const outOfTime = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      tripped ??= `the run took more than ${bounds.wallMs} ms of real time (it yields, but never ends); last transitions: ${describeLoop(recent)}`;
      // Stopping is a transition too: the observers go first, or they would throw at it.
      detach();
      for (const actor of actors) stopQuietly(actor);
      reject(new RunBoundError(tripped));
    }, bounds.wallMs);
  });
  try {
    const result = await Promise.race([run(), outOfTime]);
    if (tripped !== undefined) throw new RunBoundError(tripped);
    return result;
  } catch (error) {
    if (tripped === undefined) throw error;
    const after = error instanceof RunBoundError ? '' : `; then: ${firstLine(error)}`;
    throw new RunBoundError(`run bound passed in ${what}: ${tripped}${after}`);
  } finally {
    clearTimeout(timer);
    unwatch();
    detach();
    outOfTime.catch(() => {});
  }
}

/** `lifecycle failedStep`, `sharedServer connected.serving`, `session-3 draining`. */
function stateText(actor: { id?: string }, snapshot: unknown): string {
  const value = (snapshot as { value?: unknown }).value;
  // A root actor's id is the system's (`x:0`): its machine's id says more. A child's is its name.
  const id = actor.id ?? '?';
  const name = /^x:\d+$/.test(id) ? ((snapshot as { machine?: { id?: string } }).machine?.id ?? id) : id;
  return `${name} ${dotted(value)}`;
}

function dotted(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === null || typeof value !== 'object') return String(value);
  return Object.entries(value)
    .map(([key, child]) => `${key}.${dotted(child)}`)
    .join(',');
}

/** A state entered, the event of its macrostep, and whether it was entered by an eventless transition. */
export interface Step {
  state: string;
  event: string;
  eventless: boolean;
}

/**
 * The cycle at the end of `recent`, as `lifecycle disposingStore → lifecycle failedStep →
 * lifecycle draining → lifecycle disposingStore (on xstate.error.actor.disposeStore)`; the last
 * few states when nothing repeats. The same loop reads the same wherever the bound cut it: it
 * starts from the source of its first transition taken on an event (eventless ones follow on by
 * themselves), the alphabetically first such source when there are several.
 */
export function describeLoop(recent: readonly Step[]): string {
  const last = recent.at(-1);
  if (last === undefined) return '(no transition)';
  let from = -1;
  for (let i = recent.length - 2; i >= 0; i--) {
    if (recent[i]?.state === last.state) {
      from = i;
      break;
    }
  }
  if (from === -1)
    return `${recent
      .slice(-8)
      .map((step) => step.state)
      .join(' → ')} (no cycle yet)`;
  // Each entry of the ring is a transition into its state; its source is the entry before it.
  const ring = recent.slice(from + 1);
  const sourceOf = (i: number): string => ring[(i - 1 + ring.length) % ring.length]!.state;
  let start = 0;
  let best: string | undefined;
  for (const [i, step] of ring.entries()) {
    if (step.eventless) continue;
    if (best === undefined || sourceOf(i) < best) {
      best = sourceOf(i);
      start = i;
    }
  }
  const rotated = [...ring.slice(start), ...ring.slice(0, start)];
  const events = [...new Set(rotated.filter((step) => !step.eventless).map((step) => step.event))];
  return `${[sourceOf(start), ...rotated.map((step) => step.state)].join(' → ')} (on ${events.join(', ')})`;
}

function stopQuietly(actor: AnyActorRef): void {
  try {
    actor.stop();
  } catch {
    // Already stopped or errored: nothing left to run.
  }
}

function firstLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n')[0] ?? '';
}
