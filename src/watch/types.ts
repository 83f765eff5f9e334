/**
 * The contract between the watcher (`src/watch/`: file events → committed index changes) and
 * what hosts it (`src/serve/`: every serving mode, the lifecycle's teardown, the MCP server's
 * notifications and `status`). The hosts see the watcher only through these types; a test of a
 * host passes a hand-written `IndexWatcher`.
 *
 * Fields may be added; none is renamed or removed without changing every host.
 *
 * Turned off by `qmd mcp --no-watch` or `QMD_WATCH=0` (the host then never loads the watcher).
 */
import type { Reader } from '../core/reader-types.js';
import type { Failpoints } from '../failpoints.js';
import type { Log } from '../log.js';

/** One collection as the watcher follows it. */
export interface WatchedCollection {
  collection: string;
  /** The collection's folder (absolute, real path). */
  root: string;
  /** How changes are heard: OS events, or polling this folder (with why). */
  via: 'events' | 'polling';
  /** Why it is polled: the OS limit on watches, a file system that sends no events, … */
  reason?: string;
  /** Folders under OS watch (0 when polled). */
  folders: number;
  /** The polling interval, when polled. */
  intervalMs?: number;
}

/** What a watcher says of itself: `qmd status`, the MCP `status` tool, `qmd doctor`. */
export interface WatchReport {
  /**
   * `writer`: this process follows the folders and writes the index. `reader`: another process
   * of this index holds the writer's place (`writerPid`); this one writes nothing and takes the
   * place if that one goes. `off`: watching is turned off (`--no-watch`, the variable).
   */
  role: 'writer' | 'reader' | 'off';
  writerPid?: number;
  collections: WatchedCollection[];
  /** Paths seen changed (or gone) and not yet in the index. */
  pending: number;
  /** Notes whose new text is indexed and whose vectors are not yet (embedding in the background). */
  vectorsPending: number;
  /** When the last change was seen (ms since the epoch), null before the first. */
  lastChangeAt: number | null;
  /** When the last batch was committed, null before the first. */
  lastIndexedAt: number | null;
  /** Set when the watcher stopped following (it would have looped): said once in the log too. */
  error?: string;
  /** Set when vectors no longer follow changes, with why (no model on disk, another model's vectors). */
  vectors?: string;
}

/** One committed batch: what a client may need to hear about (`notifications/resources/list_changed`). */
export interface IndexedChange {
  collection: string;
  /** Paths relative to the collection's folder. */
  added: string[];
  updated: string[];
  removed: string[];
}

export interface IndexWatcher {
  /**
   * Sets up the watches (or polling) for every collection of the index and catches up what
   * changed while nobody watched; resolves once changes will be heard. A folder that cannot be
   * watched is polled, with one log line saying so; it never rejects for that.
   */
  start(): Promise<void>;
  report(): WatchReport;
  /** Called after each batch is committed. Returns the unsubscribe. */
  onIndexed(listener: (change: IndexedChange) => void): () => void;
  /**
   * Called when a write starts and when it has settled (committed or rolled back), so the host
   * can count it as work in flight during teardown, as it counts tool handlers. Returns the
   * unsubscribe.
   */
  onWrite(listener: (event: 'started' | 'settled') => void): () => void;
  /**
   * Stops every OS watch, timer and background embedding; a write in progress completes or
   * rolls back (`signal` aborts it: rolled back); gives up the writer's place. Idempotent. No
   * handle of the watcher ever holds the event loop open, before or after.
   */
  close(signal?: AbortSignal): Promise<void>;
}

export interface WatchOptions {
  log: Log;
  failpoints?: Failpoints;
  /**
   * Re-embed changed notes in the background when the index has vectors and its model is on
   * disk (default true).
   */
  embed?: boolean;
  /** How often a folder that cannot be watched is polled (default 10 s, or `QMD_WATCH_INTERVAL`). */
  pollIntervalMs?: number;
  /** What holds the writer's place, as `qmd status` of another process shows it (default `qmd mcp`). */
  by?: string;
  /** Told when this process becomes the writer, or reads while another one (`writerPid`) writes. */
  onRole?: (role: 'writer' | 'reader', writerPid?: number) => void;
}

/**
 * `src/watch/index.ts` exports `watchIndex: WatchIndex`; hosts load it with `import()` (the
 * server's start-up stays on the read side). `reader` is the one the server serves: the watcher
 * shares its embedding model (one llama.cpp runtime per process) and the reader sees every
 * batch the watcher commits. The watcher starts nothing until `start()`.
 */
export type WatchIndex = (reader: Reader, options: WatchOptions) => IndexWatcher;

/**
 * Optional: `src/watch/index.ts` may export `watchWriter: WatchWriter`. Who holds the writer's
 * place of the index at `indexPath` now (a `qmd mcp`, a `qmd update --watch`), read without
 * taking it; null when nobody does. `qmd status` says it when no server answers on a control
 * socket (a plain `qmd mcp` over stdio has none); without it, `qmd status` says only what those
 * servers report.
 */
export type WatchWriter = (indexPath: string) => Promise<{ pid: number } | null>;
