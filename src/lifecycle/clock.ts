/**
 * The one clock of the lifecycle. The host hands it to the XState actor too (`clock` option),
 * so the machine's delays, the step bounds, the parent poll, the keep-alive and the watchdog
 * all run on the same time, and tests replace it with a fake they advance by hand.
 */
export type TimerHandle = unknown;

export interface TimerOptions {
  /** An unref'd timer never keeps the event loop alive by itself (the watchdog, the parent poll). */
  unref?: boolean;
}

export interface Clock {
  /** Milliseconds on a monotonic scale. */
  now(): number;
  setTimeout(fn: () => void, ms: number, options?: TimerOptions): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
}

export const realClock: Clock = {
  now: () => performance.now(),
  setTimeout(fn, ms, options) {
    const timer = setTimeout(fn, ms);
    if (options?.unref) timer.unref();
    return timer;
  },
  clearTimeout(handle) {
    clearTimeout(handle as NodeJS.Timeout);
  },
};
