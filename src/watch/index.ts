import * as fs from 'node:fs';
import { openWatchedIndex } from '../core/watch-writer.js';
import { envText, parseWholeNumber } from '../env.js';
import { noFailpoints } from '../failpoints.js';
import { realClock } from './clock.js';
import { hostFacts, placeFile } from './place.js';
import { parseMountinfo } from './platform.js';
import type { WatchIndex } from './types.js';
import { Watcher } from './watcher.js';

export type * from './types.js';
export { placeFile, readPlace } from './place.js';

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
export const watchIndex: WatchIndex = (reader, options) => {
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
  return new Watcher({
    log: options.log,
    clock: realClock,
    platform: process.platform,
    open: () => openWatchedIndex(reader, { log: options.log, failpoints }),
    embed: options.embed ?? true,
    facts: hostFacts,
    by: options.by ?? 'qmd mcp',
    ownFiles: own,
    mounts: readMounts,
    pollIntervalMs: options.pollIntervalMs ?? parseInterval(envText(env, 'QMD_WATCH_INTERVAL')) ?? DEFAULT_POLL_MS,
    sweepMs: 15 * 60_000,
    debounceMs: 200,
    maxWaitMs: 2000,
    batchPaths: 64,
    maxBatchesPerInstant: 1000,
    tickMs: 2000,
    staleMs: 30_000,
    ...(limit !== undefined && { watchLimit: parseWholeNumber(limit) ?? 0 }),
    ...(options.onRole !== undefined && { onRole: options.onRole }),
  });
};

/** `30s`, `5m`, `1h` or whole milliseconds; undefined when blank or not one of those. */
export function parseInterval(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const match = /^(\d+)(ms|s|m|h)?$/.exec(text.trim());
  if (match === null) return undefined;
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[(match[2] ?? 'ms') as 'ms' | 's' | 'm' | 'h'];
  const ms = Number(match[1]) * unit;
  return ms >= 100 && ms <= 2 ** 31 - 1 ? ms : undefined;
}

/** The mounts of this machine (Linux); none elsewhere, where every folder is taken to send events. */
function readMounts() {
  try {
    return parseMountinfo(fs.readFileSync('/proc/self/mountinfo', 'utf8'));
  } catch {
    return [];
  }
}
