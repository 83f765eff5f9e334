import type { Clock, TimerOptions } from '../../src/lifecycle/clock.js';

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

  /** Moves time forward by `ms`, firing due timers in order and flushing promises after each. */
  async advance(ms: number): Promise<void> {
    const target = this.#now + ms;
    await flush();
    for (;;) {
      const next = this.#next(target);
      if (!next) break;
      this.#timers.delete(next.seq);
      this.#now = next.at;
      next.fn();
      await flush();
    }
    this.#now = target;
    await flush();
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
