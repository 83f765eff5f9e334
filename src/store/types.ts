import type { Failpoints } from '../failpoints.js';
import type {
  DownloadProgress,
  Embedder,
  EmbedderOptions,
  Expander,
  ExpanderOptions,
  GpuChoice,
  ModelChoice,
  Reranker,
  RerankerOptions,
  RuntimeReport,
} from '../llm/index.js';
import type { Log } from '../log.js';

/**
 * The index's public API: what `src/cli/` and `src/mcp/` may use. `src/store/` owns the
 * SQLite database and (with the embeddings issue) the LLM; nothing outside it touches either.
 *
 * Paths: a document is addressed as `collection/relative/path.md` (what `query` returns and
 * `get` accepts) or as `#docid`. Only indexed documents can ever be read, and their text
 * comes from the index, never from the filesystem at request time.
 */

export interface CollectionInfo {
  name: string;
  /** Absolute, real path of the collection's root directory. */
  root: string;
  /**
   * Glob of the files indexed, relative to `root` (default `**\/*.md`). Commas outside braces
   * and brackets separate several, as in qmd 2.x (`a.md,journals/*.md`: their union).
   */
  mask: string;
  /** Globs relative to `root` whose files are not indexed, besides `**\/node_modules/**`. */
  ignore: string[];
  /** The shell command `qmd update` runs in `root` before it scans (`git pull`), if any. */
  update?: string;
  /** False: a search that names no collection leaves this one out (`qmd collection exclude`). */
  includeByDefault: boolean;
  documents: number;
  /** ISO time of the last scan. */
  updatedAt: string;
}

/**
 * Where `addCollection` and `update` are: listing a collection's folder (`total` unknown yet:
 * 0), reading its files (`done` of `total` listed), or writing everything read into the index
 * (`done` of `total` files staged; `collection` is then every collection written, joined).
 */
export interface IndexProgress {
  stage: 'listing' | 'reading' | 'writing';
  collection: string;
  done: number;
  total: number;
}

export type ProgressFn = (progress: IndexProgress) => void;

/** Why the mask's wildcards passed a file by: it is under `node_modules`, or hidden (a name starting with `.`, `.git` included). */
export type IgnoreReason = 'node_modules' | 'hidden';

/** Files the mask matched but its wildcards do not enter (`scan.ts`), by reason. */
export interface IgnoredFiles {
  /** How many files, for each reason. */
  counts: Record<IgnoreReason, number>;
  /**
   * A few of the folders they were in (`.obsidian/`, `vendor/node_modules/`) or hidden files
   * (`.draft.md`): relative to the root in a scan, addressed as `collection/…` in a report.
   */
  examples: Record<IgnoreReason, string[]>;
}

/** What a scan did. */
export interface IndexReport {
  collections: number;
  scanned: number;
  added: number;
  updated: number;
  removed: number;
  unchanged: number;
  /** Files that could not be read (permissions, vanished mid-scan), with why. */
  errors: Array<{ file: string; error: string }>;
  /** Files the mask matched under `node_modules` or hidden folders, not indexed unless the mask names them. */
  ignored: IgnoredFiles;
  /**
   * Set when `stop` fired: the collections scanned in full were written as usual; `partial`
   * is the one being read then, whose files read so far were written (added or changed; none
   * removed); the others are as they were.
   */
  stopped?: {
    complete: string[];
    partial?: { collection: string; read: number; listed: number };
    untouched: string[];
  };
  ms: number;
}

export interface IndexOptions {
  onProgress?: ProgressFn;
  /** Cancels: rejects with ABORTED and the index is unchanged. */
  signal?: AbortSignal;
  /**
   * Stops after the batch of files being read (Ctrl-C): what was read so far is written and
   * committed, and the report says so (`stopped`).
   */
  stop?: AbortSignal;
}

export interface SearchOptions {
  /** At most this many results (default 10). */
  limit?: number;
  /** Only these collections. An unknown name is an error. */
  collections?: string[];
  /**
   * Only documents under this folder, a path relative to the root of each collection searched
   * (`2024/q1`; a trailing `/` is the same), by whole segments: `2024` holds `2024/a.md` and
   * `2024/q1/b.md`, not `2024x/c.md`. With `collections`, both apply. Answered inside the
   * index, by BM25 and vectors alike. A path that could leave a collection (`..`, absolute, a
   * URI) is OUTSIDE_COLLECTIONS; blank, `.` or empty segments, backslashes BAD_ARGUMENT
   * (`folder.ts`).
   */
  folder?: string;
  /**
   * Drop results whose `score` is below this, i.e. weaker than this fraction of the query's
   * best result (in [0, 1]; 0 keeps everything, 1 keeps the best and its ties).
   */
  minScore?: number;
  /** Stops the work early when it fires (the request was cancelled). */
  signal?: AbortSignal;
  /** What surrounds matched terms in `snippet` (default `**` and `**`). */
  highlight?: { open: string; close: string };
}

export interface SearchHit {
  /** `collection/relative/path.md`, as `get` accepts it. */
  file: string;
  /** `#` followed by the short stable id. */
  docid: string;
  collection: string;
  /** Relative to the collection root. */
  path: string;
  title: string;
  /**
   * In [0, 1]: this result's strength as a fraction of the best result of the same query, by
   * the mode's own measure (BM25, cosine similarity, fused rank). The best scores 1. Not
   * comparable across queries (`scores.ts` says why).
   */
  score: number;
  /** A short excerpt with the matched terms. */
  snippet: string;
  /** 1-based line where the best match is, when known. */
  line?: number;
  /** The lines the snippet was taken from, when known: `get file:fromLine:lines` reads them. */
  snippetRange?: SnippetRange;
  /**
   * What the contexts that cover this document say (`qmd context add`): the global one, then
   * its collection's, then each folder's down to the document's, joined by a blank line.
   */
  context?: string;
}

/** Absolute lines of a document: the first (1-based) and how many. */
export interface SnippetRange {
  fromLine: number;
  lines: number;
}

export type SearchMode = 'bm25' | 'vector' | 'hybrid';

/**
 * One typed sub-search of `query` (qmd 2.8's `searches`): `lex` is BM25 over the text, `vec`
 * the vectors nearest the text as a question, `hyde` the vectors nearest the text as a
 * passage (a hypothetical answer, embedded as the notes' own chunks are).
 */
export interface SubSearch {
  type: 'lex' | 'vec' | 'hyde';
  query: string;
}

/** What became of one sub-search: what it ran as and how many candidates it gave. */
export interface SubSearchRun extends SubSearch {
  /** Written by the query expansion model for a plain query (absent for the query's own and typed ones). */
  expanded?: true;
  /**
   * `bm25` or `vector` as asked; `skipped` for a vector sub-search when vectors cannot answer
   * (the result's `note` says why); `bm25` for a vec/hyde one run as BM25 over its text
   * instead, which happens only when every sub-search is a vector one.
   */
  ran: 'bm25' | 'vector' | 'skipped';
  /** Documents it ranked (at most its candidate depth). */
  candidates: number;
}

/** qmd 2.8 takes at most 10 sub-searches; each is a ranking computed and fused. */
export const MAX_SUB_SEARCHES = 10;
/** The deepest `candidateLimit`: deeper rankings only cost snippets nobody reads. */
export const MAX_CANDIDATE_LIMIT = 1_000;
/** Fused candidates the reranker reads when `candidateLimit` is not given: the peer's 40. */
export const DEFAULT_CANDIDATE_LIMIT = 40;

export interface QueryOptions extends SearchOptions {
  /**
   * Background that disambiguates the query ("web page load times" for "performance"). It
   * never searches on its own: it is folded into the text of every `vec` sub-search (and the
   * vector half of a plain query) before that text is embedded; BM25 and `hyde` texts are
   * used as given.
   */
  intent?: string;
  /**
   * The best this many fused documents are the candidates: the reranker reads each (its best
   * chunk), and the results come from them (default 40, the peer's; at most 1,000). Each
   * sub-search ranks at least this deep.
   */
  candidateLimit?: number;
  /**
   * Rerank the candidates with the reranking model (default true when one is configured):
   * its score is blended with the fused rank, the rank weighing more near the top (ranks
   * 1–3: 75% rank, 25% reranker; 4–10: 60/40; below: 40/60). False: the fusion's order (RRF only).
   */
  rerank?: boolean;
  /**
   * Expand a plain query with the query expansion model (default true when one is
   * configured): its typed lines are searched beside the query's own lex and vec, at half
   * their weight. Typed `searches` are never expanded.
   */
  expand?: boolean;
}

export interface QueryResult {
  mode: SearchMode;
  hits: SearchHit[];
  /** Why the mode is what it is, e.g. `nothing is embedded yet: BM25 only`. */
  note?: string;
  /**
   * Each sub-search in the order given (a plain query is `lex` and `vec` of its text, then
   * the expansion's lines, marked `expanded`).
   */
  searches: SubSearchRun[];
  /** The candidates were reranked and the scores blended (`QueryOptions.rerank`). */
  reranked: boolean;
  /** Why the results are not reranked, when reranking was wanted (asked, or a reranker is configured). */
  rerankNote?: string;
  /** Why a plain query was not expanded, or its expansion kept no line, when expansion was wanted. */
  expansionNote?: string;
}

/**
 * A context (`qmd context add PATH TEXT`): what the notes in one place are. `path` is how the
 * CLI shows it: `/` for the global context, `collection` for a whole collection,
 * `collection/sub/dir` for a folder (or a single note) in it.
 */
export interface ContextInfo {
  path: string;
  /** Null for the global context. */
  collection: string | null;
  /** Relative to the collection's root, without leading or trailing `/`; `''` for all of it. */
  prefix: string;
  text: string;
  /** ISO time it was last set. */
  updatedAt: string;
}

export interface DocumentSlice {
  file: string;
  docid: string;
  title: string;
  /** 1-based first line returned. */
  fromLine: number;
  /** Number of lines returned. */
  lines: number;
  totalLines: number;
  /**
   * The lines asked for, exactly as indexed, or numbered (`12: text`) with `lineNumbers`. A
   * range (`fromLine`/`maxLines`, `:FROM:COUNT`) ends without the last line's line end, so a
   * client splitting on newlines sees exactly the lines it asked for; a whole document is as
   * indexed.
   */
  text: string;
  /** What the contexts covering the document say (as `SearchHit.context`), when one does. */
  context?: string;
}

/** How much of a document `get` returns, and how. */
export interface ReadOptions {
  /** First line (1-based). Wins over a `:LINE` suffix on the reference. */
  fromLine?: number;
  /** At most this many lines. Wins over a `:FROM:COUNT` suffix on the reference. */
  maxLines?: number;
  /** Prefix each line with its number and `: ` (`12: text`), as qmd 2.8 does. Default false. */
  lineNumbers?: boolean;
}

/** `multi_get`'s per-file cap when none is given: qmd 2.8's default (64 KiB). */
export const DEFAULT_MULTI_GET_MAX_BYTES = 65_536;

export interface MultiGetOptions {
  /**
   * Per file: a document whose text (after `maxLines`, before line numbers) is larger is
   * skipped with the reason, as qmd 2.8 does. Default `DEFAULT_MULTI_GET_MAX_BYTES`.
   */
  maxBytes?: number;
  /** At most this many lines of each document (from its first line). */
  maxLines?: number;
  /** Number each line (`12: text`). Default false. */
  lineNumbers?: boolean;
  /** A ceiling on the text of all documents together; those past it are skipped. Default none. */
  totalBytes?: number;
  /** Rejects with ABORTED as soon as it fires (the request was cancelled). */
  signal?: AbortSignal;
}

export interface MultiGetResult {
  /** `truncated`: `maxLines` cut the document (`lines < totalLines`). */
  documents: Array<DocumentSlice & { truncated: boolean }>;
  /** Matches left out, and list items that named nothing, with why (e.g. too large). */
  skipped: Array<{ file: string; reason: string; kind: SkipKind }>;
}

/**
 * Why an item of `multiGet` gave no document: a list item that names no indexed document
 * (`not-found`), a glob that matches none (`no-match`), a document over `maxBytes`
 * (`too-large`) or past the reply's budget (`full`), an item that is ambiguous or malformed
 * (`refused`).
 */
export type SkipKind = 'not-found' | 'no-match' | 'too-large' | 'full' | 'refused';

/** A document as `qmd ls` shows it. */
export interface DocumentEntry {
  /** `collection/relative/path.md`. */
  file: string;
  path: string;
  docid: string;
  title: string;
  size: number;
  /** ISO time of the file's modification when it was last indexed. */
  modified: string;
}

/** What `cleanup()` removed (or, with `dryRun`, would remove). */
export interface CleanupReport {
  orphanedContent: number;
  orphanedChunks: number;
  orphanedEmbeddings: number;
  /** File size before and after (equal with `dryRun`). */
  bytesBefore: number;
  bytesAfter: number;
}

/** What `embed()` reports as it goes: chunks embedded so far out of those to embed. */
export type EmbedProgressFn = (progress: { done: number; total: number }) => void;

export interface EmbedOptions {
  /** Checked between chunks: the vectors computed so far are saved, then it rejects with ABORTED. */
  signal?: AbortSignal;
  /**
   * Stops after the chunk being embedded (Ctrl-C): its batch is saved, and `embed()` resolves
   * with `stopped: true`. Checked between pages of notes while chunking too. While the model
   * is still being fetched (downloaded, or its file read for its fingerprint) it rejects with
   * ABORTED instead: nothing was embedded, and a download resumes on the next run.
   */
  stop?: AbortSignal;
  onProgress?: EmbedProgressFn;
  /** Before embedding, new and changed notes are chunked: how many so far, after each page of them. */
  onChunked?: (notes: number) => void;
  /** Chunks per write transaction (default 32): a kill loses at most one batch. */
  batchSize?: number;
  /**
   * Embed every chunk again, as if none had a vector (qmd 2.x's `embed -f`): the vectors of
   * the configured model are deleted first (one transaction), then embedded as usual; a run
   * stopped midway leaves the rest for the next `embed`.
   */
  force?: boolean;
  /**
   * Called once, before anything is embedded, when the index was embedded with another spec:
   * `reembed` when its vectors are of another model (they are replaced), false when only the
   * path changed (the same file moved: remembered, nothing re-embedded).
   */
  onModelChange?: (change: ModelChange) => void;
}

export interface ModelChange {
  /** The spec the index was embedded with. */
  from: string;
  /** The spec it is embedded with from now on. */
  to: string;
  reembed: boolean;
}

/** What `embed()` did. */
export interface EmbedReport {
  /** The model spec embedded with. */
  model: string;
  /** The index's model before this run, when it was another spec (`EmbedOptions.onModelChange`). */
  previousModel?: ModelChange;
  /** Notes (distinct texts) chunked in this run: new or changed since the last one. */
  documents: number;
  /** Chunks in the index: distinct texts to embed, counted as `status()` counts them. */
  chunks: number;
  /** Chunks embedded in this run. */
  embedded: number;
  /** Chunks that already had a vector for this model (unchanged text, same model). */
  skipped: number;
  /** Vectors deleted because their chunk is gone. */
  removed: number;
  ms: number;
  vectorBackend: 'sqlite-vec' | 'fallback';
  /** `stop` fired: `embedded` were saved, the other chunks wait for the next run. */
  stopped?: boolean;
}

/**
 * A collection in `status()`: ours, and qmd 2.8's names for the same facts, so a client
 * written against either reads it.
 */
export interface CollectionStatus extends CollectionInfo {
  /** qmd 2.8's name for `root`. */
  path: string;
  /** qmd 2.8's name for `mask`. */
  pattern: string;
  /**
   * ISO time of the newest modification among its documents (their files' mtime when last
   * indexed), as qmd 2.8 reports it; for a collection with no documents, its last scan.
   */
  lastUpdated: string;
}

export interface StatusReport {
  index: string;
  sizeBytes: number;
  documents: number;
  /** qmd 2.8's name for `documents`. */
  totalDocuments: number;
  /**
   * Documents (distinct texts, as qmd 2.8 counts them) that `qmd embed` would chunk or embed:
   * not chunked yet, or with a chunk that has no vector from the model the index is embedded
   * with (all of them when nothing is embedded). Empty notes are never embedded, never counted.
   */
  needsEmbedding: number;
  /** Vector search can answer: some chunk has a vector from the index's model. */
  hasVectorIndex: boolean;
  collections: CollectionStatus[];
  /** Every context set on the index, as `listContexts()` returns them. */
  contexts: ContextInfo[];
  embeddings: {
    /**
     * The model the index is embedded with, or null: what `qmd embed` used, a local path made
     * absolute. Readers use it unless a model is named (`StoreOptions.embedModel`).
     */
    model: string | null;
    /** That model file's fingerprint (`modelFingerprint`: size, first and last MiB), or null. */
    fingerprint: string | null;
    /**
     * Chunks in the index (notes are chunked by `qmd embed`): distinct texts, so a section that
     * several notes share counts once, as it is embedded once. The same count as `qmd embed`'s.
     */
    chunks: number;
    /** Of those, the chunks with a vector from that model. */
    embeddedChunks: number;
    /** What answers vector queries: `none` when nothing is embedded. */
    vectorBackend: 'sqlite-vec' | 'fallback' | 'none';
  };
}

export interface Store {
  /** Absolute path of the index file. */
  readonly path: string;
  listCollections(): CollectionInfo[];
  /**
   * Adds a collection and indexes it at once. `ignore`, `update` and `includeByDefault` are
   * qmd 2.x's collection settings (`CollectionInfo`). COLLECTION_EXISTS for a taken name or root.
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
   * Re-scans every collection incrementally (mtime + hash); all or nothing, but for `stop`,
   * which keeps what was read before it (`IndexOptions`).
   */
  update(options?: IndexOptions): Promise<IndexReport>;
  /**
   * The documents of a collection, by path, optionally only those under `prefix` (whole
   * segments, as `folder`): what `qmd ls` lists. UNKNOWN_COLLECTION.
   */
  listDocuments(collection: string, prefix?: string): DocumentEntry[];
  /**
   * Removes what nothing uses any more (content no document has, chunks no content has,
   * embeddings no chunk has or of another model), merges the full-text index's segments and
   * VACUUMs the file. With `dryRun`, only counts. INDEX_READ_ONLY.
   */
  cleanup(options?: { dryRun?: boolean }): CleanupReport;
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
   * Chunks new and changed notes and embeds every chunk without a vector for the configured
   * model, in batches of one transaction each (resumable after a kill). Loads the model.
   * Errors: INDEX_READ_ONLY, MODEL_UNAVAILABLE, ABORTED, CLOSED.
   */
  embed(options?: EmbedOptions): Promise<EmbedReport>;
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
   * The llama.cpp backend (GPU or CPU, devices, VRAM) and the models (configured, loaded,
   * layers on the GPU). With `probe`, loads the backend first (not the models): `qmd status`.
   */
  models(options?: { probe?: boolean }): Promise<ModelsReport>;
  /**
   * `status()`, read where the query worker reads (`StoreOptions.queryWorker`: its counts read
   * every chunk, seconds at 100k notes, so `qmd mcp` keeps them off its main thread), else
   * inline. Errors: ABORTED (the signal), CLOSED.
   */
  readStatus(options?: { signal?: AbortSignal }): Promise<StatusReport>;
  /**
   * The embedding model searches use (`StoreOptions.embedModel`): named, the index's, or the
   * default, with which; undefined when there is none. Loads nothing.
   */
  embeddingModel(): ModelChoice | undefined;
  /** Every context, the global one first, then by collection and prefix. */
  listContexts(): ContextInfo[];
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

/** `Store.models()`: the runtime's report, and each configured model's spec by role. */
export interface ModelsReport extends RuntimeReport {
  /** The configured spec of each role; null: turned off. */
  configured: { embed: string | null; rerank: string | null; expand: string | null };
  /** Why the backend could not be loaded (`probe` only). */
  error?: string;
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
   * Run `PRAGMA quick_check` on open and refuse a damaged index (INDEX_CORRUPT). It reads the
   * whole file (its cost: docs/design.md §5, "Start-up"), so: `true` always (a writer, which
   * pays it once before writing into the index; `qmd status`); `'small'` only when the file is
   * at most `QUICK_CHECK_SMALL_BYTES` (every reader: each `qmd mcp` start, `qmd search`,
   * `get`…: a damaged small index is refused by every command alike, issue 34, while a large one
   * is never read through at each start or search: about 10 ms per MB on a busy machine,
   * `bench/experiments/quick-check.mjs`); `false` never. A large index's damage meets the
   * statement that touches it, as INDEX_CORRUPT. Default: `true`, or `'small'` when `readonly`.
   */
  quickCheck?: boolean | 'small';
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
   * `store.update.write` is hit inside every indexing transaction (`addCollection`,
   * `update`), after all rows are written and before COMMIT; `llm.embed`, `llm.rerank` and
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
