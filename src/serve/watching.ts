import type { WatchConfig } from '../cli/config.js';
import type { Reader } from '../core/reader-types.js';
import { errorMessage } from '../errors.js';
import type { Failpoints } from '../failpoints.js';
import { type Clock, realClock } from '../lifecycle/clock.js';
import type { OwnedWatcher } from '../lifecycle/watcher.js';
import type { Log } from '../log.js';
import type { WatchStatus } from '../mcp/deps.js';
import type { IndexedChange, IndexWatcher, WatchIndex, WatchWriter } from '../watch/types.js';

/** How often a server started before its index looks for the file, to start watching it. */
export const AWAIT_INDEX_POLL_MS = 2000;

/**
 * The served index kept fresh (docs/design.md §3, "The watcher"): one per server, whatever
 * serves it (stdio, HTTP, the shared server, the relay's fallback). It is the watcher as the
 * lifecycle sees it (`OwnedWatcher`: owned from the start, so every way out closes it) and as
 * the MCP server sees it (`report()`, `onIndexed`), and it hides how the watcher comes to be:
 *
 * - off (`--no-watch`, `QMD_WATCH=0`): nothing is loaded; `report()` says why;
 * - no index yet: it looks for the file every `AWAIT_INDEX_POLL_MS` (one `stat`) and starts
 *   once it is there;
 * - then it loads the engine (`src/watch/index.ts`, by `import()`: the server starts on the read
 *   side) and starts it, never delaying the server's start; an engine that cannot be loaded is
 *   said in one line, and the index is served unwatched.
 *
 * `close()` (teardown) stops all of it: the poll, a load still in flight (nothing is created
 * after), a start still running, and the watcher itself.
 */
export interface Watching extends OwnedWatcher {
  /** Begins (once): after the lifecycle owns it, so that no way out can miss it. */
  start(): void;
  /** What status tools and query notes read: the watcher's report, or why nothing watches. */
  report(): WatchStatus;
  /** Every committed batch, for `notifications/resources/list_changed`. */
  onIndexed(listener: (change: IndexedChange) => void): () => void;
  /** Settles once watching has begun, or will not (off, failed, closed): for tests and benchmarks. */
  readonly ready: Promise<void>;
}

export interface WatchingOptions {
  config: WatchConfig;
  /** The real reader now, or once the index has appeared (`AwaitingIndex.openedNow`). */
  reader: () => Reader | undefined;
  /** The engine's entry; `loadWatchIndex` unless a test gives its own. */
  load?: () => Promise<WatchIndex>;
  log: Log;
  failpoints?: Failpoints;
  clock?: Clock;
  pollMs?: number;
}

/** The engine, loaded on first use (lint keeps the server's start-up on the read side). */
export async function loadWatchIndex(): Promise<WatchIndex> {
  return (await import('../watch/index.js')).watchIndex;
}

/**
 * The engine's reader of who holds the writer's place (`WatchWriter`), for `qmd status`;
 * undefined when the engine cannot be loaded.
 */
export async function loadWatchWriter(): Promise<WatchWriter | undefined> {
  try {
    return (await import('../watch/index.js')).watchWriter;
  } catch {
    return undefined;
  }
}

const OFF: WatchStatus = {
  role: 'off',
  collections: [],
  pending: 0,
  vectorsPending: 0,
  lastChangeAt: null,
  lastIndexedAt: null,
};

export function createWatching(options: WatchingOptions): Watching {
  const { log } = options;
  const clock = options.clock ?? realClock;
  const writeListeners = new Set<(event: 'started' | 'settled') => void>();
  const indexedListeners = new Set<(change: IndexedChange) => void>();
  let off: string | undefined = options.config.enabled ? undefined : (options.config.off ?? 'turned off');
  let watcher: IndexWatcher | undefined;
  let closing: Promise<void> | undefined;
  let poll: unknown;
  let wake: (() => void) | undefined;
  let begun = false;
  let resolveReady!: () => void;
  const ready = new Promise<void>((resolve) => {
    resolveReady = resolve;
  });

  /** The real reader, waiting for the index to appear; undefined once closing. */
  const indexAppears = async (): Promise<Reader | undefined> => {
    let reader = options.reader();
    if (reader === undefined) off = 'no index yet: watching begins when it appears';
    while (reader === undefined && closing === undefined) {
      await new Promise<void>((resolve) => {
        wake = resolve;
        poll = clock.setTimeout(resolve, options.pollMs ?? AWAIT_INDEX_POLL_MS, { unref: true });
      });
      reader = options.reader();
    }
    if (closing !== undefined) return undefined;
    off = undefined;
    return reader;
  };

  const begin = async (): Promise<void> => {
    if (off !== undefined) return;
    const reader = await indexAppears();
    if (reader === undefined) return;
    let watchIndex: WatchIndex;
    try {
      watchIndex = await (options.load ?? loadWatchIndex)();
    } catch (error) {
      off = `could not load the watcher: ${errorMessage(error)}`;
      log.warn(`serving without watching the notes (${off}): run qmd update to index changes`);
      return;
    }
    if (closing !== undefined) return;
    let created: IndexWatcher | undefined;
    try {
      created = watchIndex(reader, { log, ...(options.failpoints && { failpoints: options.failpoints }) });
      watcher = created;
      created.onWrite((event) => {
        for (const listener of [...writeListeners]) listener(event);
      });
      created.onIndexed((change) => {
        for (const listener of [...indexedListeners]) listener(change);
      });
      await created.start();
    } catch (error) {
      if (closing !== undefined) return;
      off = `it failed: ${errorMessage(error)}`;
      log.warn(
        `watching stopped (${errorMessage(error)}): serving the index as it is; run qmd update to index changes`,
      );
      watcher = undefined;
      await created?.close().catch(() => {});
    }
  };

  return {
    ready,
    start() {
      if (begun) return;
      begun = true;
      void begin()
        .catch((error: unknown) => log.warn(`watching: ${errorMessage(error)}`))
        .finally(resolveReady);
    },
    report(): WatchStatus {
      if (watcher === undefined) return { ...OFF, off: closing ? 'the server is closing' : (off ?? 'starting') };
      try {
        return watcher.report();
      } catch (error) {
        return { ...OFF, off: `no report: ${errorMessage(error)}` };
      }
    },
    onIndexed(listener) {
      indexedListeners.add(listener);
      return () => indexedListeners.delete(listener);
    },
    onWrite(listener) {
      writeListeners.add(listener);
      return () => writeListeners.delete(listener);
    },
    close(signal) {
      closing ??= (async () => {
        if (poll !== undefined) clock.clearTimeout(poll);
        wake?.();
        if (!begun) resolveReady();
        await watcher?.close(signal);
      })();
      return closing;
    },
  };
}
