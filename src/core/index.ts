import * as fs from 'node:fs';
import { compose } from './compose.js';
import { openIndex } from './open.js';
import { SqliteStore } from './store.js';
import type { Store, StoreOptions } from './types.js';
import { SqliteWriter } from './writer.js';

export { defaultIndexPath, mistypedIndex, resolveIndexPath } from '../store/paths.js';
export { awaitIndex } from './awaiting.js';
export { defaultBusyTimeoutMs, openReader } from './open.js';
export type * from './types.js';

/**
 * Opens the index for reading and writing (`Store`): what the CLI's commands use. The reader
 * and the writer share one connection, one embedding model and one teardown (`compose.ts`).
 * Errors: as `openIndex` (`open.ts`).
 */
export function openStore(file: string, options: StoreOptions = {}): Store {
  return openIndex(file, options, (absolute, opened, finished) => {
    const { parts, reader } = compose(absolute, opened, finished);
    return new SqliteStore(reader, new SqliteWriter(parts));
  });
}

/**
 * Removes an index file and its WAL companions, after its store is closed: what `collection
 * add` does with an index it created and could not add to, so a failed first add (a mistyped
 * folder) leaves nothing behind for the next command to mistake for an index. Best effort: a file already gone is fine.
 */
export function discardIndex(file: string): void {
  for (const suffix of ['', '-wal', '-shm', '-journal', '-writer']) fs.rmSync(`${file}${suffix}`, { force: true });
}
