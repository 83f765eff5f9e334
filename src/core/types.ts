import type { Failpoints } from '../failpoints.js';
import type { EmbedOptions, EmbedReport, IndexOptions, IndexReport } from '../indexing/types.js';
import type {
  DownloadProgress,
  Embedder,
  EmbedderOptions,
  Expander,
  ExpanderOptions,
  GpuChoice,
  Reranker,
  RerankerOptions,
} from '../llm/index.js';
import type { Log } from '../log.js';
import type { QuickCheck } from '../store/integrity.js';
import type { CleanupReport, ContextInfo } from '../store/types.js';
import type { Reader } from './reader-types.js';

export type * from '../indexing/types.js';
export * from './reader-types.js';

/**
 * The index's public API: what `src/cli/` uses (`openStore`). A `Store` is a `Reader` and a
 * `Writer` over one connection: the reads `qmd mcp` serves (`reader-types.ts`) and the writes
 * of `collection`, `update`, `embed`, `context` and `cleanup`. `src/core/` is the one place
 * that composes them with the models (`src/llm/`); nothing outside it touches the database or
 * a model.
 */
export interface Writer {
  /** Absolute path of the index file. */
  readonly path: string;
  /**
   * Adds a collection and indexes it at once, each batch of files committed as it is read (a
   * unit: `src/indexing/write-units.ts`), the collection's row in the first. `ignore`, `update`
   * and `includeByDefault` are qmd 2.x's collection settings (`CollectionInfo`).
   * COLLECTION_EXISTS for a taken name or root.
   */
  addCollection(
    root: string,
    options?: {
      name?: string;
      mask?: string;
      ignore?: string[];
      update?: string;
      includeByDefault?: boolean;
    } & IndexOptions,
  ): Promise<IndexReport>;
  removeCollection(name: string): void;
  /**
   * Renames a collection; its documents keep their docids, its contexts and vectors follow.
   * UNKNOWN_COLLECTION, COLLECTION_EXISTS, BAD_ARGUMENT (an invalid name).
   */
  renameCollection(from: string, to: string): void;
  /**
   * Sets a collection's update command (null clears it), whether searches that name no
   * collection include it, or its mask (the next `update` indexes by it). UNKNOWN_COLLECTION,
   * BAD_ARGUMENT (a mask that is absolute or leaves the folder).
   */
  configureCollection(
    name: string,
    settings: { update?: string | null; includeByDefault?: boolean; mask?: string },
  ): void;
  /**
   * Re-scans every collection incrementally (mtime + hash), each batch of changed files
   * committed as it is read, then the files gone from each collection read in full removed;
   * the index is whole after every unit, and `stop` ends it after the unit in hand
   * (`IndexOptions`).
   */
  update(options?: IndexOptions): Promise<IndexReport>;
  /**
   * Removes what nothing uses any more (content no document has, chunks no content has,
   * embeddings no chunk has or of another model), merges the full-text index's segments and
   * VACUUMs the file. With `dryRun`, only counts. INDEX_READ_ONLY.
   */
  cleanup(options?: { dryRun?: boolean }): CleanupReport;
  /**
   * Chunks new and changed notes and embeds every chunk without a vector for the configured
   * model, in batches of one transaction each (resumable after a kill). Loads the model.
   * Errors: INDEX_READ_ONLY, MODEL_UNAVAILABLE, ABORTED, CLOSED.
   */
  embed(options?: EmbedOptions): Promise<EmbedReport>;
  /**
   * Sets the context of PATH (replacing the one there): `/` (global), `collection`,
   * `collection/sub/dir`, `qmd://collection/sub/dir`, or a directory on disk (absolute, or
   * `./`, `../`, `~/` relative to `cwd`) inside a collection's root. Errors: UNKNOWN_COLLECTION,
   * OUTSIDE_COLLECTIONS, NO_SUCH_DIRECTORY, BAD_ARGUMENT (blank text, `..`), INDEX_READ_ONLY.
   */
  setContext(path: string, text: string, options?: { cwd?: string }): { context: ContextInfo; replaced: boolean };
  /** Removes the context of PATH (read as `setContext` reads it); NOT_FOUND when there is none. */
  removeContext(path: string, options?: { cwd?: string }): ContextInfo;
  /**
   * Disposes the LLM first (it waits for native calls that are running), then checkpoints
   * and closes the database, so a clean exit leaves no `-wal` file. Idempotent.
   */
  close(): Promise<void>;
}

/** Reads and writes on one index, as the CLI opens it. */
export interface Store extends Reader, Writer {
  close(): Promise<void>;
}

/** What `openStore` accepts. */
export interface StoreOptions {
  /**
   * Never change the index through this store: `addCollection`, `update` and
   * `removeCollection` throw INDEX_READ_ONLY, and the connection runs with `query_only`.
   * The file is still opened for writing when possible, so `close()` can checkpoint and
   * remove the `-wal` (a read-only SQLite connection cannot). A missing index is never
   * created: INDEX_MISSING says how to make one.
   */
  readonly?: boolean;
  /**
   * Create the index (and its folder) when it is missing. Default: unless `readonly`. Only
   * `qmd collection add` makes an index; every other writer refuses a missing one
   * (INDEX_MISSING), so a mistyped path never grows folders and an empty index.
   */
  create?: boolean;
  /** How long to wait for another process's write lock before INDEX_LOCKED (default 5000). */
  busyTimeoutMs?: number;
  /**
   * How much of the index is read through on open (`PRAGMA quick_check`) before anything else
   * reads it; a damaged one is refused (INDEX_CORRUPT). The whole file costs time linear in
   * its size (about 10 ms per MB on a busy machine, 1.5 s of CPU at 50,000 notes), so:
   * `true`, always the whole file (`qmd status`); `'small'`, the whole file when it is at most
   * `QUICK_CHECK_SMALL_BYTES` (16 MiB), else nothing (every reader: `qmd search`, `get`…, and
   * the long-lived servers as they start: a damaged small index is refused by every command
   * alike); `'catalogue'`, the whole file when small, else the tables every writer reads or
   * rewrites (`CATALOGUE` in `src/store/integrity.ts`: about 27 ms at 50,000 notes); `false`,
   * nothing (`qmd mcp` over stdio, which checks after the handshake: `Reader.verify`).
   * Whatever is not read through meets SQLite's own checks in the statement that touches it,
   * as INDEX_CORRUPT. Default: `'catalogue'`, or `'small'` when `readonly`.
   */
  quickCheck?: QuickCheck;
  /** Warnings go here (stderr); the store never writes to stdout. Default: silent. */
  log?: Log;
  /**
   * The embedding model a person named (`--embed-model`, `QMD_EMBED_MODEL`): a `.gguf` path or
   * an `hf:` URI. It beats the model the index remembers (the one `embed()` last wrote vectors
   * with), which beats `defaultEmbedModel`; with none of the three, no vectors (`query()` is
   * BM25 only). A named model whose vectors are not the index's is never mixed with them:
   * `query()` answers with BM25 and one warning, `vsearch()` refuses (MODEL_MISMATCH), `embed()`
   * re-embeds the index with it. The store creates its embedder on the first call that needs a
   * vector (node-llama-cpp is not imported before), and `close()` disposes it first. Only a
   * writable store (`embed()`) downloads an `hf:` model that is not cached yet.
   */
  embedModel?: string;
  /** How `embedModel` was named, for messages (default `--embed-model`). */
  embedModelGivenAs?: '--embed-model' | 'QMD_EMBED_MODEL';
  /** The model when none is named and the index remembers none (the CLI: `DEFAULT_EMBED_MODEL`). */
  defaultEmbedModel?: string;
  /** Feeds a progress bar while `embed()` downloads an `hf:` model (it says when it starts and ends on `log`). */
  onModelDownload?: (progress: DownloadProgress) => void;
  /**
   * Load the sqlite-vec extension for KNN queries (default true). False, or when it cannot
   * load: vectors are compared by a scan in JS, with the same results.
   */
  vectorExtension?: boolean;
  /**
   * llama.cpp threads for every model of the store: embedding, ranking, generation (default:
   * `defaultThreads()` of `src/llm/runtime.ts`, half the CPU's math cores). Measured on 2 busy
   * cores (load average ~7) with the tiny model: 1 thread 6.5 ms per 361-token text, 2 threads
   * 171 ms (its thread pool waits on descheduled threads); on idle cores 2 is faster
   * (docs/design.md §5, "Threads and batches").
   */
  embedThreads?: number;
  /** The llama.cpp backend (`src/llm/gpu.ts`): default `auto`, the GPU when one loads, else the CPU. */
  gpu?: GpuChoice;
  /**
   * The reranking model (a `.gguf` path or an `hf:` URI), loaded on the first query that
   * reranks. Undefined: no reranker, results are the fusion's.
   */
  rerankModel?: string;
  /** The query expansion model, loaded on the first plain query. Undefined: no expansion. */
  expandModel?: string;
  /** Diagnostic lines about native embedding calls (`QMD_DEBUG_EMBED`). Default: none. */
  trace?: (line: string) => void;
  /**
   * How the store makes its one embedder. Default: `createEmbedder` of `src/llm/`, whose
   * `dispose()` waits for the native call that is running. Only code passes another (no flag or
   * variable reaches it): the disposal benchmark's naive contender, the scale benchmark's
   * stand-in, and the store tests that record what the store asks of its embedder.
   */
  createEmbedder?: (options: EmbedderOptions) => Embedder;
  /** How the store makes its reranker and expander (tests that record what `query` asks; code only). */
  createReranker?: (options: RerankerOptions) => Reranker;
  createExpander?: (options: ExpanderOptions) => Expander;
  /**
   * `store.update.write` is hit inside every unit of indexing (`addCollection`, `update`),
   * after its rows are written and before its COMMIT; `llm.embed`, `llm.rerank` and
   * `llm.expand` at the start of every embedding, document ranking and generation, before
   * llama.cpp runs; `store.worker.query` at the start of every
   * read call of `queryWorker`'s, where it runs (`holdThread`). Default: none.
   */
  failpoints?: Failpoints;
  /**
   * Run the heavy read calls (the BM25 and vector rankings of `query`/`vsearch`, `multiGet`)
   * in a `worker_threads` worker with its own read-only connection, so they never hold this
   * thread's event loop (docs/design.md §8.4): `qmd mcp` passes true (the bundle's
   * `dist/query-worker.mjs`); tests may name the script. `close()` then stops the worker after
   * the model and before the database. Default: inline. `search()` always runs inline.
   */
  queryWorker?: boolean | { file: string | URL; execArgv?: string[] };
}
