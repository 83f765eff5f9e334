/**
 * What the index holds, in the shapes its readers are handed: collections, contexts,
 * documents (whole, by lines, by glob, as `qmd ls` lists them) and the counts of `status()`.
 * The classes of this room read and write the rows; `src/core/` passes these shapes on to the
 * CLI and the MCP server unchanged.
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
