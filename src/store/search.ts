import { QmdError } from '../errors.js';
import { toFtsQuery } from './fts-query.js';
import { lineAt } from './markdown.js';
import { fractionOfBest } from './scores.js';
import type { Sqlite } from './sqlite.js';
import type { SearchHit, SearchOptions } from './types.js';

/** BM25 column weights: a term in the title counts this many times a term in the body. */
export const titleWeight = 4;
export const bodyWeight = 1;

// Control characters cannot appear in a snippet's own text, so they mark the match and the
// cut points unambiguously until they are replaced by what the caller wants.
const open = '\u0002';
const close = '\u0003';
const cut = '\u0004';
const snippetTokens = 16;

interface RankedRow {
  id: number;
  docid: string;
  collection: string;
  path: string;
  title: string;
  hash: string;
  bm25: number;
}

/**
 * Full-text search over `documents_fts`.
 *
 * Score: FTS5's `bm25()` is negative, more negative is better. With `s = -bm25` (positive:
 * FTS5 floors each term's IDF at 1e-6), `score = s / s_best`, the best hit's `s` being the
 * first row's (`scores.ts` says why relative): 1 for the best hit, in (0, 1] for the rest, in
 * the order FTS5 ranked them. `minScore` drops hits below that fraction of the best. Only one
 * of the all-terms and any-term passes ever answers a query, so the best is from that pass.
 *
 * Ranking runs first, on ids only; snippets are made afterwards for the few hits kept, since
 * SQLite would otherwise build a snippet for every match before sorting.
 */
export class Searcher {
  private readonly rankAll;
  private readonly rankIn;
  private readonly snippet;
  private readonly body;

  constructor(db: Sqlite) {
    const bm25 = `bm25(documents_fts, ${titleWeight}, ${bodyWeight})`;
    const columns = 'd.id, d.docid, d.collection, d.path, d.title, d.hash';
    // Without a collection filter only the top rows are joined to `documents`.
    this.rankAll = db.prepare<[string, number], RankedRow>(
      `SELECT ${columns}, r.bm25 FROM (
         SELECT rowid AS id, ${bm25} AS bm25 FROM documents_fts WHERE documents_fts MATCH ? ORDER BY bm25 LIMIT ?
       ) r JOIN documents d ON d.id = r.id ORDER BY r.bm25`,
    );
    this.rankIn = db.prepare<[string, string, number], RankedRow>(
      `SELECT ${columns}, ${bm25} AS bm25
       FROM documents_fts JOIN documents d ON d.id = documents_fts.rowid
       WHERE documents_fts MATCH ? AND d.collection IN (SELECT value FROM json_each(?))
       ORDER BY bm25 LIMIT ?`,
    );
    // The CAST matters. node:sqlite (as better-sqlite3 did) binds every JS number as REAL, and
    // FTS5 silently drops a REAL `rowid = ?` constraint next to MATCH: measured on SQLite
    // 3.53.2, it returned every matching row, so each hit got the first match's snippet.
    this.snippet = db.column<[string, number], string>(
      `SELECT snippet(documents_fts, 1, '${open}', '${close}', '${cut}', ${snippetTokens})
         FROM documents_fts WHERE documents_fts MATCH ? AND rowid = CAST(? AS INTEGER)`,
    );
    this.body = db.column<[string], string>('SELECT body FROM content WHERE hash = ?');
  }

  search(query: string, options: SearchOptions & { knownCollections: () => string[] }): SearchHit[] {
    if (options.signal?.aborted) throw new QmdError('ABORTED', 'The search was cancelled');
    const limit = checkLimit(options.limit);
    const minScore = options.minScore ?? 0;
    if (!Number.isFinite(minScore)) throw new QmdError('BAD_ARGUMENT', 'minScore must be a number in [0, 1]');
    const filter = options.collections === undefined ? undefined : checkCollections(options.collections, options);
    const fts = toFtsQuery(query);
    if (fts === undefined) return [];
    let match = fts.all;
    let rows = this.rank(match, filter, limit);
    if (rows.length === 0 && fts.terms > 1) {
      match = fts.any;
      rows = this.rank(match, filter, limit);
    }
    const marks = options.highlight ?? { open: '**', close: '**' };
    const hits: SearchHit[] = [];
    const best = -(rows[0]?.bm25 ?? 0);
    for (const row of rows) {
      const score = fractionOfBest(-row.bm25, best);
      if (score < minScore) break;
      const raw = this.snippet.get(match, row.id) ?? '';
      const hit: SearchHit = {
        file: `${row.collection}/${row.path}`,
        docid: `#${row.docid}`,
        collection: row.collection,
        path: row.path,
        title: row.title,
        score,
        snippet: raw.replaceAll(open, marks.open).replaceAll(close, marks.close).replaceAll(cut, '…'),
      };
      const line = this.lineOf(raw, row.hash);
      if (line !== undefined) hit.line = line;
      hits.push(hit);
    }
    return hits;
  }

  private rank(match: string, filter: string | undefined, limit: number): RankedRow[] {
    return filter === undefined ? this.rankAll.all(match, limit) : this.rankIn.all(match, filter, limit);
  }

  /**
   * `snippet()` copies the document's text between tokens verbatim, so the snippet without
   * its markers is a substring of the body; the first match's offset in it gives the line.
   * Undefined when the body has no match (the title matched) or the excerpt is not found.
   */
  private lineOf(raw: string, hash: string): number | undefined {
    const plain = raw.replaceAll(cut, '');
    const first = plain.indexOf(open);
    if (first === -1) return undefined;
    const text = plain.replaceAll(open, '').replaceAll(close, '');
    const body = this.body.get(hash);
    if (body === undefined) return undefined;
    const at = body.indexOf(text);
    return at === -1 ? undefined : lineAt(body, at + first);
  }
}

export function checkLimit(limit: number | undefined): number {
  if (limit === undefined) return 10;
  if (!Number.isInteger(limit) || limit < 1) throw new QmdError('BAD_ARGUMENT', 'limit must be a positive integer');
  return Math.min(limit, 1000);
}

export function checkCollections(names: string[], options: { knownCollections: () => string[] }): string {
  const known = new Set(options.knownCollections());
  const unknown = names.filter((name) => !known.has(name));
  if (unknown.length > 0) {
    throw new QmdError(
      'UNKNOWN_COLLECTION',
      `Unknown collection ${unknown.map((n) => `"${n}"`).join(', ')}; known: ${[...known].join(', ') || '(none)'}`,
    );
  }
  return JSON.stringify(names);
}
