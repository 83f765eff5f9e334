import { QmdError } from '../errors.js';
import { checkFolder } from '../store/folder.js';
import type { Sqlite, SqlValue, Statement } from '../store/sqlite.js';
import { prefixRange } from '../store/vectors/vectors.js';
import { lineAt } from '../text/markdown.js';
import { toFtsQuery } from './fts-query.js';
import { fractionOfBest } from './scores.js';
import type { SearchHit, SearchOptions, SnippetRange } from './types.js';

/** BM25 column weights: a term in the title counts this many times a term in the body. */
export const titleWeight = 4;
export const bodyWeight = 1;

// Control characters cannot appear in a snippet's own text, so they mark the match and the
// cut points unambiguously until they are replaced by what the caller wants.
const open = '\u0002';
const close = '\u0003';
const cut = '\u0004';
const snippetTokens = 16;

/** What narrows a ranking: collections (a JSON array) and a folder's path range (`prefixRange`). */
interface Filter {
  collections: string | undefined;
  range: { low: string; high: string } | undefined;
}

/** How many of the best matches overall a filtered search looks through first (`rank`). */
const PREFILTER_FACTOR = 20;
const PREFILTER_MIN = 200;
const PREFILTER_MAX = 5000;

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
  private readonly filtered = new Map<string, Statement<Record<string, SqlValue>, RankedRow>>();
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
    // A collection or folder filter: one statement per shape of filter, made when first used.
    // SQLite plans it as FTS5's match first, then each match's row checked (docs/design.md §6).
    this.rankIn = (filter: Filter) => {
      const shape = `${filter.collections === undefined ? '' : 'c'}${filter.range === undefined ? '' : 'f'}`;
      let statement = this.filtered.get(shape);
      if (statement === undefined) {
        statement = db.prepare<Record<string, SqlValue>, RankedRow>(
          `SELECT ${columns}, ${bm25} AS bm25
           FROM documents_fts JOIN documents d ON d.id = documents_fts.rowid
           WHERE documents_fts MATCH @match
             ${filter.collections === undefined ? '' : 'AND d.collection IN (SELECT value FROM json_each(@collections))'}
             ${filter.range === undefined ? '' : 'AND d.path >= @low AND d.path < @high'}
           ORDER BY bm25 LIMIT @limit`,
        );
        this.filtered.set(shape, statement);
      }
      return statement;
    };
    // The CAST matters. better-sqlite3 (as node:sqlite did) binds every JS number as REAL, and
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
    const filter: Filter = {
      collections: options.collections === undefined ? undefined : checkCollections(options.collections, options),
      range: prefixRange(checkFolder(options.folder)),
    };
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
      const place = this.placeOf(raw, row.hash);
      if (place !== undefined) {
        hit.line = place.line;
        hit.snippetRange = place.range;
      }
      hits.push(hit);
    }
    return hits;
  }

  /**
   * The `limit` best matches inside the filter. A filter is first tried on the best matches
   * overall (`rankAll` joins only those to `documents`): when `limit` of them pass, they are
   * the filtered answer, since a filter keeps the ranking's order. Only when too few pass does
   * the filtered statement join every match before ranking, which at 1M notes made a
   * one-collection BM25 call 233 ms p50 against 92 ms unfiltered (bench/results-scale.md).
   */
  private rank(match: string, filter: Filter, limit: number): RankedRow[] {
    if (filter.collections === undefined && filter.range === undefined) return this.rankAll.all(match, limit);
    const wide = Math.min(PREFILTER_MAX, Math.max(PREFILTER_MIN, limit * PREFILTER_FACTOR));
    const best = this.rankAll.all(match, wide);
    const names = filter.collections === undefined ? undefined : new Set(JSON.parse(filter.collections) as string[]);
    const inside = best.filter(
      (row) =>
        (names === undefined || names.has(row.collection)) &&
        (filter.range === undefined || row.path.startsWith(filter.range.low)),
    );
    // Every match was among them (fewer than asked for), or enough passed: that is the answer.
    if (best.length < wide || inside.length >= limit) return inside.slice(0, limit);
    return this.rankIn(filter).all({
      match,
      limit,
      ...(filter.collections !== undefined && { collections: filter.collections }),
      ...filter.range,
    });
  }

  /**
   * `snippet()` copies the document's text between tokens verbatim, so the snippet without
   * its markers is a substring of the body; the first match's offset in it gives the line, and
   * the excerpt's own start and end the lines it spans. Undefined when the body has no match
   * (the title matched) or the excerpt is not found.
   */
  private placeOf(raw: string, hash: string): { line: number; range: SnippetRange } | undefined {
    const plain = raw.replaceAll(cut, '');
    const first = plain.indexOf(open);
    if (first === -1) return undefined;
    const text = plain.replaceAll(open, '').replaceAll(close, '');
    const body = this.body.get(hash);
    if (body === undefined) return undefined;
    const at = body.indexOf(text);
    if (at === -1) return undefined;
    // The excerpt's lines are those of its first and last visible characters.
    const fromLine = lineAt(body, at + (text.length - text.trimStart().length));
    const lastLine = Math.max(fromLine, lineAt(body, at + Math.max(0, text.trimEnd().length - 1)));
    return { line: lineAt(body, at + first), range: { fromLine, lines: lastLine - fromLine + 1 } };
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
