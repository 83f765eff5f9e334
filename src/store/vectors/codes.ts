import type { Log } from '../../log.js';
import type { Sqlite } from '../sqlite.js';
import { Cells } from './cells.js';
import { codePath, fromBlob, toBlob, toCode } from './encoding.js';
import type { EmbeddingState } from './vectors.js';

/** The int8 codes, one row per `vector_rows` row (rowid = its id), partitioned by cell and collection. */
export const CODE_TABLE = 'chunk_codes';
/** vec0's own table of chunks, one row per chunk of a partition; see `indexPartitions`. */
const CODE_CHUNKS = `${CODE_TABLE}_chunks`;

/** Rows coded per page when the codes are rebuilt or the queue drained (each page read, then written). */
const CODE_PAGE = 512;

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

export interface CodesOptions {
  log: Log;
  /** Cells for a number of code rows (0: none). Tests force cells on a small index. */
  cellsFor?: ((rows: number) => number) | undefined;
}

interface CodeSource {
  id: number;
  collection: string;
  path: string;
  vector: Uint8Array;
}

/**
 * `chunk_codes`, the int8 copy of every vector row that a KNN reads, and the cells it is
 * split into (docs/design.md §8.3, §8.6): rebuilt from `vector_rows` and `embeddings` when it
 * is missing, of another dimension or its cells no longer suit the rows, else brought in step
 * by draining `code_queue`. Always inside the caller's write transaction (`Vectors.syncCodes`).
 */
export class Codes {
  private loadedCells: { key: string; cells: Cells | undefined } | undefined;
  private rows: number | undefined;

  constructor(
    private readonly db: Sqlite,
    private readonly options: CodesOptions,
  ) {}

  /** Whether this connection has counted the code rows since it last rebuilt them. */
  get counted(): boolean {
    return this.rows !== undefined;
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
  outOfStep(state: EmbeddingState, cells: Cells | undefined): boolean {
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
  rebuild(dims: number): void {
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
  cells(state: EmbeddingState): Cells | undefined {
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

  drain(cells: Cells | undefined): void {
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
}
