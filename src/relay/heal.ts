/**
 * The two clocks of a relay that heals (docs/design.md §2.2, "Sharing heals"), apart from the
 * pump so each is small and tested with fake time:
 * - `rejoiner`: a relay serving its client alone tries, again and again, to get back to a
 *   shared server: after `firstMs`, then twice as long after each try that found none, up to
 *   `maxMs`;
 * - `silenceWatch`: a relay waiting on a shared server that has said nothing for `silenceMs`
 *   asks whether it still answers (`probe`, over its control socket, which no queue of
 *   requests stands in front of); one that does not is hung (`onHung`).
 * Both use the timers they are given (real ones by default) and never keep the process alive.
 */
export interface Timers {
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
  now(): number;
}

export const realTimers: Timers = {
  setTimeout: (callback, ms) => {
    const timer = setTimeout(callback, ms);
    timer.unref();
    return timer;
  },
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
  now: () => performance.now(),
};

/** A relay serving alone first tries to rejoin after this long, then twice as long each time. */
export const REJOIN_FIRST_MS = 1000;
export const REJOIN_MAX_MS = 60_000;
/** How long a shared server may say nothing while replies are owed before the relay asks it. */
export const SILENCE_MS = 2000;

export interface Rejoiner {
  /** Starts trying (idempotent while trying), from the first wait. */
  start(): void;
  stop(): void;
}

/**
 * `attempt` resolves `joined` (stop), `none` (no server answered: wait longer), or `later`
 * (not now, for a reason of the relay's own: the same wait again).
 */
export function rejoiner(options: {
  attempt: () => Promise<'joined' | 'none' | 'later'>;
  firstMs?: number;
  maxMs?: number;
  timers?: Timers;
}): Rejoiner {
  const timers = options.timers ?? realTimers;
  const first = options.firstMs ?? REJOIN_FIRST_MS;
  const max = Math.max(first, options.maxMs ?? REJOIN_MAX_MS);
  let wait = first;
  let timer: unknown;
  let active = false;
  const schedule = (): void => {
    timer = timers.setTimeout(() => {
      timer = undefined;
      void options.attempt().then(
        (outcome) => {
          if (!active || outcome === 'joined') {
            active = false;
            return;
          }
          if (outcome === 'none') wait = Math.min(wait * 2, max);
          schedule();
        },
        () => {
          if (!active) return;
          wait = Math.min(wait * 2, max);
          schedule();
        },
      );
    }, wait);
  };
  return {
    start() {
      if (active) return;
      active = true;
      wait = first;
      schedule();
    },
    stop() {
      active = false;
      if (timer !== undefined) timers.clearTimeout(timer);
      timer = undefined;
    },
  };
}

export interface SilenceWatch {
  /** Something came from the server (or a request was sent while none was owed): the silence starts over. */
  heard(): void;
  stop(): void;
}

/**
 * Checks every half `silenceMs` whether replies are owed (`waiting()`) and the server has been
 * silent that long; then asks `probe()` once at a time. A probe that answers starts the silence
 * over; one that does not calls `onHung()`, once.
 */
export function silenceWatch(options: {
  silenceMs?: number;
  waiting: () => boolean;
  probe: () => Promise<boolean>;
  onHung: () => void;
  timers?: Timers;
}): SilenceWatch {
  const timers = options.timers ?? realTimers;
  const silence = options.silenceMs ?? SILENCE_MS;
  let last = timers.now();
  let probing = false;
  let stopped = false;
  let timer: unknown;
  const tick = (): void => {
    timer = undefined;
    if (stopped) return;
    if (!probing && options.waiting() && timers.now() - last >= silence) {
      probing = true;
      void options.probe().then(
        (alive) => settle(alive),
        () => settle(false),
      );
    }
    timer = timers.setTimeout(tick, Math.max(1, Math.floor(silence / 2)));
  };
  const settle = (alive: boolean): void => {
    probing = false;
    if (stopped) return;
    if (alive) {
      last = timers.now();
      return;
    }
    stopped = true;
    if (timer !== undefined) timers.clearTimeout(timer);
    options.onHung();
  };
  timer = timers.setTimeout(tick, Math.max(1, Math.floor(silence / 2)));
  return {
    heard() {
      last = timers.now();
    },
    stop() {
      stopped = true;
      if (timer !== undefined) timers.clearTimeout(timer);
    },
  };
}
