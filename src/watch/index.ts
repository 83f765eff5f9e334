import * as fs from 'node:fs';
import type { Reader } from '../core/reader-types.js';
import { openWatchedIndex } from '../core/watch-writer.js';
import { envText, parseDuration, parseWholeNumber } from '../env.js';
import { noFailpoints } from '../failpoints.js';
import { realClock } from './clock.js';
import { hostFacts, placeFile, placeIsFree, readPlace } from './place.js';
import { parseMountinfo } from './platform.js';
import type { WatchIndex, WatchOptions, WatchWriter } from './types.js';
import { Watcher, type WatcherSettings } from './watcher.js';

export { placeFile, readPlace } from './place.js';
export type * from './types.js';

/** Default polling interval of a folder that cannot be watched: a stat walk, docs/design.md §9.3. */
export const DEFAULT_POLL_MS = 10_000;

/**
 * The watcher of the index `reader` serves (the contract: `types.ts`). Its writes go through a
 * read-write connection of its own beside the served one, sharing the served reader's model
 * (`openWatchedIndex`); it starts nothing until `start()`. Read here, from the environment:
 * `QMD_WATCH_INTERVAL` (the polling interval: `30s`, `5m`, or milliseconds) and, for tests only,
 * `QMD_TEST_WATCH_LIMIT` (the OS refuses watches past that many, as a lowered inotify limit
 * would).
 */
export const watchIndex: WatchIndex = (reader, options) => new Watcher(watcherSettings(reader, options));

/** A holder whose heartbeat is older than this has left the place (a stopped or hung process). */
const STALE_MS = 30_000;

/**
 * Who holds the writer's place of the index at `indexPath` (for `qmd status`), read without
 * taking it: null when nobody does, or its holder is gone or stale.
 */
export const watchWriter: WatchWriter = async (indexPath) => {
  const record = readPlace(placeFile(indexPath));
  return record === undefined || placeIsFree(record, hostFacts, STALE_MS) ? null : { pid: record.pid };
};

/** The settings `watchIndex` gives its watcher: tests start from them and change what they must (a clock, the tick). */
export function watcherSettings(reader: Reader, options: WatchOptions): WatcherSettings {
  const env = process.env;
  const failpoints = options.failpoints ?? noFailpoints;
  const limit = envText(env, 'QMD_TEST_WATCH_LIMIT');
  const own = (absolute: string) => {
    const index = reader.path;
    return (
      absolute === index ||
      (absolute.startsWith(index) && /^(-wal|-shm|-journal|-writer(\..*)?)$/.test(absolute.slice(index.length)))
    );
  };
  return {
    log: options.log,
    clock: realClock,
    platform: process.platform,
    open: () => openWatchedIndex(reader, { log: options.log, failpoints }),
    embed: options.embed ?? true,
    facts: hostFacts,
    by: options.by ?? 'qmd mcp',
    ownFiles: own,
    mounts: readMounts,
    pollIntervalMs:
      options.pollIntervalMs ?? parseDuration(envText(env, 'QMD_WATCH_INTERVAL') ?? '') ?? DEFAULT_POLL_MS,
    sweepMs: 15 * 60_000,
    debounceMs: 200,
    maxWaitMs: 2000,
    batchPaths: 64,
    maxBatchesPerInstant: 1000,
    tickMs: 2000,
    staleMs: STALE_MS,
    ...(limit !== undefined && { watchLimit: parseWholeNumber(limit) ?? 0 }),
    ...(options.onRole !== undefined && { onRole: options.onRole }),
  };
}

/** The mounts of this machine (Linux); none elsewhere, where every folder is taken to send events. */
function readMounts() {
  try {
    return parseMountinfo(fs.readFileSync('/proc/self/mountinfo', 'utf8'));
  } catch {
    return [];
  }
}
