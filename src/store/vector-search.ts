import { fractionOfBest } from './scores.js';
import type { Sqlite } from './sqlite.js';
import type { SearchHit } from './types.js';
import { MAX_KNN, type Neighbour, type Vectors } from './vectors.js';

/** Chunk neighbours asked for per document wanted: a note has a few chunks, and neighbours cluster. */
const CHUNKS_PER_DOCUMENT = 8;
const MIN_NEIGHBOURS = 64;
const SNIPPET_CHARS = 200;

interface ChunkRow {
  eid: number;
  docid: string;
  collection: string;
  path: string;
  title: string;
  hash: string;
  start_offset: number;
  end_offset: number;
  line: number;
}

/**
 * Vector search at document level: the nearest chunks, each document ranked by its best
 * chunk's cosine similarity, with that chunk's start as `line` and its text as the snippet.
 * The score is that similarity as a fraction of the best document's (`scores.ts`): 1 for the
 * nearest, 0 for orthogonal or opposite. A raw cosine reads differently for every model (the
 * tiny test model puts unrelated notes at 0.85–0.93, bench/results-scores.md), so it is not
 * what `minScore` compares against in any mode.
 */
export class VectorSearcher {
  private readonly body;

  constructor(
    private readonly db: Sqlite,
    private readonly vectors: Vectors,
  ) {
    this.body = db.column<[string], string>('SELECT body FROM content WHERE hash = ?');
  }

  /**
   * The `depth` best documents for `query` (normalized) among vectors of `fingerprint`,
   * optionally only in `collections` (a JSON array). Asks for a bounded number of nearest
   * chunks first; when those do not yield `depth` documents and there may be more (the KNN
   * came back full), it ranks every vector instead, so a filter never hides a match.
   */
  search(query: Float32Array, fingerprint: string, depth: number, collections?: string): SearchHit[] {
    const k = Math.min(MAX_KNN, Math.max(MIN_NEIGHBOURS, depth * CHUNKS_PER_DOCUMENT));
    let neighbours = this.vectors.nearest(query, fingerprint, k, collections);
    let hits = this.toDocuments(neighbours, depth, collections);
    if (hits.length < depth && neighbours.length === k) {
      neighbours = this.vectors.scan(query, fingerprint, Number.POSITIVE_INFINITY, collections);
      hits = this.toDocuments(neighbours, depth, collections);
    }
    return hits;
  }

  private toDocuments(neighbours: Neighbour[], depth: number, collections?: string): SearchHit[] {
    if (neighbours.length === 0) return [];
    const similarity = new Map(neighbours.map((n) => [n.id, n.similarity]));
    const filter = collections === undefined ? '' : 'AND d.collection IN (SELECT value FROM json_each(?))';
    const rows = this.db
      .prepare<string[], ChunkRow>(
        `SELECT e.id AS eid, d.docid, d.collection, d.path, d.title, d.hash, c.start_offset, c.end_offset, c.line
         FROM embeddings e
         JOIN chunks c ON c.hash = e.chunk_hash
         JOIN documents d ON d.hash = c.content_hash
         WHERE e.id IN (SELECT value FROM json_each(?)) ${filter}`,
      )
      .all(JSON.stringify([...similarity.keys()]), ...(collections === undefined ? [] : [collections]));
    const best = new Map<string, { row: ChunkRow; score: number }>();
    for (const row of rows) {
      const score = similarity.get(row.eid) ?? 0;
      const file = `${row.collection}/${row.path}`;
      const seen = best.get(file);
      // Ties go to the earlier chunk, so a document's hit is stable.
      if (
        seen === undefined ||
        score > seen.score ||
        (score === seen.score && row.start_offset < seen.row.start_offset)
      ) {
        best.set(file, { row, score });
      }
    }
    const ranked = [...best.entries()]
      .sort(([fa, a], [fb, b]) => b.score - a.score || (fa < fb ? -1 : 1))
      .slice(0, depth);
    const top = ranked[0]?.[1].score ?? 0;
    return ranked.map(([file, { row, score }]) => ({
      file,
      docid: `#${row.docid}`,
      collection: row.collection,
      path: row.path,
      title: row.title,
      score: fractionOfBest(score, top),
      snippet: this.snippet(row),
      line: row.line,
    }));
  }

  private snippet(row: ChunkRow): string {
    const text = (this.body.get(row.hash) ?? '').slice(row.start_offset, row.end_offset).replace(/\s+/g, ' ').trim();
    return text.length > SNIPPET_CHARS ? `${text.slice(0, SNIPPET_CHARS - 1)}…` : text;
  }
}
