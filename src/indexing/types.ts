/**
 * What indexing is asked and reports: `addCollection` and `update` (the scan and its write
 * phase), and `embed` (chunks and their vectors).
 */

/**
 * Where `addCollection` and `update` are: listing a collection's folder (`total` unknown yet:
 * 0), or reading its files and writing them, batch by batch (`done` of `total` listed: each
 * batch is committed before its files count as done).
 */
export interface IndexProgress {
  stage: 'listing' | 'reading';
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
   * is the one being read (or having its gone files removed) then, whose files read so far
   * were written (`read` of `listed`; files gone from it are removed by the next update);
   * the others are as they were.
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
  /**
   * Cancels: rejects with ABORTED. Every batch is committed as it is read (a unit,
   * `write-units.ts`): the units committed before stay, the index consistent.
   */
  signal?: AbortSignal;
  /**
   * Stops after the unit in hand (Ctrl-C): the batch of files being read is finished, written
   * and committed, nothing more is begun, and the report says what was kept (`stopped`).
   */
  stop?: AbortSignal;
}

/** What `embed()` reports as it goes: chunks embedded so far out of those to embed. */
export type EmbedProgressFn = (progress: { done: number; total: number }) => void;

export interface EmbedOptions {
  /** Checked between chunks: the vectors computed so far are saved, then it rejects with ABORTED. */
  signal?: AbortSignal;
  /**
   * Stops after the chunk being embedded (Ctrl-C): its batch is saved, and `embed()` resolves
   * with `stopped: true`. Checked between pages of notes while chunking too. Until the model
   * is loaded (downloaded, its file read for its fingerprint, then loaded) it rejects with
   * ABORTED instead: nothing was embedded, a download resumes on the next run, and a model not
   * loaded yet is never loaded.
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
