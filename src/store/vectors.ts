import { errorMessage } from '../errors.js';
import type { Log } from '../log.js';
import { loadSqliteVec, type Sqlite, type SqlValue } from './sqlite.js';
import type { StatusReport } from './types.js';

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
 * ("Only integers are allows for primary key values"), because node:sqlite binds every
 * number as REAL (better-sqlite3 did too): rowids are passed as BigInt; and `k` is at most 4096.
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
}

export interface NewVector {
  chunkHash: string;
  vector: Float32Array;
}

const CODE_TABLE = 'chunk_codes';
/** Version 3's float vec0 copy, dropped by the first writer with the extension. */
const LEGACY_TABLE = 'chunk_vectors';

export class Vectors {
  private loaded: boolean | undefined;
  private readonly readState;
  private readonly insertEmbedding;
  private readonly anyEmbedded;
  private readonly queued;

  constructor(
    private readonly db: Sqlite,
    private readonly options: { extension: boolean; log: Log },
  ) {
    this.readState = db.prepare<[], EmbeddingState>(
      'SELECT model, fingerprint, dims, max_tokens, chunker, vec_dims FROM embedding_state WHERE id = 1',
    );
    this.insertEmbedding = db.prepare<[string, string, number, Buffer, string]>(
      `INSERT OR IGNORE INTO embeddings (model, chunk_hash, dims, vector, embedded_at) VALUES (?, ?, ?, ?, ?)`,
    );
    this.anyEmbedded = db.column<[string], number>('SELECT EXISTS (SELECT 1 FROM embeddings WHERE model = ?)');
    this.queued = db.column<[], number>('SELECT EXISTS (SELECT 1 FROM code_queue)');
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
    if (built && this.queued.get() === 0 && !this.tableExists(LEGACY_TABLE)) return this.extension();
    if (!this.extension()) return false;
    this.db.exec(`DROP TABLE IF EXISTS ${LEGACY_TABLE}`);
    if (built) this.drainQueue();
    else this.rebuildCodes(state.dims);
    return true;
  }

  private rebuildCodes(dims: number): void {
    this.db.exec(`DROP TABLE IF EXISTS ${CODE_TABLE}`);
    this.db.exec(
      `CREATE VIRTUAL TABLE ${CODE_TABLE} USING vec0(collection TEXT PARTITION KEY, code int8[${dims}] distance_metric=cosine, path TEXT)`,
    );
    const insert = this.insertCode();
    const rows = this.db.prepare<[], CodeSource>(
      `SELECT r.id, r.collection, r.path, e.vector FROM vector_rows r JOIN embeddings e ON e.id = r.embedding_id
       ORDER BY r.collection, r.id`,
    );
    for (const row of rows.iterate())
      insert.run(BigInt(row.id), row.collection, toCode(fromBlob(row.vector)), row.path);
    this.db.exec('DELETE FROM code_queue');
    this.db.prepare('UPDATE embedding_state SET vec_dims = ? WHERE id = 1').run(dims);
  }

  private drainQueue(): void {
    const insert = this.insertCode();
    const remove = this.db.prepare<[bigint]>(`DELETE FROM ${CODE_TABLE} WHERE rowid = ?`);
    const source = this.db.prepare<[number], CodeSource>(
      `SELECT r.id, r.collection, r.path, e.vector FROM vector_rows r JOIN embeddings e ON e.id = r.embedding_id
       WHERE r.id = ?`,
    );
    // Streamed, not loaded: a big `qmd update` may queue a row per chunk of every note it moved.
    for (const { row_id: id } of this.db
      .prepare<[], { row_id: number }>('SELECT row_id FROM code_queue ORDER BY row_id')
      .iterate()) {
      // An id is queued when its row was added or deleted (ids can be reused): drop the old code, add the new.
      remove.run(BigInt(id));
      const row = source.get(id);
      if (row !== undefined) insert.run(BigInt(row.id), row.collection, toCode(fromBlob(row.vector)), row.path);
    }
    this.db.exec('DELETE FROM code_queue');
  }

  private insertCode() {
    return this.db.prepare<[bigint, string, Buffer, string]>(
      `INSERT INTO ${CODE_TABLE} (rowid, collection, code, path) VALUES (?, ?, vec_int8(?), ?)`,
    );
  }

  /**
   * Up to `k` chunks nearest to `query` (normalized) among those `filter` allows, best first
   * by exact similarity. With the codes in step: a KNN over the codes (k rows, in the
   * filter's partitions and path range), then those candidates re-scored from the float copy.
   * Else the exact answer over every vector the filter allows.
   */
  nearest(query: Float32Array, fingerprint: string, k: number, filter: VectorFilter = {}): Candidates {
    if (k <= MAX_KNN && this.codesReady(this.state())) {
      try {
        return this.coarse(query, k, filter);
      } catch {
        // Another process rebuilt the table between the check and the query.
      }
    }
    return this.exact(query, fingerprint, k, filter);
  }

  private coarse(query: Float32Array, k: number, filter: VectorFilter): Candidates {
    const range = prefixRange(filter.pathPrefix);
    const where = [
      'code MATCH vec_int8(@code) AND k = @k',
      filter.collections === undefined ? '' : 'AND collection IN (SELECT value FROM json_each(@collections))',
      range === undefined ? '' : 'AND path >= @low AND path < @high',
    ].join(' ');
    const rows = this.db
      .column<Record<string, SqlValue>, number>(
        `SELECT r.embedding_id FROM (SELECT rowid FROM ${CODE_TABLE} WHERE ${where}) knn
         JOIN vector_rows r ON r.id = knn.rowid`,
      )
      .all({ code: toCode(query), k, ...filterParams(filter.collections, range) });
    return { neighbours: this.rescore(query, [...new Set(rows)]), complete: rows.length < k };
  }

  /** Exact similarities of the candidates, from the float copy, best first. */
  private rescore(query: Float32Array, ids: number[]): Neighbour[] {
    if (ids.length === 0) return [];
    const rows = this.db
      .prepare<[string], { id: number; vector: Uint8Array }>(
        'SELECT id, vector FROM embeddings WHERE id IN (SELECT value FROM json_each(?))',
      )
      .all(JSON.stringify(ids));
    return rank(rows.map((row) => ({ id: row.id, similarity: dot(query, row.vector) })));
  }

  /**
   * The exact answer: every vector of the model the filter allows. In SQL when sqlite-vec is
   * loaded; in JS only when it cannot be (the platform has no build of it, or
   * `vectorExtension: false`).
   */
  private exact(query: Float32Array, fingerprint: string, k: number, filter: VectorFilter): Candidates {
    const range = prefixRange(filter.pathPrefix);
    const allowed = [
      filter.collections === undefined ? '' : 'AND r.collection IN (SELECT value FROM json_each(@collections))',
      range === undefined ? '' : 'AND r.path >= @low AND r.path < @high',
    ].join(' ');
    const params = { model: fingerprint, ...filterParams(filter.collections, range) };
    const from = `FROM embeddings e WHERE e.model = @model
      AND e.id IN (SELECT r.embedding_id FROM vector_rows r WHERE 1 ${allowed})`;
    const limit = Number.isFinite(k) ? k : -1;
    if (this.extension()) {
      const neighbours = this.db
        .prepare<Record<string, SqlValue>, Neighbour>(
          `SELECT e.id, 1 - vec_distance_cosine(e.vector, @query) AS similarity ${from}
           ORDER BY similarity DESC, e.id LIMIT @limit`,
        )
        .all({ ...params, query: toBlob(query), limit });
      return { neighbours, complete: limit < 0 || neighbours.length < limit };
    }
    const found: Neighbour[] = [];
    for (const row of this.db
      .prepare<Record<string, SqlValue>, { id: number; vector: Uint8Array }>(`SELECT e.id, e.vector ${from}`)
      .iterate(params)) {
      found.push({ id: row.id, similarity: dot(query, row.vector) });
    }
    const neighbours = rank(found);
    return { neighbours: limit < 0 ? neighbours : neighbours.slice(0, limit), complete: true };
  }
}

interface CodeSource {
  id: number;
  collection: string;
  path: string;
  vector: Uint8Array;
}

/**
 * The rows under a folder, as a range on `path` (what vec0 accepts on a metadata column; it
 * refuses LIKE and GLOB): `notes/2024` is `path >= 'notes/2024/' AND path < 'notes/20240'`
 * ('0' follows '/'), so `notes/2024x/a.md` is not under it. Undefined for no folder.
 */
export function prefixRange(prefix: string | undefined): { low: string; high: string } | undefined {
  const folder = prefix?.replace(/^\/+|\/+$/g, '');
  if (folder === undefined || folder === '') return undefined;
  return { low: `${folder}/`, high: `${folder}0` };
}

function filterParams(
  collections: string | undefined,
  range: { low: string; high: string } | undefined,
): Record<string, SqlValue> {
  return { ...(collections !== undefined && { collections }), ...range };
}

function rank(neighbours: Neighbour[]): Neighbour[] {
  return neighbours.sort((a, b) => b.similarity - a.similarity || a.id - b.id);
}

/** The int8 code of `vector`: scaled so its largest component is ±127, then rounded (see above). */
export function toCode(vector: Float32Array): Buffer {
  let max = 0;
  for (const x of vector) max = Math.max(max, Math.abs(x));
  const scale = max === 0 ? 0 : 127 / max;
  const code = new Int8Array(vector.length);
  for (let i = 0; i < vector.length; i++) code[i] = Math.round((vector[i] as number) * scale);
  return Buffer.from(code.buffer);
}

/** `vector` scaled to length 1 (a zero vector stays zero). */
export function normalize(vector: Float32Array): Float32Array {
  let sum = 0;
  for (const x of vector) sum += x * x;
  const norm = Math.sqrt(sum);
  if (norm === 0) return Float32Array.from(vector);
  return vector.map((x) => x / norm);
}

export function toBlob(vector: Float32Array): Buffer {
  return Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength);
}

export function fromBlob(blob: Uint8Array): Float32Array {
  // A view needs 4-byte alignment; SQLite's BLOBs do not promise it (node:sqlite's were
  // measured at offset 0, but nothing says so).
  if (blob.byteOffset % 4 === 0) return new Float32Array(blob.buffer, blob.byteOffset, blob.byteLength / 4);
  return new Float32Array(blob.buffer.slice(blob.byteOffset, blob.byteOffset + blob.byteLength));
}

function dot(query: Float32Array, blob: Uint8Array): number {
  const vector = fromBlob(blob);
  const n = Math.min(query.length, vector.length);
  let sum = 0;
  for (let i = 0; i < n; i++) sum += (query[i] as number) * (vector[i] as number);
  return sum;
}

function oneLine(error: unknown): string {
  return errorMessage(error).replace(/\s+/g, ' ').trim();
}
