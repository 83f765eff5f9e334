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
import type { ModelChoice } from '../llm/index.js';
import { isFileDamage } from '../store/integrity.js';

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
}

/**
 * The reader a server serves: `reader`, with two things a server needs of every read.
 *
 * - A deferred whole-file check (`deferCheck`: `qmd mcp` over stdio, a relay serving alone):
 *   the open skips `quick_check`, so the `initialize` reply does not wait for it (about 18 ms of
 *   the start-up on 5 MB, docs/design.md §5); it runs once the reply is written (`checkSoon`,
 *   called by `Serving.checkAfterReplies` and on the client's `initialized`) or before the
 *   first read once `arm`ed, whichever comes first. The reads before it are what a server's
 *   instructions read (collections and contexts), already read at open.
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
  const check = (): void => {
    pending = false;
    try {
      reader.verify();
    } catch (error) {
      noticed(error);
      throw error;
    }
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
  };
}
