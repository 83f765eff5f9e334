import * as path from 'node:path';
import { openDatabase } from './database.js';
import { SqliteStore } from './store.js';
import type { Store, StoreOptions } from './types.js';

export { resolveIndexPath } from './paths.js';
export type * from './types.js';

export const defaultBusyTimeoutMs = 5000;

/**
 * Opens the index at `file` (created with its parent directory when missing), in WAL mode
 * so several processes can share it: readers never wait, a writer waits up to
 * `busyTimeoutMs` for another writer and then fails with INDEX_LOCKED.
 *
 * Errors (QmdError): INDEX_READ_ONLY (the location cannot be written), INDEX_CORRUPT (not a
 * SQLite file, another program's database, or a failed quick_check), INDEX_LOCKED.
 */
export function openStore(file: string, options: StoreOptions = {}): Store {
  const absolute = path.resolve(file);
  const busyTimeoutMs = options.busyTimeoutMs ?? defaultBusyTimeoutMs;
  const opened = openDatabase(absolute, {
    readonly: options.readonly ?? false,
    busyTimeoutMs,
    quickCheck: options.quickCheck ?? !(options.readonly ?? false),
  });
  return new SqliteStore(absolute, opened, { ...options, busyTimeoutMs });
}
