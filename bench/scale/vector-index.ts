/**
 * Figures of a qmd index's vector index, measured in process on the index file (no MCP):
 * recall@10 of the coarse pass over the int8 codes plus the exact re-score against exact
 * search over the float copy (`embeddings.vector`, brute force in JS here), without and with
 * a collection filter; the latency of `VectorSearcher.search` (KNN, re-score, documents) for
 * a page of 10; and the disk each part takes (SQLite's `dbstat`).
 *
 * Recall counts a returned chunk as right when its exact similarity reaches the exact 10th
 * best's (so a tie at the 10th place is no miss). C is what a page of 10 asks for (40).
 */
import { silentLog } from '../../src/log.js';
import { VectorSearcher } from '../../src/search/vector-search.js';
import { loadSqliteVec, Sqlite } from '../../src/store/sqlite.js';
import { fromBlob, Vectors } from '../../src/store/vectors/vectors.js';
import { quantile } from '../lib/stats.js';

export interface VectorIndexFigures {
  vectors: number;
  codeRows: number;
  /** Bytes on disk of `embeddings` (the float copy, with its key index), per vector. */
  floatBytesPerVector: number;
  /** Bytes on disk of `chunk_codes` (all its shadow tables) and `vector_rows`, per code row. */
  codeBytesPerRow: number;
  fileBytes: number;
  recall: { all: number; filtered: number };
  searchMs: { all: number[]; filtered: number[] };
  backend: string;
}

const CANDIDATES = 40;

export function measureVectorIndex(
  file: string,
  queries: Float32Array[],
  collection: string,
  probes?: (cells: number, widen: number) => number,
): VectorIndexFigures {
  const db = new Sqlite(file, { allowExtension: true, readOnly: true });
  try {
    loadSqliteVec(db);
    const vectors = new Vectors(db, { extension: true, log: silentLog, ...(probes && { probes }) });
    const searcher = new VectorSearcher(db, vectors);
    const fingerprint = vectors.state().fingerprint as string;
    const filter = JSON.stringify([collection]);

    const bytes = new Map(
      db
        .prepare<[], { name: string; bytes: number }>('SELECT name, sum(pgsize) AS bytes FROM dbstat GROUP BY name')
        .all()
        .map((row) => [row.name, row.bytes]),
    );
    const sum = (match: (name: string) => boolean) =>
      [...bytes.entries()].filter(([name]) => match(name)).reduce((total, [, b]) => total + b, 0);
    const count = db.value<number>('SELECT count(*) FROM embeddings') ?? 0;
    const codeRows = db.value<number>('SELECT count(*) FROM vector_rows') ?? 0;

    // Exact answers: one pass over the float copy for every query at once.
    const truth = exactTopTen(db, queries, collection);
    const searchMs = { all: [] as number[], filtered: [] as number[] };
    let rightAll = 0;
    let rightFiltered = 0;
    for (const [i, query] of queries.entries()) {
      const t0 = performance.now();
      searcher.search(query, fingerprint, 10);
      searchMs.all.push(performance.now() - t0);
      const t1 = performance.now();
      searcher.search(query, fingerprint, 10, filter);
      searchMs.filtered.push(performance.now() - t1);
      rightAll += right(vectors.nearest(query, fingerprint, CANDIDATES).neighbours, truth.all[i] as number);
      rightFiltered += right(
        vectors.nearest(query, fingerprint, CANDIDATES, { collections: filter }).neighbours,
        truth.filtered[i] as number,
      );
    }
    return {
      vectors: count,
      codeRows,
      floatBytesPerVector: sum((n) => n === 'embeddings' || n === 'sqlite_autoindex_embeddings_1') / Math.max(1, count),
      codeBytesPerRow:
        sum(
          (n) =>
            n.startsWith('chunk_codes') || n.startsWith('vector_rows') || n.startsWith('sqlite_autoindex_vector_rows'),
        ) / Math.max(1, codeRows),
      fileBytes: sum(() => true),
      recall: { all: rightAll / (10 * queries.length), filtered: rightFiltered / (10 * queries.length) },
      searchMs,
      backend: vectors.backend(),
    };
  } finally {
    db.close();
  }
}

/** How many of the first 10 reach the exact 10th best similarity. */
function right(found: { similarity: number }[], tenth: number): number {
  return found.slice(0, 10).filter((n) => n.similarity >= tenth - 1e-6).length;
}

/** The exact 10th best similarity per query, over all vectors and over those in `collection`. */
function exactTopTen(db: Sqlite, queries: Float32Array[], collection: string): { all: number[]; filtered: number[] } {
  const best = queries.map(() => ({ all: [] as number[], filtered: [] as number[] }));
  const rows = db.prepare<[string], { vector: Uint8Array; inside: number }>(
    `SELECT e.vector, EXISTS (SELECT 1 FROM vector_rows r WHERE r.embedding_id = e.id AND r.collection = ?) AS inside
     FROM embeddings e WHERE EXISTS (SELECT 1 FROM vector_rows r WHERE r.embedding_id = e.id)`,
  );
  for (const row of rows.iterate(collection)) {
    const v = fromBlob(row.vector);
    for (const [i, q] of queries.entries()) {
      let s = 0;
      for (let d = 0; d < v.length; d++) s += (q[d] as number) * (v[d] as number);
      const top = best[i] as { all: number[]; filtered: number[] };
      push(top.all, s);
      if (row.inside === 1) push(top.filtered, s);
    }
  }
  return { all: best.map((b) => b.all[9] ?? -2), filtered: best.map((b) => b.filtered[9] ?? -2) };
}

/** Keeps the 10 largest, descending. */
function push(top: number[], s: number): void {
  if (top.length === 10 && s <= (top[9] as number)) return;
  let i = top.length;
  top.push(s);
  while (i > 0 && (top[i - 1] as number) < s) {
    top[i] = top[i - 1] as number;
    i--;
  }
  top[i] = s;
  if (top.length > 10) top.pop();
}

export function p(samples: number[], q: number): number {
  return quantile(
    [...samples].sort((a, b) => a - b),
    q,
  );
}
