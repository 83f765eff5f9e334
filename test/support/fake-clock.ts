import type { Clock, TimerOptions } from '../../src/lifecycle/clock.js';
import { SAFETY } from './run-bounds.js';

interface Timer {
  at: number;
  seq: number;
  fn: () => void;
  unref: boolean;
}

/** Lets every pending promise callback run: microtasks drain before a setImmediate fires. */
export function flush(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * A clock tests advance by hand. It serves the host and the XState actor alike, so the
 * machine's delays, step bounds, the parent poll and the watchdog all move together.
 */
export class FakeClock implements Clock {
  #now = 0;
  #seq = 0;
  readonly #timers = new Map<number, Timer>();
  #halted: Error | undefined;

  now(): number {
    return this.#now;
  }

  setTimeout(fn: () => void, ms: number, options?: TimerOptions): number {
    const id = ++this.#seq;
    this.#timers.set(id, { at: this.#now + Math.max(0, ms), seq: id, fn, unref: options?.unref ?? false });
    return id;
  }

  clearTimeout(handle: unknown): void {
    this.#timers.delete(handle as number);
  }

  /** Timers still pending; `ref` counts only those that would keep a real loop alive. */
  pending(filter: 'all' | 'ref' | 'unref' = 'all'): number {
    let n = 0;
    for (const t of this.#timers.values()) {
      if (filter === 'all' || (filter === 'ref') === !t.unref) n++;
    }
    return n;
  }

  /**
   * Moves time forward by `ms`, firing due timers in order and flushing promises after each.
   * Rejects once the clock is halted: a test that advances in a loop ends when its run fails.
   */
  async advance(ms: number): Promise<void> {
    const target = this.#now + ms;
    await this.#flush();
    let atThisInstant = 0;
    for (;;) {
      const next = this.#next(target);
      if (!next) break;
      this.#timers.delete(next.seq);
      atThisInstant = next.at === this.#now ? atThisInstant + 1 : 1;
      // A timer re-armed for ever at one instant: the run bounds stop a machine long before.
      if (atThisInstant > SAFETY) throw new Error(`the fake clock gave up: ${SAFETY} timers at t=${next.at} ms`);
      this.#now = next.at;
      next.fn();
      await this.#flush();
    }
    this.#now = target;
    await this.#flush();
  }

  /** Stops time for good (test/support/run-bounds.ts, when a run passes a bound): `advance` rejects with `error`. */
  halt(error: Error): void {
    this.#halted ??= error;
  }

  async #flush(): Promise<void> {
    if (this.#halted) throw this.#halted;
    await flush();
    if (this.#halted) throw this.#halted;
  }

  #next(limit: number): Timer | undefined {
    let best: Timer | undefined;
    for (const t of this.#timers.values()) {
      if (t.at > limit) continue;
      if (!best || t.at < best.at || (t.at === best.at && t.seq < best.seq)) best = t;
    }
    return best;
  }
}
