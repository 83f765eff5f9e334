/**
 * Every run of a machine in a test fails rather than hangs. A machine can loop without time
 * passing: a mutant whose failedStep goes back to draining, with a step that rejects at once,
 * cycles failedStep → draining → disposingStore on promise rejections alone. Nothing then
 * leaves the microtask queue, so no timer fires, vitest's own test timeout included, and the
 * test (a CI job) hangs until it is killed. So every run is bounded where the loop runs:
 *
 * - One observer per actor system, attached through the system (`system.inspect`), so a host
 *   that runs unobserved (no inspector in its options) stays so. It hears every actor a host
 *   makes, whoever made the host and however deep (src/lifecycle/hosted-actors.ts tells of each
 *   on a diagnostics channel), and each actor a test makes itself (`watchActor`).
 * - Each microstep counts against the run open now: one test (test/support/bound-each-test.ts
 *   opens one around every test), or inside it one replayed path, probe, scenario or property
 *   sequence (`bounded`). Past a bound the observer throws inside the transition; XState
 *   catches it there and stops the actor with that error, which ends the loop, the run fails at
 *   once with a message naming the states it cycled through, and the fake clocks of its hosts
 *   refuse to advance (a test looping on `clock.advance` ends too).
 * - The bounds: transitions at one instant (the same time of a simulated clock, or one turn of
 *   the event loop: a microtask loop never leaves its turn), transitions in the whole run (a
 *   loop through immediate timers or advances of a fake clock moves on from instant to
 *   instant), and for one replayed path or scenario real time, whose timer can fire when the
 *   loop yields, and stops the run's actors.
 *
 * A loop that never reaches an actor (a host's own promise chain, an adapter that loops without
 * sending) is beyond this: nothing runs there that a test could hook without mocking modules.
 * The runs nest, one open at a time: tests of a file run one after another (vitest's default;
 * a `concurrent` test would count against whichever run is open).
 * The state is kept on `globalThis`, so a mutated copy of this file (test/support/mutant-copy.ts)
 * shares the runs and the one channel listener with the original.
 */
import { subscribe } from 'node:diagnostics_channel';
import type { AnyActorRef, InspectionEvent } from 'xstate';
import { HOSTED_ACTORS, type HostedActor } from '../../src/lifecycle/hosted-actors.js';

export interface RunBounds {
  /** Transitions (microsteps of any of the run's actors) at one instant: one time of a simulated clock, or one turn of the event loop. */
  transitionsPerInstant: number;
  /** Transitions in the whole run: a machine that cycles as time passes never stops either. */
  transitionsPerRun: number;
  /** Real time for one run (a replayed path, a scenario); `Infinity` leaves it to vitest's test timeout. */
  wallMs: number;
}

/**
 * One replayed path, probe, scenario or property sequence. Measured over the whole of
 * test/model with the real machines (26,341 bounded runs, simple paths included): at most 59
 * transitions at one instant and 77 in one run (both the shared server's property test,
 * sessions included), and 353 ms of real time for the longest run (load 7); again with the
 * per-test bound in place (26,402 runs, `QMD_RUN_BOUNDS_PEAKS`): 55, 99 and 226 ms. The bounds
 * leave a factor of 17, 50 and 85.
 */
export const RUN_BOUNDS: RunBounds = { transitionsPerInstant: 1000, transitionsPerRun: 5000, wallMs: 30_000 };

/**
 * One test, outside the runs above (those count their own). Measured over test/model,
 * test/lifecycle, test/viz, test/mutants, test/mcp, test/relay and test/serve
 * (`QMD_RUN_BOUNDS_PEAKS`, see `writePeaks`; 129 tests run a machine outside a run of their
 * own): at most 19 transitions at one instant and 19 in one test, so the run's bounds leave a
 * factor of 50 and 250 (a test may well send a few hundred handler events). A test has no
 * real-time bound of its own: one that waits without transitions is vitest's timeout to judge;
 * one that cycles on 1 ms timers passes 5,000 transitions in about 5 s.
 */
export const TEST_BOUNDS: RunBounds = {
  transitionsPerInstant: 1000,
  transitionsPerRun: 5000,
  wallMs: Number.POSITIVE_INFINITY,
};

/**
 * Far past every bound. The loops written to test the bounds give up here (and so do the fake
 * hosts' steps and the fake clock, which a looping machine drives), so that with the bounds
 * broken those tests fail instead of hanging.
 */
export const SAFETY = 20_000;

/** What a bounded run threw when it passed a bound; `expectNone` groups these under their own name. */
export class RunBoundError extends Error {
  override name = 'RunBoundError';
}

/** The most transitions seen at one instant and in one run by any bounded run in this process. */
export const peakTransitions = { atOneInstant: 0, inOneRun: 0 };

/** A clock as the bound reads it: a simulated one (test/support/fake-clock.ts) can advance and be halted. */
interface WatchedClock {
  now(): number;
  advance?: (ms: number) => Promise<void>;
  halt?: (error: Error) => void;
}

/** A root actor being watched, and the clock its delays run on. */
interface Host {
  actor: AnyActorRef;
  clock: WatchedClock;
  /** Stopped by its run's wall-time bound: its stop transitions are not counted. */
  released: boolean;
}

/** One open run: what the microsteps count against. */
interface Run {
  step(host: Host, event: InspectionEvent): void;
  adopt(host: Host): void;
}

interface Shared {
  runs: Run[];
  /** Counts transitions made while no test runs (a file's own set-up): `looseTrip` says if it tripped. */
  loose: OpenRun | undefined;
  systems: WeakSet<object>;
  listening: boolean;
  turn: number;
  turnPending: boolean;
}

const KEY = Symbol.for('qmd.test.run-bounds');
const holder = globalThis as Record<symbol, Shared | undefined>;
holder[KEY] ??= { runs: [], loose: undefined, systems: new WeakSet(), listening: false, turn: 0, turnPending: false };
const shared: Shared = holder[KEY];

// Taken before any test can replace it: a turn of the event loop is measured by a real immediate.
const realSetImmediate = setImmediate;

const realTime: WatchedClock = { now: () => performance.now() };

function currentRun(): Run {
  const top = shared.runs.at(-1);
  if (top !== undefined) return top;
  shared.loose ??= openRun('no test (a file’s own set-up)', TEST_BOUNDS, false);
  return shared.loose.run;
}

/** Attaches the one observer of `actor`'s system, unless it has one; each microstep counts against the run open then. */
function watch(actor: AnyActorRef, clock: WatchedClock): void {
  const system = actor.system as object;
  if (shared.systems.has(system)) return;
  shared.systems.add(system);
  const host: Host = { actor, clock, released: false };
  currentRun().adopt(host);
  actor.system.inspect((event: InspectionEvent) => {
    // Only a microstep is inside the transition's own try/catch: a throw there stops the actor.
    if (event.type !== '@xstate.microstep' || host.released) return;
    currentRun().step(host, event);
  });
}

if (!shared.listening) {
  shared.listening = true;
  subscribe(HOSTED_ACTORS, (message) => {
    const { actor, clock } = message as HostedActor;
    watch(actor, clock);
  });
}

/**
 * Bounds an actor a test makes itself with `createActor` (hosts are bounded as they are made):
 * call it before `start()`. `clock` is the one given to `createActor`, if any. Returns `actor`.
 */
export function watchActor<A extends AnyActorRef>(actor: A, clock?: { now(): number }): A {
  watch(actor, clock ?? realTime);
  return actor;
}

/** A run as `bounded` and the per-test hook hold it. */
export interface OpenRun {
  run: Run;
  /** Rejects with the bound's message the moment a bound is passed. */
  failure: Promise<never>;
  /** What was passed, if anything. */
  tripped(): string | undefined;
  /** Ends the run: later transitions count against the run that was open before it. */
  close(): void;
}

/** Opens a run that counts every transition until `close()`; `push: false` for the loose run. */
export function openRun(what: string, bounds: RunBounds, push = true): OpenRun {
  const started = performance.now();
  const hosts = new Set<Host>();
  let tripped: string | undefined;
  let instant: { key: unknown; at: number } | undefined;
  let count = 0;
  let total = 0;
  const recent: Step[] = [];
  const peaks = { atOneInstant: 0 };
  let fail!: (error: RunBoundError) => void;
  const failure = new Promise<never>((_, reject) => {
    fail = reject;
  });
  failure.catch(() => {});

  const trip = (message: string): never => {
    tripped = message;
    const error = new RunBoundError(message);
    fail(error);
    // A test that goes on advancing a fake clock would drive nothing now: it fails instead.
    for (const host of hosts) host.clock.halt?.(new RunBoundError(`run bound passed in ${what}: ${message}`));
    throw error;
  };

  const run: Run = {
    adopt: (host) => {
      hosts.add(host);
    },
    step: (host, event) => {
      hosts.add(host);
      if (tripped !== undefined) throw new RunBoundError(tripped);
      const simulated = typeof host.clock.advance === 'function';
      const key = simulated ? host.clock : shared.turn;
      const at = simulated ? host.clock.now() : 0;
      if (!simulated) nextTurnSoon();
      if (instant?.key !== key || instant.at !== at) {
        instant = { key, at };
        count = 0;
      }
      count++;
      total++;
      if (count > peakTransitions.atOneInstant) peakTransitions.atOneInstant = count;
      if (total > peakTransitions.inOneRun) peakTransitions.inOneRun = total;
      peaks.atOneInstant = Math.max(peaks.atOneInstant, count);
      recent.push({
        state: stateText(event.actorRef as { id?: string }, (event as { snapshot: unknown }).snapshot),
        event: (event as { event: { type: string } }).event.type,
        eventless: ((event as { _transitions: Array<{ eventType: string }> })._transitions ?? []).every(
          (t) => t.eventType === '',
        ),
      });
      if (recent.length > 64) recent.shift();
      if (count > bounds.transitionsPerInstant) {
        const where = simulated ? `at t=${at} ms of the simulated clock` : 'in one turn of the event loop';
        trip(
          `the machine looped without time passing: more than ${bounds.transitionsPerInstant} transitions ` +
            `${where}; the loop: ${describeLoop(recent)}`,
        );
      }
      if (total > bounds.transitionsPerRun) {
        const now = simulated ? ` (now t=${at} ms of the simulated clock)` : '';
        trip(
          `the machine never stopped: more than ${bounds.transitionsPerRun} transitions in one run${now}; ` +
            `the loop: ${describeLoop(recent)}`,
        );
      }
      if (performance.now() - started > bounds.wallMs) {
        trip(`the run took more than ${bounds.wallMs} ms of real time; last transitions: ${describeLoop(recent)}`);
      }
    },
  };

  let timer: NodeJS.Timeout | undefined;
  if (Number.isFinite(bounds.wallMs)) {
    timer = setTimeout(() => {
      if (tripped !== undefined) return;
      tripped = `the run took more than ${bounds.wallMs} ms of real time (it yields, but never ends); last transitions: ${describeLoop(recent)}`;
      // Stopping is a transition too: released hosts are not counted, or the observer would throw at it.
      for (const host of hosts) {
        host.released = true;
        stopQuietly(host.actor);
      }
      fail(new RunBoundError(tripped));
    }, bounds.wallMs);
  }
  if (push) shared.runs.push(run);
  return {
    run,
    failure,
    tripped: () => tripped,
    close: () => {
      clearTimeout(timer);
      const at = shared.runs.lastIndexOf(run);
      if (at !== -1) shared.runs.splice(at, 1);
      writePeaks(what, peaks.atOneInstant, total, performance.now() - started);
    },
  };
}

/**
 * Runs `run` (one replay, probe, scenario, property sequence or test), failing it with a
 * `RunBoundError` that names the loop the moment it passes `bounds`. `what` names the run.
 */
export async function bounded<T>(what: string, run: () => Promise<T>, bounds: RunBounds = RUN_BOUNDS): Promise<T> {
  const open = openRun(what, bounds);
  try {
    const result = await Promise.race([run(), open.failure]);
    const tripped = open.tripped();
    if (tripped !== undefined) throw new RunBoundError(tripped);
    return result;
  } catch (error) {
    const tripped = open.tripped();
    if (tripped === undefined) throw error;
    const after = error instanceof Error && error.name === 'RunBoundError' ? '' : `; then: ${firstLine(error)}`;
    throw new RunBoundError(`run bound passed in ${what}: ${tripped}${after}`);
  } finally {
    open.close();
  }
}

/** What tripped while no test ran (a file's own set-up), if anything: the per-test hook reports it. */
export function looseTrip(): string | undefined {
  return shared.loose?.tripped();
}

/** A real clock's instant is a turn of the event loop: it ends when an immediate can run. */
function nextTurnSoon(): void {
  if (shared.turnPending) return;
  shared.turnPending = true;
  realSetImmediate(() => {
    shared.turnPending = false;
    shared.turn++;
  });
}

/** How the bounds were chosen: `QMD_RUN_BOUNDS_PEAKS=file` appends each run's peaks as a JSON line. */
function writePeaks(what: string, atOneInstant: number, inOneRun: number, ms: number): void {
  const file = process.env.QMD_RUN_BOUNDS_PEAKS;
  if (!file || inOneRun === 0) return;
  const line = JSON.stringify({ what, atOneInstant, inOneRun, ms: Math.round(ms) });
  process.getBuiltinModule('node:fs').appendFileSync(file, `${line}\n`);
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
