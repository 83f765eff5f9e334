import { errorMessage } from '../../errors.js';
import type { Log } from '../../log.js';
import { loadSqliteVec, type Sqlite } from '../sqlite.js';
import type { StatusReport } from '../types.js';
import { CODE_TABLE, Codes } from './codes.js';
import { toBlob } from './encoding.js';
import { coarse, exact } from './nearest.js';

export { codePath, fromBlob, normalize, prefixRange, toBlob, toCode } from './encoding.js';

/**
 * Where the vectors live and how the nearest ones are found (docs/design.md §8.2, §8.3).
 *
 * `embeddings.vector` (float32, L2-normalized, so cosine similarity is a dot product) is the
 * one float copy and the source of truth. With sqlite-vec 0.1.9 loaded, `chunk_codes` holds a
 * compact int8 code of each vector once per document that has its chunk (rowid =
 * `vector_rows.id`, see `schema-vectors.ts`), partitioned by collection, with the document's
 * path as a metadata column. A search is a KNN over the codes of the filter's partitions (and
 * path range), then an exact re-score of those candidates from the float copy. The code table
 * is an index that can always be dropped and rebuilt from `vector_rows` and `embeddings`;
 * readers use it only when `code_queue` is empty (every change applied). Without the
 * extension — an unsupported platform, or `vectorExtension: false` — or while the codes are
 * out of step, the answer is exact: every vector the filter allows, compared in SQL
 * (`vec_distance_cosine`) when sqlite-vec is loaded, in JS when it is not.
 *
 * The int8 code of a vector is the vector scaled so its largest component is ±127, rounded:
 * a scale per vector, which the cosine distance ignores, so no statistics of the collection
 * are needed and a code never has to be recomputed. sqlite-vec's own `vec_quantize_int8` only
 * takes `'unit'`, a fixed step of 2/255 (docs/design.md §5), which leaves about ±5 steps to a
 * typical component of a 768-dim vector.
 *
 * Two facts about sqlite-vec measured here: a vec0 rowid bound as a JS number is refused
 * ("Only integers are allows for primary key values"), because better-sqlite3 binds every
 * number as REAL (node:sqlite did too): rowids are passed as BigInt; and `k` is at most 4096.
 */
export type VectorBackend = 'sqlite-vec' | 'fallback';

export const MAX_KNN = 4096;

export interface EmbeddingState {
  model: string | null;
  fingerprint: string | null;
  dims: number | null;
  max_tokens: number | null;
  chunker: string | null;
  /** The dimension `chunk_codes` was built for; NULL when it must be rebuilt. */
  vec_dims: number | null;
  /** How many code rows there were when the cells were trained; NULL when there are no cells. */
  cell_rows: number | null;
}

/**
 * How many cells a search reads: a thirty-second of them, at least 16, whatever the number
 * of candidates (a hybrid query's 120 come from the same nearest cells as a page's 40;
 * reading cells in proportion to k tripled its cost at 1M for nothing). Fourfold more each
 * time a search asks again because the cells read held too few rows its filter allows
 * (`widen`, the round).
 */
export function defaultProbes(cells: number, widen: number): number {
  return Math.min(cells, Math.max(16, Math.ceil(cells / 32)) * 4 ** widen);
}

export interface VectorsOptions {
  extension: boolean;
  log: Log;
  /** Cells for a number of code rows (0: none). Tests force cells on a small index. */
  cellsFor?: (rows: number) => number;
  /** Cells a search reads, of `cells`, in its `widen`-th round (0 first). */
  probes?: (cells: number, widen: number) => number;
}

export interface Neighbour {
  /** `embeddings.id`. */
  id: number;
  /** Cosine similarity, in [-1, 1]. */
  similarity: number;
}

/** Which chunks a search may return: only documents in these collections, under this folder. */
export interface VectorFilter {
  /** A JSON array of collection names. */
  collections?: string | undefined;
  /** A folder inside the collections (`notes/2024`): only documents under it, whole segments. */
  pathPrefix?: string | undefined;
}

export interface Candidates {
  /** Best first, by exact similarity (re-scored from the float copy). */
  neighbours: Neighbour[];
  /** True when nothing the filter allows was left out (fewer rows than asked for matched). */
  complete: boolean;
  /** True when every code could be a candidate: no cells, or every cell read. */
  everyCell: boolean;
}

export interface NewVector {
  chunkHash: string;
  vector: Float32Array;
}

/** Version 3's float vec0 copy, dropped by the first writer with the extension. */
const LEGACY_TABLE = 'chunk_vectors';

export class Vectors {
  private loaded: boolean | undefined;
  private readonly readState;
  private readonly insertEmbedding;
  private readonly anyEmbedded;
  private readonly queued;
  /** The int8 copy a KNN reads, and its cells (`codes.ts`). */
  private readonly codes: Codes;

  constructor(
    private readonly db: Sqlite,
    private readonly options: VectorsOptions,
  ) {
    this.readState = db.prepare<[], EmbeddingState>(
      'SELECT model, fingerprint, dims, max_tokens, chunker, vec_dims, cell_rows FROM embedding_state WHERE id = 1',
    );
    this.insertEmbedding = db.prepare<[string, string, number, Buffer, string]>(
      `INSERT OR IGNORE INTO embeddings (model, chunk_hash, dims, vector, embedded_at) VALUES (?, ?, ?, ?, ?)`,
    );
    this.anyEmbedded = db.column<[string], number>('SELECT EXISTS (SELECT 1 FROM embeddings WHERE model = ?)');
    this.queued = db.column<[], number>('SELECT EXISTS (SELECT 1 FROM code_queue)');
    this.codes = new Codes(db, { log: options.log, cellsFor: options.cellsFor });
  }

  /**
   * Loads sqlite-vec into this connection on first use; false (with one warning) when it
   * cannot load or the store was opened with `vectorExtension: false`.
   */
  extension(): boolean {
    if (this.loaded !== undefined) return this.loaded;
    this.loaded = false;
    if (!this.options.extension) return false;
    try {
      loadSqliteVec(this.db);
      this.loaded = true;
    } catch (error) {
      this.options.log.warn(
        `sqlite-vec could not load (${oneLine(error)}); vector search scans the stored vectors instead`,
      );
    }
    return this.loaded;
  }

  state(): EmbeddingState {
    return this.readState.get() as EmbeddingState;
  }

  /** Whether any chunk is embedded with the model `fingerprint`. */
  hasEmbeddings(fingerprint: string): boolean {
    return this.anyEmbedded.get(fingerprint) === 1;
  }

  /**
   * How many chunks the index has and how many of them have a vector from `fingerprint`: the
   * one count both `status()` and `qmd embed`'s report give. A chunk is a distinct
   * text to embed (its hash): notes that share a section — templates, a common footer — share
   * its chunk, which is embedded and stored once. Counting `chunks` rows instead counted it
   * once per note, so `status` said 60/60 where `embed` said 22 of the same index.
   */
  chunkCounts(fingerprint: string | null): { chunks: number; embedded: number } {
    return this.db
      .prepare<[string | null], { chunks: number; embedded: number }>(
        `SELECT (SELECT count(DISTINCT hash) FROM chunks) AS chunks,
                (SELECT count(*) FROM embeddings e WHERE e.model = ?
                   AND EXISTS (SELECT 1 FROM chunks c WHERE c.hash = e.chunk_hash)) AS embedded`,
      )
      .get(fingerprint) as { chunks: number; embedded: number };
  }

  /** The `embeddings` part of `status()`: counts for the model the index is embedded with. */
  status(): StatusReport['embeddings'] {
    const state = this.state();
    const counts = this.chunkCounts(state.fingerprint);
    const embedded = state.fingerprint !== null && this.hasEmbeddings(state.fingerprint);
    return {
      model: state.model,
      fingerprint: state.fingerprint,
      chunks: counts.chunks,
      embeddedChunks: counts.embedded,
      vectorBackend: embedded ? this.backend() : 'none',
    };
  }

  /** Which backend answers queries now: sqlite-vec only when its codes are in step with `vector_rows`. */
  backend(): VectorBackend {
    return this.codesReady(this.state()) ? 'sqlite-vec' : 'fallback';
  }

  private codesReady(state: EmbeddingState): boolean {
    return (
      this.extension() &&
      state.dims !== null &&
      state.vec_dims === state.dims &&
      this.queued.get() === 0 &&
      this.tableExists(CODE_TABLE)
    );
  }

  private tableExists(name: string): boolean {
    return this.db.prepare('SELECT 1 FROM sqlite_schema WHERE name = ?').get(name) !== undefined;
  }

  /**
   * Makes the index belong to `fingerprint` (inside the caller's write transaction): another
   * model's vectors are deleted — their dimension may differ, and a query vector can only be
   * compared with vectors of its own model — and chunks made by another chunker are dropped.
   * The codes are then rebuilt by the next `syncCodes`.
   */
  adopt(model: { spec: string; fingerprint: string; dims: number; maxTokens: number; chunker: string }): void {
    const state = this.state();
    if (state.fingerprint !== model.fingerprint || state.dims !== model.dims) {
      this.db.prepare('DELETE FROM embeddings WHERE model <> ?').run(model.fingerprint);
      this.db.exec('UPDATE embedding_state SET vec_dims = NULL WHERE id = 1');
    }
    if (state.chunker !== model.chunker) this.db.exec('DELETE FROM chunks');
    this.db
      .prepare(
        'UPDATE embedding_state SET model = ?, fingerprint = ?, dims = ?, max_tokens = ?, chunker = ? WHERE id = 1',
      )
      .run(model.spec, model.fingerprint, model.dims, model.maxTokens, model.chunker);
    this.syncCodes();
  }

  /** Deletes the current model's vectors whose chunk is gone (its text changed or left). Returns how many. */
  collectOrphans(fingerprint: string): number {
    const deleted = this.db
      .prepare<[string]>(
        `DELETE FROM embeddings WHERE model = ?
         AND NOT EXISTS (SELECT 1 FROM chunks c WHERE c.hash = embeddings.chunk_hash)`,
      )
      .run(fingerprint).changes;
    this.syncCodes();
    return deleted;
  }

  /** Deletes every vector of `fingerprint` (`embed --force`), in the caller's transaction; their codes follow. */
  forget(fingerprint: string): number {
    const deleted = this.db.prepare<[string]>('DELETE FROM embeddings WHERE model = ?').run(fingerprint).changes;
    this.syncCodes();
    return deleted;
  }

  /**
   * Stores a batch of vectors (inside the caller's write transaction); their codes follow
   * (`syncCodes`). Returns how many were new (another process may have embedded the same
   * chunk meanwhile).
   */
  write(fingerprint: string, dims: number, rows: readonly NewVector[], now: string): number {
    let inserted = 0;
    for (const row of rows) {
      inserted += this.insertEmbedding.run(fingerprint, row.chunkHash, dims, toBlob(row.vector), now).changes;
    }
    this.syncCodes();
    return inserted;
  }

  /**
   * Brings `chunk_codes` in step with `vector_rows` (inside the caller's write transaction):
   * applies the queued changes, or rebuilds the table when it is missing or of another
   * dimension; drops version 3's float copy on the way. Every writer calls it before it
   * commits; without the extension it does nothing, and the queue waits for a writer that
   * has it. True when the codes are usable afterwards.
   */
  syncCodes(): boolean {
    const state = this.state();
    if (state.dims === null) return false;
    const built = state.vec_dims === state.dims && this.tableExists(CODE_TABLE);
    if (!this.extension()) return false;
    if (built && this.queued.get() === 0 && !this.tableExists(LEGACY_TABLE)) {
      // In step; but an index upgraded without training (version 5's step) gets its cells here.
      if (!this.codes.counted && this.codes.outOfStep(state, this.codes.cells(state))) this.codes.rebuild(state.dims);
      return true;
    }
    this.db.exec(`DROP TABLE IF EXISTS ${LEGACY_TABLE}`);
    if (built) {
      const cells = this.codes.cells(state);
      this.codes.drain(cells);
      if (this.codes.outOfStep(state, cells)) this.codes.rebuild(state.dims);
    } else this.codes.rebuild(state.dims);
    return true;
  }

  /**
   * Up to `k` chunks nearest to `query` (normalized) among those `filter` allows, best first
   * by exact similarity. With the codes in step: a KNN over the codes (k rows, in the
   * filter's partitions and path range), then those candidates re-scored from the float copy.
   * Else the exact answer over every vector the filter allows.
   */
  nearest(query: Float32Array, fingerprint: string, k: number, filter: VectorFilter = {}, widen = 0): Candidates {
    const state = this.state();
    if (k <= MAX_KNN && this.codesReady(state)) {
      try {
        const cells = this.codes.cells(state);
        const probes = cells === undefined ? 0 : (this.options.probes ?? defaultProbes)(cells.count, widen);
        return coarse(this.db, query, k, filter, cells, probes);
      } catch (error) {
        // Another process rebuilt the table between the check and the query: answer exactly.
        // Any other failure is a fault here, not a reason to scan every vector.
        if (this.codesReady(this.state())) throw error;
      }
    }
    return exact(this.db, this.extension(), query, fingerprint, k, filter);
  }
}

function oneLine(error: unknown): string {
  return errorMessage(error).replace(/\s+/g, ' ').trim();
}
