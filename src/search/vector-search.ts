import type { Sqlite } from '../store/sqlite.js';
import { MAX_KNN, type Neighbour, prefixRange, type VectorFilter, type Vectors } from '../store/vectors/vectors.js';
import { lineAt } from '../text/markdown.js';
import { fractionOfBest } from './scores.js';
import type { SearchHit, SnippetRange } from './types.js';

/**
 * Candidates of the coarse pass (C, docs/design.md §8.3): 4 per document wanted, at least 40,
 * at most 400 at first (sqlite-vec 0.1.9's KNN gets dearer with k). When those do not make
 * `depth` documents (a document can hold several of them) and more rows match the filter,
 * C grows fourfold, up to sqlite-vec's limit of 4096.
 */
const CANDIDATES_PER_DOCUMENT = 4;
const MIN_CANDIDATES = 40;
const MAX_CANDIDATES = 400;
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
   * optionally only in `collections` (a JSON array) and under the folder `pathPrefix`. The
   * filter is applied inside the index (partitions and a path range), never by reading every
   * vector; the candidates are re-scored exactly before documents are ranked.
   */
  search(
    query: Float32Array,
    fingerprint: string,
    depth: number,
    collections?: string,
    pathPrefix?: string,
  ): SearchHit[] {
    const filter: VectorFilter = { collections, pathPrefix };
    let k = Math.min(MAX_CANDIDATES, Math.max(MIN_CANDIDATES, depth * CANDIDATES_PER_DOCUMENT));
    // With cells, each round also reads four times as many of them (`Vectors.nearest`'s widen).
    for (let round = 0; ; round++) {
      const { neighbours, complete, everyCell } = this.vectors.nearest(query, fingerprint, k, filter, round);
      const hits = this.toDocuments(neighbours, depth, filter);
      if (hits.length >= depth || complete || (k >= MAX_KNN && everyCell)) return hits;
      k = Math.min(MAX_KNN, k * 4);
    }
  }

  private toDocuments(neighbours: Neighbour[], depth: number, filter: VectorFilter): SearchHit[] {
    if (neighbours.length === 0) return [];
    const similarity = new Map(neighbours.map((n) => [n.id, n.similarity]));
    const range = prefixRange(filter.pathPrefix);
    const where = [
      filter.collections === undefined ? '' : 'AND d.collection IN (SELECT value FROM json_each(@collections))',
      range === undefined ? '' : 'AND d.path >= @low AND d.path < @high',
    ].join(' ');
    const rows = this.db
      .prepare<Record<string, string>, ChunkRow>(
        `SELECT e.id AS eid, d.docid, d.collection, d.path, d.title, d.hash, c.start_offset, c.end_offset, c.line
         FROM embeddings e
         JOIN chunks c ON c.hash = e.chunk_hash
         JOIN documents d ON d.hash = c.content_hash
         WHERE e.id IN (SELECT value FROM json_each(@ids)) ${where}`,
      )
      .all({
        ids: JSON.stringify([...similarity.keys()]),
        ...(filter.collections !== undefined && { collections: filter.collections }),
        ...range,
      });
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
      snippetRange: this.range(row),
    }));
  }

  /** The chunk's lines: the snippet is the head of its text, whitespace folded. */
  private range(row: ChunkRow): SnippetRange {
    const body = this.body.get(row.hash) ?? '';
    const chunk = body.slice(row.start_offset, row.end_offset).trimEnd();
    const lines = chunk === '' ? 1 : lineAt(chunk, chunk.length - 1);
    return { fromLine: row.line, lines };
  }

  private snippet(row: ChunkRow): string {
    const text = (this.body.get(row.hash) ?? '').slice(row.start_offset, row.end_offset).replace(/\s+/g, ' ').trim();
    return text.length > SNIPPET_CHARS ? `${text.slice(0, SNIPPET_CHARS - 1)}…` : text;
  }
}
