import type { Writable } from 'node:stream';
import type {
  CollectionInfo,
  ContextInfo,
  DocumentEntry,
  DocumentSlice,
  ModelsReport,
  MultiGetOptions,
  MultiGetResult,
  QueryOptions,
  QueryResult,
  Reader,
  ReadOptions,
  SearchHit,
  SearchOptions,
  StatusReport,
  SubSearch,
} from '../core/reader-types.js';
import type { QmdError } from '../errors.js';
import type { Clock } from '../lifecycle/clock.js';
import type { ModelChoice } from '../llm/index.js';
import { isFileDamage } from '../store/integrity.js';

/**
 * How long after its first reply (`initialize`'s) a server leaves the client to finish its
 * handshake before the deferred check runs (`checkAfterHandshake`). Clients send
 * `notifications/initialized` and their `tools/list` (and `prompts/list`, `resources/list`) as
 * soon as `initialize` is answered: measured before this, the check ran between the two replies
 * and `tools/list` waited for it (docs/design.md §5, "Start-up").
 */
export const HANDSHAKE_QUIET_MS = 250;

/** What serving adds to the reader it opened (`servedReader`). */
export interface ServedReader {
  /** The reader every server of the process serves. */
  store: Reader;
  /**
   * From now on the deferred check (if any) runs before the next read: called once a server's
   * instructions are built, the reads that stay before it.
   */
  arm(): void;
  /** Runs the deferred check now, if armed and not run yet; what it finds goes to `onDamaged`. */
  checkSoon(): void;
  /** No deferred check is left to run (none was asked, it ran, or damage is known). */
  checked(): boolean;
  /** `listener` hears, once, that the index file is damaged (`isFileDamage`). */
  onDamaged(listener: (error: QmdError) => void): void;
  /**
   * `listener` runs once no deferred check is left and none found damage: at once if none was
   * asked or it already ran clean, else right after it does (the watcher starts there, so that
   * nothing is written to a file not yet read through). Never after damage.
   */
  onSound(listener: () => void): void;
}

/**
 * The reader a server serves: `reader`, with two things a server needs of every read.
 *
 * - A deferred whole-file check (`deferCheck`: `qmd mcp` over stdio, a relay serving alone):
 *   the open skips `quick_check`, so the client's handshake does not wait for it (about 18 ms
 *   on 5 MB, docs/design.md §5); it runs once the handshake is over (`checkSoon`, called
 *   `HANDSHAKE_QUIET_MS` after the first reply by `checkAfterHandshake`) or before the first
 *   read once `arm`ed, whichever comes first. The reads before it are what a server's
 *   instructions read (collections and contexts), already read at open. What must not touch
 *   the file before it (the watcher's writes) waits for `onSound`.
 * - Damage: a read that finds the file damaged (a statement SQLite refused, the deferred check)
 *   is told to `onDamaged` once, and every read after it is refused with the same error: a
 *   server serves nothing more from a file it knows is damaged, and leaves (serve-mcp.ts).
 *   One note whose stored text fails its hash is not the file's damage: only that call fails.
 */
export function servedReader(reader: Reader, options: { deferCheck: boolean }): ServedReader {
  let pending = options.deferCheck;
  let armed = false;
  let damage: QmdError | undefined;
  let listener: ((error: QmdError) => void) | undefined;

  const noticed = (error: unknown): void => {
    if (damage !== undefined || !isFileDamage(error)) return;
    damage = error;
    listener?.(error);
  };
  const sound: Array<() => void> = [];
  const check = (): void => {
    pending = false;
    try {
      reader.verify();
    } catch (error) {
      noticed(error);
      throw error;
    }
    // After the read that ran it, if one did: a listener's work never runs inside a read.
    if (damage === undefined) for (const listener of sound.splice(0)) queueMicrotask(listener);
  };
  /** Every read: the deferred check first, the damage it or the read meets noticed. */
  const read = <T>(work: () => T): T => {
    if (damage !== undefined) throw damage;
    if (pending && armed) check();
    let result: T;
    try {
      result = work();
    } catch (error) {
      noticed(error);
      throw error;
    }
    if (result instanceof Promise) {
      return result.catch((error: unknown) => {
        noticed(error);
        throw error;
      }) as T;
    }
    return result;
  };
  const later = <T>(work: () => Promise<T>): Promise<T> => {
    try {
      return read(work);
    } catch (error) {
      return Promise.reject(error);
    }
  };

  const store: Reader = {
    path: reader.path,
    listCollections: (): CollectionInfo[] => read(() => reader.listCollections()),
    listContexts: (): ContextInfo[] => read(() => reader.listContexts()),
    listDocuments: (collection: string, prefix?: string): DocumentEntry[] =>
      read(() => reader.listDocuments(collection, prefix)),
    search: (query: string, searchOptions?: SearchOptions): SearchHit[] =>
      read(() => reader.search(query, searchOptions)),
    query: (query: string | readonly SubSearch[], queryOptions?: QueryOptions): Promise<QueryResult> =>
      later(() => reader.query(query, queryOptions)),
    vsearch: (query: string, searchOptions?: SearchOptions): Promise<QueryResult> =>
      later(() => reader.vsearch(query, searchOptions)),
    get: (ref: string, readOptions?: ReadOptions): DocumentSlice => read(() => reader.get(ref, readOptions)),
    multiGet: (pattern: string, multiOptions?: MultiGetOptions): Promise<MultiGetResult> =>
      later(() => reader.multiGet(pattern, multiOptions)),
    status: (): StatusReport => read(() => reader.status()),
    readStatus: (statusOptions?: { signal?: AbortSignal }): Promise<StatusReport> =>
      later(() => reader.readStatus(statusOptions)),
    models: (modelOptions?: { probe?: boolean }): Promise<ModelsReport> => later(() => reader.models(modelOptions)),
    embeddingModel: (): ModelChoice | undefined => read(() => reader.embeddingModel()),
    verify: (): void => read(() => reader.verify()),
    close: () => reader.close(),
  };
  return {
    store,
    arm() {
      armed = true;
    },
    checkSoon() {
      if (!pending || !armed || damage !== undefined) return;
      try {
        check();
      } catch {
        // Damage went to `onDamaged`; anything else (the store closing under it) is for the
        // next read to meet.
      }
    },
    checked() {
      return !pending || damage !== undefined;
    },
    onDamaged(heard) {
      listener = heard;
      if (damage !== undefined) heard(damage);
    },
    onSound(heard) {
      if (damage !== undefined) return;
      if (pending) sound.push(heard);
      else queueMicrotask(heard);
    },
  };
}

/**
 * Runs `served`'s deferred check `quietMs` after the first write to `out` (the `initialize`
 * reply), when the client has had its handshake answered, unless a read ran it before: the
 * client's first replies never wait for it, and a client that reads nothing still has the file
 * read through within `quietMs` of its start. A server with no deferred check leaves `out` as
 * it is. The timer does not keep the process alive.
 */
export function checkAfterHandshake(
  served: ServedReader,
  out: Writable,
  clock: Clock,
  quietMs = HANDSHAKE_QUIET_MS,
): void {
  if (served.checked()) return;
  const write = out.write.bind(out) as Writable['write'];
  out.write = ((...args: Parameters<Writable['write']>) => {
    out.write = write;
    clock.setTimeout(() => served.checkSoon(), quietMs, { unref: true });
    return write(...args);
  }) as Writable['write'];
}
