import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { type Clock, realClock } from '../lifecycle/clock.js';
import type { Log } from '../log.js';

export interface IdleCollectorOptions {
  /** Quiet this long after the last `poke()` (and nothing in flight) before collecting. */
  quietMs: number;
  /** At most one collection per this many ms. */
  minGapMs: number;
  /** True while requests are being answered: the collection waits for a quiet moment. */
  busy: () => boolean;
  log: Log;
  clock?: Clock;
  /** The collection itself (tests count calls); by default V8's last-resort GC, when it can be had. */
  collect?: () => void;
}

export interface IdleCollector {
  /** Sessions ended: their memory is garbage now; collect once things are quiet. */
  poke(): void;
  stop(): void;
}

/**
 * Gives memory back when `qmd mcp --http` goes quiet after sessions ended (docs/design.md §5,
 * "HTTP sessions"; `npx tsx bench/http-sessions.ts`). Each 2025 session is an `McpServer` and a
 * transport that live for minutes, so they survive young-generation collections, and V8
 * answers that by doubling its young generation (16 → 32 → 64 MB measured) and leaving dead
 * sessions in the old one until its limit; pages it frees stay mapped. Round after round of 64
 * clients the live heap stayed at 19–20 MB while RSS rose 144 → 149 → 176 MB: no leak, but not
 * flat. What flattens it is V8's own answer to memory pressure, a last-resort collection
 * (`gc({ type: 'major', flavor: 'last-resort' })`, what `LowMemoryNotification` does: full
 * collections until nothing more is freed, the young generation shrunk, freed pages returned
 * to the system), run once the server has been quiet for `quietMs` after a session ended, only
 * when nothing is being answered, at most once per `minGapMs`. A plain full collection was not
 * enough (it frees, but returns nothing). Timers are unref'd: this never keeps the process alive.
 */
export function keepHeapFlat(options: { busy: () => boolean; log: Log }): IdleCollector {
  return createIdleCollector({ quietMs: 1000, minGapMs: 10_000, ...options });
}

/** Runs `collect` once things are quiet after a `poke()`, never while `busy()`, at most once per `minGapMs`. */
export function createIdleCollector(options: IdleCollectorOptions): IdleCollector {
  const clock = options.clock ?? realClock;
  const collect = options.collect ?? lastResortGc();
  let timer: unknown;
  let lastAt = Number.NEGATIVE_INFINITY;
  let stopped = false;

  const schedule = (ms: number): void => {
    if (timer !== undefined) clock.clearTimeout(timer);
    timer = clock.setTimeout(run, ms, { unref: true });
  };
  function run(): void {
    timer = undefined;
    if (stopped || collect === undefined) return;
    if (options.busy()) {
      schedule(options.quietMs);
      return;
    }
    const wait = lastAt + options.minGapMs - clock.now();
    if (wait > 0) {
      schedule(wait);
      return;
    }
    lastAt = clock.now();
    try {
      collect();
    } catch (error) {
      options.log.warn(`idle collection failed: ${(error as Error).message}`);
    }
  }

  return {
    poke() {
      if (!stopped && collect !== undefined) schedule(options.quietMs);
    },
    stop() {
      stopped = true;
      if (timer !== undefined) clock.clearTimeout(timer);
      timer = undefined;
    },
  };
}

/**
 * V8's last-resort collection, without `--expose-gc` on the command line (`qmd` is run by node
 * directly, so it cannot pass node flags): the flag set now only makes `gc` visible to contexts
 * created after it, so it is fetched from a fresh one, never put on our global. Its options
 * object (`type`, `execution`, `flavor`) is V8's since 2022 (Node 22 and 24: tested in
 * test/serve/heap.test.ts). `undefined` if V8 refuses.
 */
export function lastResortGc(): (() => void) | undefined {
  try {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as unknown;
    if (typeof gc !== 'function') return undefined;
    return () => (gc as (options: object) => void)({ type: 'major', execution: 'sync', flavor: 'last-resort' });
  } catch {
    return undefined;
  }
}
