import type { ModelChoice, RuntimeReport } from '../llm/index.js';
import type { QueryOptions, QueryResult, SearchHit, SearchOptions, SubSearch } from '../search/types.js';
import type {
  CollectionInfo,
  ContextInfo,
  DocumentEntry,
  DocumentSlice,
  MultiGetOptions,
  MultiGetResult,
  ReadOptions,
  StatusReport,
} from '../store/types.js';

export type * from '../search/types.js';
export { DEFAULT_CANDIDATE_LIMIT, MAX_CANDIDATE_LIMIT, MAX_SUB_SEARCHES } from '../search/types.js';
export type * from '../store/types.js';
export { DEFAULT_MULTI_GET_MAX_BYTES } from '../store/types.js';

/**
 * The read side of the index: what `qmd mcp` serves (`openReader`, `src/core/reader.ts`) and
 * the one-shot reading commands use. It holds no indexer and loads no model until a query
 * needs one; `src/mcp/` sees the core only through this file.
 */
export interface Reader {
  /** Absolute path of the index file. */
  readonly path: string;
  listCollections(): CollectionInfo[];
  /** Every context, the global one first, then by collection and prefix. */
  listContexts(): ContextInfo[];
  /**
   * The documents of a collection, by path, optionally only those under `prefix` (whole
   * segments, as `folder`): what `qmd ls` lists. UNKNOWN_COLLECTION.
   */
  listDocuments(collection: string, prefix?: string): DocumentEntry[];
  /** BM25 full-text search; scores relative to the best hit (1). */
  search(query: string, options?: SearchOptions): SearchHit[];
  /**
   * What the MCP `query` tool and `qmd query` run. A string is a plain query: BM25 and the
   * vectors of its text, fused by reciprocal rank fusion (`mode: 'hybrid'`), or BM25 alone
   * (`mode: 'bm25'`, with a `note` saying why) when nothing is embedded with the configured
   * model or the model is unavailable. A list runs each typed sub-search (`SubSearch`) and
   * fuses them the same way; vector ones that cannot run are skipped and reported. Scores are
   * relative to the best result (1): one ranking's own measure when one sub-search answers
   * alone, the fused reciprocal rank otherwise. Hits carry their `context`. Rejects with
   * ABORTED as soon as `signal` fires; BAD_ARGUMENT for an empty list or a blank sub-search.
   */
  query(query: string | readonly SubSearch[], options?: QueryOptions): Promise<QueryResult>;
  /**
   * Vector search only (`mode: 'vector'`): documents ranked by their best chunk's cosine
   * similarity, scored relative to the nearest (1). No hits and a `note` when nothing is
   * embedded with the
   * model; MODEL_UNAVAILABLE when the model cannot be loaded.
   */
  vsearch(query: string, options?: SearchOptions): Promise<QueryResult>;
  /**
   * One indexed document, whole or a range of lines. The reference is `collection/path.md`,
   * `#docid`, `qmd://collection/path.md`, a path without its collection or a suffix of one
   * when unique, or an absolute path inside a collection's folder; `ref:LINE` and
   * `ref:FROM:COUNT` give a range. Errors: OUTSIDE_COLLECTIONS (never read), BAD_ARGUMENT,
   * NOT_FOUND (with the closest indexed paths), AMBIGUOUS (with the candidates).
   */
  get(ref: string, options?: ReadOptions): DocumentSlice;
  /**
   * Documents by glob (`notes/**\/*.md`, `*.md` across collections) or comma list of
   * references and globs. An item that names nothing is listed in `skipped`; one that reaches
   * outside the collections refuses the whole call.
   */
  multiGet(pattern: string, options?: MultiGetOptions): Promise<MultiGetResult>;
  status(): StatusReport;
  /**
   * `status()`, read where the query worker reads (`StoreOptions.queryWorker`: its counts read
   * every chunk, seconds at 100k notes, so `qmd mcp` keeps them off its main thread), else
   * inline. Errors: ABORTED (the signal), CLOSED.
   */
  readStatus(options?: { signal?: AbortSignal }): Promise<StatusReport>;
  /**
   * The llama.cpp backend (GPU or CPU, devices, VRAM) and the models (configured, loaded,
   * layers on the GPU). With `probe`, loads the backend first (not the models): `qmd status`.
   */
  models(options?: { probe?: boolean }): Promise<ModelsReport>;
  /**
   * The embedding model searches use (`StoreOptions.embedModel`): named, the index's, or the
   * default, with which; undefined when there is none. Loads nothing.
   */
  embeddingModel(): ModelChoice | undefined;
  /**
   * Reads the whole index through (`PRAGMA quick_check`) and throws INDEX_CORRUPT if it finds
   * damage: what `qmd mcp` over stdio runs after the handshake instead of at open
   * (docs/design.md §6, "A damaged index"). Errors: CLOSED.
   */
  verify(): void;
  /**
   * Disposes the LLM first (it waits for native calls that are running), then checkpoints
   * and closes the database, so a clean exit leaves no `-wal` file. Idempotent.
   */
  close(): Promise<void>;
}

/** `Store.models()`: the runtime's report, and each configured model's spec by role. */
export interface ModelsReport extends RuntimeReport {
  /** The configured spec of each role; null: turned off. */
  configured: { embed: string | null; rerank: string | null; expand: string | null };
  /** Why the backend could not be loaded (`probe` only). */
  error?: string;
}
