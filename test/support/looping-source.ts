/**
 * A hand-made event source that re-triggers itself: each time the actor it feeds moves, it sends
 * its event again, as a file watcher would that sees the files its own event made the index
 * write. It is what the tests of the run bounds (./run-bounds.ts) loop with against a real host:
 * a source like this must fail its test, naming the loop, rather than hang it.
 */
import type { AnyActorRef } from 'xstate';
import { SAFETY } from './run-bounds.js';

/**
 * How the source hands its next event over: inside the transition's own notification (`sync`),
 * as a microtask, as an immediate (the loop yields to the event loop each time), or as a timer
 * at 0 ms on a simulated clock (`fakeClock`: the loop runs while a test advances it).
 */
export type Via = 'sync' | 'microtask' | 'immediate' | 'fakeClock';

export interface LoopingSource {
  /** Events sent so far. */
  readonly sent: number;
  /** True once the source gave up at `SAFETY`: the bound never stopped it. */
  readonly gaveUp: boolean;
  /** Settles when the source gives up: a test awaits it beside what the loop keeps from settling. */
  readonly exhausted: Promise<void>;
}

/**
 * Sends `send()` once now, then again each time `actor` moves (`actor.subscribe`), through
 * `via`; gives up after `SAFETY` sends. `clock` is the simulated clock for `fakeClock`.
 */
export function loopingSource(
  actor: AnyActorRef,
  send: () => void,
  via: Via,
  clock?: { setTimeout(fn: () => void, ms: number): unknown },
): LoopingSource {
  let giveUp!: () => void;
  const exhausted = new Promise<void>((resolve) => {
    giveUp = resolve;
  });
  const state = { sent: 0, gaveUp: false, exhausted };
  const fire = (): void => {
    if (state.gaveUp) return;
    if (state.sent >= SAFETY) {
      state.gaveUp = true;
      giveUp();
      return;
    }
    state.sent++;
    send();
  };
  const schedule: Record<Via, () => void> = {
    sync: fire,
    microtask: () => queueMicrotask(fire),
    immediate: () => setImmediate(fire),
    fakeClock: () => {
      if (!clock) throw new Error('a fakeClock source needs the clock');
      clock.setTimeout(fire, 0);
    },
  };
  actor.subscribe({ next: schedule[via], error: () => {} });
  fire();
  return state;
}
