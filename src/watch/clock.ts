/**
 * The watcher's time: debouncing, polling, the writer's place. Tests pass a fake they advance
 * by hand (test/support/fake-clock.ts fits); the real one unrefs every timer, so no timer of the
 * watcher ever keeps the process alive.
 */
export interface WatchClock {
  /** Milliseconds on a monotonic scale. */
  now(): number;
  setTimeout(fn: () => void, ms: number, options?: { unref?: boolean }): unknown;
  clearTimeout(handle: unknown): void;
}

export const realClock: WatchClock = {
  now: () => performance.now(),
  setTimeout(fn, ms) {
    const timer = setTimeout(fn, ms);
    timer.unref();
    return timer;
  },
  clearTimeout(handle) {
    clearTimeout(handle as NodeJS.Timeout);
  },
};
