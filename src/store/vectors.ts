import { errorMessage } from '../errors.js';
import type { Log } from '../log.js';
import { loadSqliteVec, type Sqlite } from './sqlite.js';
import type { StatusReport } from './types.js';

/**
 * Where the vectors live and how the nearest ones are found.
 *
 * `embeddings.vector` is the source of truth. With sqlite-vec 0.1.9 loaded, a `vec0` table
 * (`chunk_vectors`, cosine distance, rowid = `embeddings.id`) answers KNN queries; it is an
 * index that can always be dropped and rebuilt from `embeddings` (see `schema-embeddings.ts`
 * for how readers know it is in step). Without the extension — an unsupported platform, or
 * `vectorExtension: false` — the same answers come from a scan of the BLOBs in JS: vectors are
 * stored L2-normalized, so cosine similarity is a dot product.
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
  changes: number;
  vec_dims: number | null;
  vec_synced: number | null;
}

export interface Neighbour {
  /** `embeddings.id`. */
  id: number;
  /** Cosine similarity, in [-1, 1]. */
  similarity: number;
}

export interface NewVector {
  chunkHash: string;
  vector: Float32Array;
}

const VEC_TABLE = 'chunk_vectors';

export class Vectors {
  private loaded: boolean | undefined;
  private readonly readState;
  private readonly insertEmbedding;
  private readonly anyEmbedded;

  constructor(
    private readonly db: Sqlite,
    private readonly options: { extension: boolean; log: Log },
  ) {
    this.readState = db.prepare<[], EmbeddingState>(
      'SELECT model, fingerprint, dims, max_tokens, chunker, changes, vec_dims, vec_synced FROM embedding_state WHERE id = 1',
    );
    this.insertEmbedding = db.prepare<[string, string, number, Buffer, string]>(
      `INSERT OR IGNORE INTO embeddings (model, chunk_hash, dims, vector, embedded_at) VALUES (?, ?, ?, ?, ?)`,
    );
    this.anyEmbedded = db.column<[string], number>('SELECT EXISTS (SELECT 1 FROM embeddings WHERE model = ?)');
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

  /** Which backend answers queries now: sqlite-vec only when its table is in step with `embeddings`. */
  backend(): VectorBackend {
    return this.vecReady(this.state()) ? 'sqlite-vec' : 'fallback';
  }

  private vecReady(state: EmbeddingState): boolean {
    return (
      this.extension() &&
      state.dims !== null &&
      state.vec_dims === state.dims &&
      state.vec_synced === state.changes &&
      this.vecTableExists()
    );
  }

  private vecTableExists(): boolean {
    return this.db.prepare('SELECT 1 FROM sqlite_schema WHERE name = ?').get(VEC_TABLE) !== undefined;
  }

  /**
   * Makes the index belong to `fingerprint` (inside the caller's write transaction): another
   * model's vectors are deleted — their dimension may differ, and a query vector can only be
   * compared with vectors of its own model — and chunks made by another chunker are dropped.
   */
  adopt(model: { spec: string; fingerprint: string; dims: number; maxTokens: number; chunker: string }): void {
    const state = this.state();
    if (state.fingerprint !== model.fingerprint || state.dims !== model.dims) {
      if (this.extension()) this.dropVecTable();
      this.db.prepare('DELETE FROM embeddings WHERE model <> ?').run(model.fingerprint);
    }
    if (state.chunker !== model.chunker) this.db.exec('DELETE FROM chunks');
    this.db
      .prepare(
        'UPDATE embedding_state SET model = ?, fingerprint = ?, dims = ?, max_tokens = ?, chunker = ? WHERE id = 1',
      )
      .run(model.spec, model.fingerprint, model.dims, model.maxTokens, model.chunker);
  }

  /** Deletes the current model's vectors whose chunk is gone (its text changed or left). Returns how many. */
  collectOrphans(fingerprint: string): number {
    const orphans = this.db
      .column<[string], number>(
        `SELECT id FROM embeddings e WHERE model = ?
         AND NOT EXISTS (SELECT 1 FROM chunks c WHERE c.hash = e.chunk_hash)`,
      )
      .all(fingerprint);
    if (orphans.length === 0) return 0;
    const vec = this.vecReady(this.state());
    const deleteVector = vec ? this.db.prepare(`DELETE FROM ${VEC_TABLE} WHERE rowid = ?`) : undefined;
    const deleteEmbedding = this.db.prepare('DELETE FROM embeddings WHERE id = ?');
    for (const id of orphans) {
      deleteVector?.run(BigInt(id));
      deleteEmbedding.run(id);
    }
    if (vec) this.markSynced();
    return orphans.length;
  }

  /**
   * Stores a batch of vectors (inside the caller's write transaction), in the vec0 table too
   * when the extension is loaded, rebuilding that table first if it is not in step. Returns
   * how many were new (another process may have embedded the same chunk meanwhile).
   */
  write(fingerprint: string, dims: number, rows: readonly NewVector[], now: string): number {
    const vec = this.extension() && this.ensureVecTable(dims, fingerprint);
    const insertVector = vec
      ? this.db.prepare<[bigint, Buffer]>(`INSERT INTO ${VEC_TABLE} (rowid, embedding) VALUES (?, ?)`)
      : undefined;
    let inserted = 0;
    for (const row of rows) {
      const blob = toBlob(row.vector);
      const info = this.insertEmbedding.run(fingerprint, row.chunkHash, dims, blob, now);
      if (info.changes === 0) continue;
      inserted++;
      insertVector?.run(BigInt(info.lastInsertRowid), blob);
    }
    if (vec) this.markSynced();
    return inserted;
  }

  /**
   * Rebuilds the vec0 table from `embeddings` when it is missing, of another dimension or
   * out of step (inside the caller's write transaction). True when it is usable afterwards.
   */
  ensureVecTable(dims: number, fingerprint: string): boolean {
    if (!this.extension()) return false;
    const state = this.state();
    if (state.vec_dims === dims && state.vec_synced === state.changes && this.vecTableExists()) return true;
    this.dropVecTable();
    this.db.exec(`CREATE VIRTUAL TABLE ${VEC_TABLE} USING vec0(embedding float[${dims}] distance_metric=cosine)`);
    this.db
      .prepare(
        `INSERT INTO ${VEC_TABLE} (rowid, embedding) SELECT id, vector FROM embeddings WHERE model = ? AND dims = ?`,
      )
      .run(fingerprint, dims);
    this.db.prepare('UPDATE embedding_state SET vec_dims = ? WHERE id = 1').run(dims);
    this.markSynced();
    return true;
  }

  private dropVecTable(): void {
    this.db.exec(`DROP TABLE IF EXISTS ${VEC_TABLE}`);
    this.db.exec('UPDATE embedding_state SET vec_dims = NULL, vec_synced = NULL WHERE id = 1');
  }

  private markSynced(): void {
    this.db.exec('UPDATE embedding_state SET vec_synced = changes WHERE id = 1');
  }

  /**
   * The `k` chunks nearest to `query` (normalized), best first. sqlite-vec when its table is
   * in step, else the scan; `collections` (a JSON array) restricts the scan to chunks of
   * documents in them (the KNN cannot filter: the caller filters and falls back, see
   * `VectorSearcher`). `k = Infinity` ranks everything, by scan.
   */
  nearest(query: Float32Array, fingerprint: string, k: number, collections?: string): Neighbour[] {
    if (k <= MAX_KNN && collections === undefined && this.vecReady(this.state())) {
      try {
        const rows = this.db
          .prepare<[Buffer, number], { rowid: number; distance: number }>(
            `SELECT rowid, distance FROM ${VEC_TABLE} WHERE embedding MATCH ? AND k = ?`,
          )
          .all(toBlob(query), k);
        return rows.map((row) => ({ id: row.rowid, similarity: 1 - row.distance }));
      } catch {
        // A `qmd embed` in another process rebuilt the table between the check and the query.
      }
    }
    return this.scan(query, fingerprint, k, collections);
  }

  /** The brute-force answer: every vector of the model (that still has a chunk) compared in JS. */
  scan(query: Float32Array, fingerprint: string, k: number, collections?: string): Neighbour[] {
    const filter =
      collections === undefined
        ? ''
        : `AND EXISTS (SELECT 1 FROM documents d WHERE d.hash = c.content_hash
             AND d.collection IN (SELECT value FROM json_each(@collections)))`;
    const statement = this.db.prepare<{ model: string; collections?: string }, { id: number; vector: Uint8Array }>(
      `SELECT e.id, e.vector FROM embeddings e WHERE e.model = @model
       AND EXISTS (SELECT 1 FROM chunks c WHERE c.hash = e.chunk_hash ${filter})`,
    );
    const found: Neighbour[] = [];
    for (const row of statement.iterate(
      collections === undefined ? { model: fingerprint } : { model: fingerprint, collections },
    )) {
      found.push({ id: row.id, similarity: dot(query, row.vector) });
    }
    found.sort((a, b) => b.similarity - a.similarity || a.id - b.id);
    return Number.isFinite(k) ? found.slice(0, k) : found;
  }
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
