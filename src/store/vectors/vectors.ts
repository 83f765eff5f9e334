import { errorMessage } from '../../errors.js';
import type { Log } from '../../log.js';
import { loadSqliteVec, type Sqlite, type SqlValue } from '../sqlite.js';
import type { StatusReport } from '../types.js';
import { Cells } from './cells.js';

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

/** Rows coded per page when the codes are rebuilt or the queue drained (each page read, then written). */
const CODE_PAGE = 512;

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
 * When the codes are split into cells (an inverted file, docs/design.md §8.3), and into how
 * many: none below `MIN_ROWS_FOR_CELLS` code rows (a KNN over every code is fast enough
 * there), else about √rows, a power of two. The cells are trained again when the rows call
 * for more of them (at 131,072 and 524,288 rows…: every fourfold growth, so all the trainings
 * of a growing index re-code fewer rows than it ends with), or for a quarter as many (the
 * slack keeps an index that hovers at a boundary from training at every write).
 */
export const MIN_ROWS_FOR_CELLS = 65_536;
const MAX_CELLS = 4096;
/** Sample points per cell the k-means is trained on, and at most (150 MB of floats at 768 dims). */
const SAMPLE_PER_CELL = 32;
const MAX_SAMPLE = 50_000;

export function defaultCellsFor(rows: number): number {
  if (rows < MIN_ROWS_FOR_CELLS) return 0;
  return Math.min(MAX_CELLS, 2 ** Math.round(Math.log2(Math.sqrt(rows))));
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

const CODE_TABLE = 'chunk_codes';
/** vec0's own table of chunks, one row per chunk of a partition; see `indexPartitions`. */
const CODE_CHUNKS = `${CODE_TABLE}_chunks`;
/** Version 3's float vec0 copy, dropped by the first writer with the extension. */
const LEGACY_TABLE = 'chunk_vectors';

export class Vectors {
  private loaded: boolean | undefined;
  private readonly readState;
  private readonly insertEmbedding;
  private readonly anyEmbedded;
  private readonly queued;
  private loadedCells: { key: string; cells: Cells | undefined } | undefined;
  private rows: number | undefined;

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
      if (this.rows === undefined && this.cellsOutOfStep(state, this.cells(state))) this.rebuildCodes(state.dims);
      return true;
    }
    this.db.exec(`DROP TABLE IF EXISTS ${LEGACY_TABLE}`);
    if (built) {
      const cells = this.cells(state);
      this.drainQueue(cells);
      if (this.cellsOutOfStep(state, cells)) this.rebuildCodes(state.dims);
    } else this.rebuildCodes(state.dims);
    return true;
  }

  /**
   * The code rows, counted once and then kept up to date by this connection's own drains: a
   * count(*) of a million rows at every `write` (a batch of 32 chunks while embedding) would
   * add up. Only the retraining rule reads it; another process's writes are seen at the next
   * count (the next command).
   */
  private rowCount(): number {
    this.rows ??= this.db.value('SELECT count(*) FROM vector_rows') as number;
    return this.rows;
  }

  /** Whether the cells should be trained again: their number no longer suits the rows. */
  private cellsOutOfStep(state: EmbeddingState, cells: Cells | undefined): boolean {
    const rows = this.rowCount();
    if (cells === undefined || state.cell_rows === null) return this.cellsFor(rows) > 1;
    return this.cellsFor(rows) > cells.count || this.cellsFor(rows * 4) < cells.count;
  }

  private cellsFor(rows: number): number {
    return (this.options.cellsFor ?? defaultCellsFor)(rows);
  }

  /**
   * Rebuilds `chunk_codes` from `vector_rows`: trains the cells first when the rows call for
   * them (a sample read in one pass, every `rows / sample`-th row), then codes every row into
   * its cell. vec0 allocates `chunk_size` slots per partition (a cell and a collection) at
   * once, so the chunk size follows the rows a partition is expected to hold.
   */
  private rebuildCodes(dims: number): void {
    this.rows = undefined;
    const rows = this.rowCount();
    const count = this.cellsFor(rows);
    if (count > 1) this.options.log.line(`Training the vector index's ${count} cells on ${rows} vectors…`);
    const cells = count > 1 ? this.trainCells(dims, rows, count) : undefined;
    this.db.exec('DELETE FROM vector_cells');
    if (cells !== undefined) {
      const insertCell = this.db.prepare<[number, number, Buffer]>(
        'INSERT INTO vector_cells (id, grp, centroid) VALUES (?, ?, ?)',
      );
      for (let c = 0; c < cells.count; c++) {
        insertCell.run(c, cells.groupOf[c] as number, toBlob(cells.centroids.subarray(c * dims, (c + 1) * dims)));
      }
    }
    const collections = this.db.value('SELECT count(DISTINCT collection) FROM vector_rows') as number;
    const perPartition = rows / (Math.max(1, cells?.count ?? 1) * Math.max(1, collections));
    const chunkSize = Math.min(1024, Math.max(16, 2 ** Math.ceil(Math.log2(Math.max(1, perPartition)))));
    this.db.exec(`DROP TABLE IF EXISTS ${CODE_TABLE}`);
    this.db.exec(
      `CREATE VIRTUAL TABLE ${CODE_TABLE} USING vec0(cell INTEGER PARTITION KEY, collection TEXT PARTITION KEY,
         code int8[${dims}] distance_metric=cosine, path TEXT, chunk_size=${chunkSize})`,
    );
    this.indexPartitions();
    const insert = this.insertCode();
    // A collection at a time, a page of rows at a time: the connection cannot write while a
    // read of it is unfinished (better-sqlite3 refuses, docs/design.md §5).
    const page = this.db.prepare<[string, number, number], CodeSource>(
      `SELECT r.id, r.collection, r.path, e.vector FROM vector_rows r JOIN embeddings e ON e.id = r.embedding_id
       WHERE r.collection = ? AND r.id > ? ORDER BY r.id LIMIT ?`,
    );
    for (const collection of this.db
      .column<[], string>('SELECT DISTINCT collection FROM vector_rows ORDER BY collection')
      .all()) {
      for (let after = 0; ; ) {
        const rows = page.all(collection, after, CODE_PAGE);
        for (const row of rows) insert(row, cells);
        const last = rows.at(-1);
        if (last === undefined || rows.length < CODE_PAGE) break;
        after = last.id;
      }
    }
    this.db.exec('DELETE FROM code_queue');
    this.db
      .prepare('UPDATE embedding_state SET vec_dims = ?, cell_rows = ? WHERE id = 1')
      .run(dims, cells === undefined ? null : rows);
    this.loadedCells = undefined;
  }

  private trainCells(dims: number, rows: number, count: number): Cells {
    const wanted = Math.min(rows, count * SAMPLE_PER_CELL, MAX_SAMPLE);
    const step = rows / wanted;
    const sample = new Float32Array(wanted * dims);
    // The ids first, then only the sampled vectors: reading every BLOB would read the whole
    // float copy (3 GB at 1M × 768) for a sample of one in twenty.
    const vector = this.db.column<[number], Uint8Array>('SELECT vector FROM embeddings WHERE id = ?');
    let seen = 0;
    let taken = 0;
    for (const { id } of this.db
      .prepare<[], { id: number }>('SELECT embedding_id AS id FROM vector_rows ORDER BY id')
      .iterate()) {
      if (taken < wanted && seen >= Math.floor(taken * step)) {
        const blob = vector.get(id);
        if (blob !== undefined) sample.set(fromBlob(blob), dims * taken++);
      }
      seen++;
    }
    return Cells.train(sample.subarray(0, taken * dims), dims, count);
  }

  /**
   * vec0 (0.1.9) finds a partition's chunks by reading its chunk table without an index:
   * about 2 ms a partition at 200k rows in 2,048 partitions, paid once per value of an `IN`
   * (SQLite runs the KNN once per value). An index of our own on the partition columns makes
   * it 0.13 ms (bench/experiments/vec/results-ivf.md). Skipped if a later sqlite-vec names the
   * columns otherwise: searches are then only slower.
   */
  private indexPartitions(): void {
    const columns = new Set(
      this.db
        .prepare<[string], { name: string }>('SELECT name FROM pragma_table_info(?)')
        .all(CODE_CHUNKS)
        .map((c) => c.name),
    );
    if (columns.has('partition00') && columns.has('partition01')) {
      this.db.exec(`CREATE INDEX ${CODE_CHUNKS}_by_partition ON ${CODE_CHUNKS}(partition00, partition01)`);
    }
  }

  /** The trained cells, read once per training (another process may train them again). */
  private cells(state: EmbeddingState): Cells | undefined {
    const key = `${state.vec_dims}:${state.cell_rows}`;
    if (this.loadedCells?.key === key) return this.loadedCells.cells;
    let cells: Cells | undefined;
    if (state.cell_rows !== null && state.vec_dims !== null) {
      const dims = state.vec_dims;
      const rows = this.db
        .prepare<[], { grp: number; centroid: Uint8Array }>('SELECT grp, centroid FROM vector_cells ORDER BY id')
        .all();
      if (rows.length > 1) {
        const centroids = new Float32Array(rows.length * dims);
        for (const [c, row] of rows.entries()) centroids.set(fromBlob(row.centroid), c * dims);
        cells = new Cells(
          dims,
          centroids,
          Int32Array.from(rows, (row) => row.grp),
        );
      }
    }
    this.loadedCells = { key, cells };
    return cells;
  }

  private drainQueue(cells: Cells | undefined): void {
    const insert = this.insertCode();
    const remove = this.db.prepare<[bigint]>(`DELETE FROM ${CODE_TABLE} WHERE rowid = ?`);
    const source = this.db.prepare<[number], CodeSource>(
      `SELECT r.id, r.collection, r.path, e.vector FROM vector_rows r JOIN embeddings e ON e.id = r.embedding_id
       WHERE r.id = ?`,
    );
    // A page at a time, not loaded: a big `qmd update` may queue a row per chunk of every note
    // it moved; and not streamed, as the connection cannot write while a read of it is unfinished.
    const queued = this.db.column<[number, number], number>(
      'SELECT row_id FROM code_queue WHERE row_id > ? ORDER BY row_id LIMIT ?',
    );
    for (let after = 0; ; ) {
      const ids = queued.all(after, CODE_PAGE);
      for (const id of ids) {
        // An id is queued when its row was added or deleted (ids can be reused): drop the old code, add the new.
        const removed = remove.run(BigInt(id)).changes;
        const row = source.get(id);
        if (this.rows !== undefined) this.rows += (row === undefined ? 0 : 1) - removed;
        if (row !== undefined) insert(row, cells);
      }
      const last = ids.at(-1);
      if (last === undefined || ids.length < CODE_PAGE) break;
      after = last;
    }
    this.db.exec('DELETE FROM code_queue');
  }

  /** A writer of one row's code: into its vector's cell (0 without cells), its path as stored (`codePath`). */
  private insertCode(): (row: CodeSource, cells: Cells | undefined) => void {
    const statement = this.db.prepare<[bigint, bigint, string, Buffer, string]>(
      `INSERT INTO ${CODE_TABLE} (rowid, cell, collection, code, path) VALUES (?, ?, ?, vec_int8(?), ?)`,
    );
    return (row, cells) => {
      const vector = fromBlob(row.vector);
      statement.run(
        BigInt(row.id),
        BigInt(cells?.assign(vector) ?? 0),
        row.collection,
        toCode(vector),
        codePath(row.path),
      );
    };
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
        return this.coarse(query, k, filter, this.cells(state), widen);
      } catch (error) {
        // Another process rebuilt the table between the check and the query: answer exactly.
        // Any other failure is a fault here, not a reason to scan every vector.
        if (this.codesReady(this.state())) throw error;
      }
    }
    return this.exact(query, fingerprint, k, filter);
  }

  /**
   * The KNN over the codes. With cells, only those of the `probes` cells nearest to the query
   * are read. SQLite runs a KNN once per value of an `IN` on a partition key (each returns up
   * to k rows): the best k per collection of the filter are kept, by code distance, whatever
   * the cells read.
   */
  private coarse(
    query: Float32Array,
    k: number,
    filter: VectorFilter,
    cells: Cells | undefined,
    widen: number,
  ): Candidates {
    const range = prefixRange(filter.pathPrefix);
    const probes = cells === undefined ? 0 : (this.options.probes ?? defaultProbes)(cells.count, widen);
    const where = [
      'code MATCH vec_int8(@code) AND k = @k',
      cells === undefined ? '' : 'AND cell IN (SELECT value FROM json_each(@cells))',
      filter.collections === undefined ? '' : 'AND collection IN (SELECT value FROM json_each(@collections))',
      range === undefined ? '' : 'AND path >= @low AND path < @high',
    ].join(' ');
    // MATERIALIZED: vec0 refuses a LIMIT beside its own `k` (flattened, the outer one would be).
    const rows = this.db
      .column<Record<string, SqlValue>, number>(
        `WITH knn AS MATERIALIZED (SELECT rowid, distance FROM ${CODE_TABLE} WHERE ${where})
         SELECT r.embedding_id FROM (SELECT rowid FROM knn ORDER BY distance LIMIT @limit) best
         JOIN vector_rows r ON r.id = best.rowid`,
      )
      .all({
        code: toCode(query),
        k,
        limit: k * Math.max(1, collectionCount(filter.collections)),
        ...(cells !== undefined && { cells: JSON.stringify(cells.nearest(query, probes)) }),
        ...filterParams(filter.collections, range),
      });
    const everyCell = cells === undefined || probes >= cells.count;
    return { neighbours: this.rescore(query, [...new Set(rows)]), complete: everyCell && rows.length < k, everyCell };
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
      return { neighbours, complete: limit < 0 || neighbours.length < limit, everyCell: true };
    }
    const found: Neighbour[] = [];
    for (const row of this.db
      .prepare<Record<string, SqlValue>, { id: number; vector: Uint8Array }>(`SELECT e.id, e.vector ${from}`)
      .iterate(params)) {
      found.push({ id: row.id, similarity: dot(query, row.vector) });
    }
    const neighbours = rank(found);
    return { neighbours: limit < 0 ? neighbours : neighbours.slice(0, limit), complete: true, everyCell: true };
  }
}

interface CodeSource {
  id: number;
  collection: string;
  path: string;
  vector: Uint8Array;
}

/**
 * The path as `chunk_codes` stores it. sqlite-vec 0.1.9 fails any comparison on a TEXT
 * metadata value of exactly 12 bytes ("Could not filter metadata fields": 12 bytes is the
 * prefix it keeps inline; 11 and 13 work, bench/experiments/vec/results-ivf.md), so one byte
 * 0x01 is appended to such a path. That keeps every folder range's answer (0x01 sorts below
 * every character a path or a range bound holds).
 */
export function codePath(path: string): string {
  return Buffer.byteLength(path) === 12 ? `${path}\u0001` : path;
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

function collectionCount(collections: string | undefined): number {
  return collections === undefined ? 0 : (JSON.parse(collections) as unknown[]).length;
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
  // A view needs 4-byte alignment; SQLite's BLOBs do not promise it (better-sqlite3's Buffers were
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
