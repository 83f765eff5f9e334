import type { Sqlite, SqlValue } from '../sqlite.js';
import type { Cells } from './cells.js';
import { CODE_TABLE } from './codes.js';
import { fromBlob, prefixRange, toBlob, toCode } from './encoding.js';
import type { Candidates, Neighbour, VectorFilter } from './vectors.js';

/**
 * The two ways `Vectors.nearest` finds the chunks nearest a query: a KNN over the codes
 * (`coarse`), re-scored from the float copy, when the codes are in step; else the exact answer
 * over every vector the filter allows (`exact`).
 */

/**
 * The KNN over the codes. With cells, only those of the `probes` cells nearest to the query
 * are read. SQLite runs a KNN once per value of an `IN` on a partition key (each returns up
 * to k rows): the best k per collection of the filter are kept, by code distance, whatever
 * the cells read.
 */
export function coarse(
  db: Sqlite,
  query: Float32Array,
  k: number,
  filter: VectorFilter,
  cells: Cells | undefined,
  probes: number,
): Candidates {
  const range = prefixRange(filter.pathPrefix);
  const where = [
    'code MATCH vec_int8(@code) AND k = @k',
    cells === undefined ? '' : 'AND cell IN (SELECT value FROM json_each(@cells))',
    filter.collections === undefined ? '' : 'AND collection IN (SELECT value FROM json_each(@collections))',
    range === undefined ? '' : 'AND path >= @low AND path < @high',
  ].join(' ');
  // MATERIALIZED: vec0 refuses a LIMIT beside its own `k` (flattened, the outer one would be).
  const rows = db
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
  return { neighbours: rescore(db, query, [...new Set(rows)]), complete: everyCell && rows.length < k, everyCell };
}

/** Exact similarities of the candidates, from the float copy, best first. */
function rescore(db: Sqlite, query: Float32Array, ids: number[]): Neighbour[] {
  if (ids.length === 0) return [];
  const rows = db
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
export function exact(
  db: Sqlite,
  extension: boolean,
  query: Float32Array,
  fingerprint: string,
  k: number,
  filter: VectorFilter,
): Candidates {
  const range = prefixRange(filter.pathPrefix);
  const allowed = [
    filter.collections === undefined ? '' : 'AND r.collection IN (SELECT value FROM json_each(@collections))',
    range === undefined ? '' : 'AND r.path >= @low AND r.path < @high',
  ].join(' ');
  const params = { model: fingerprint, ...filterParams(filter.collections, range) };
  const from = `FROM embeddings e WHERE e.model = @model
    AND e.id IN (SELECT r.embedding_id FROM vector_rows r WHERE 1 ${allowed})`;
  const limit = Number.isFinite(k) ? k : -1;
  if (extension) {
    const neighbours = db
      .prepare<Record<string, SqlValue>, Neighbour>(
        `SELECT e.id, 1 - vec_distance_cosine(e.vector, @query) AS similarity ${from}
         ORDER BY similarity DESC, e.id LIMIT @limit`,
      )
      .all({ ...params, query: toBlob(query), limit });
    return { neighbours, complete: limit < 0 || neighbours.length < limit, everyCell: true };
  }
  const found: Neighbour[] = [];
  for (const row of db
    .prepare<Record<string, SqlValue>, { id: number; vector: Uint8Array }>(`SELECT e.id, e.vector ${from}`)
    .iterate(params)) {
    found.push({ id: row.id, similarity: dot(query, row.vector) });
  }
  const neighbours = rank(found);
  return { neighbours: limit < 0 ? neighbours : neighbours.slice(0, limit), complete: true, everyCell: true };
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

function dot(query: Float32Array, blob: Uint8Array): number {
  const vector = fromBlob(blob);
  const n = Math.min(query.length, vector.length);
  let sum = 0;
  for (let i = 0; i < n; i++) sum += (query[i] as number) * (vector[i] as number);
  return sum;
}
