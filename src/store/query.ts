import { QmdError } from '../errors.js';
import { candidateDepth, fuseLists, type Ranking } from './hybrid.js';
import { checkLimit } from './search.js';
import {
  MAX_CANDIDATE_LIMIT,
  MAX_SUB_SEARCHES,
  type QueryOptions,
  type QueryResult,
  type SearchHit,
  type SearchMode,
  type SubSearch,
  type SubSearchRun,
} from './types.js';

/** A vector sub-search as the store embeds it: `vec` text as a query, `hyde` as a passage. */
export interface VectorText {
  type: 'vec' | 'hyde';
  text: string;
}

/** What `runQuery` needs of the store; each call is guarded (closed index, SQLite errors) there. */
export interface QuerySources {
  /** BM25 over `text`, the `depth` best, scores relative to the best; the collection and folder filters applied. */
  lexical(text: string, depth: number): Promise<SearchHit[]>;
  /** One vector per text, or why there are none (nothing embedded, no model, another model). */
  embed(texts: VectorText[], signal: AbortSignal | undefined): Promise<{ vectors: Float32Array[] } | { note: string }>;
  /** The `depth` documents nearest `vector`, scores relative to the nearest; the same filters applied. */
  nearest(vector: Float32Array, depth: number): Promise<SearchHit[]>;
}

export const NOT_RERANKED = 'not reranked: no reranker is configured';

/**
 * `query`: a plain query is the sub-searches `lex` and `vec` of its text; a list
 * is run as given. Each sub-search is one ranking, at most `candidateLimit` deep; rankings are
 * fused by reciprocal rank fusion (`hybrid.ts`), or, when one answers alone, keep its own
 * scores, so a plain query on an index without vectors answers exactly as BM25 did.
 *
 * When vectors cannot answer, vector sub-searches are skipped and the result's `note` says
 * why; if that leaves nothing (every sub-search was `vec` or `hyde`), each runs as BM25 over
 * its text instead, so a caller that asked only for meaning still gets the keyword matches.
 */
export async function runQuery(
  input: string | readonly SubSearch[],
  options: QueryOptions,
  sources: QuerySources,
): Promise<QueryResult> {
  const { signal } = options;
  const limit = checkLimit(options.limit);
  const candidateLimit = checkCandidateLimit(options.candidateLimit);
  const intent = options.intent?.trim() || undefined;
  const searches: SubSearch[] =
    typeof input === 'string'
      ? [
          { type: 'lex', query: input },
          { type: 'vec', query: input },
        ]
      : checkSearches(input);
  throwIfAborted(signal);

  const vectorSearches = searches.filter((s) => s.type !== 'lex');
  const embedded =
    vectorSearches.length === 0
      ? { vectors: [] }
      : await sources.embed(
          vectorSearches.map((s) => ({ type: s.type as VectorText['type'], text: withIntent(s, intent) })),
          signal,
        );
  const vectors = 'vectors' in embedded ? embedded.vectors : undefined;
  const asBm25 = vectors === undefined && vectorSearches.length === searches.length;
  const answering = vectors !== undefined || asBm25 ? searches.length : searches.length - vectorSearches.length;
  const depth = candidateLimit ?? (answering > 1 ? candidateDepth(limit) : limit);

  const runs: SubSearchRun[] = [];
  const rankings: Ranking[] = [];
  let vectorIndex = 0;
  for (const search of searches) {
    throwIfAborted(signal);
    let hits: SearchHit[] | undefined;
    let ran: SubSearchRun['ran'] = 'bm25';
    if (search.type === 'lex' || asBm25) {
      hits = await sources.lexical(search.query, depth);
    } else {
      const vector = vectors?.[vectorIndex++];
      if (vector !== undefined) {
        hits = await sources.nearest(vector, depth);
        ran = 'vector';
      } else ran = 'skipped';
    }
    runs.push({ type: search.type, query: search.query, ran, candidates: hits?.length ?? 0 });
    if (hits !== undefined) rankings.push({ hits, lexical: ran === 'bm25' });
  }

  const ranked = rankings.length === 1 ? [...(rankings[0]?.hits ?? [])] : fuseLists(rankings);
  const hits = ranked.filter((hit) => hit.score >= (options.minScore ?? 0)).slice(0, limit);
  const notes = [
    ...('note' in embedded ? [embedded.note] : []),
    ...(intent !== undefined && !runs.some((r) => r.type === 'vec' && r.ran === 'vector')
      ? ['intent unused: it only shapes vec searches, and none ran']
      : []),
  ];
  return {
    mode: modeOf(runs),
    hits,
    ...(notes.length > 0 && { note: notes.join('; ') }),
    searches: runs,
    reranked: false,
    ...(options.rerank === true && { rerankNote: NOT_RERANKED }),
  };
}

/**
 * The text a `vec` sub-search embeds: its question, then the intent in parentheses, so the
 * vector leans towards the sense meant ("performance (web page load times)").
 */
export function withIntent(search: SubSearch, intent: string | undefined): string {
  return search.type === 'vec' && intent !== undefined ? `${search.query} (${intent})` : search.query;
}

function modeOf(runs: SubSearchRun[]): SearchMode {
  const lexical = runs.some((r) => r.ran === 'bm25');
  const vector = runs.some((r) => r.ran === 'vector');
  if (lexical && vector) return 'hybrid';
  return vector ? 'vector' : 'bm25';
}

function checkSearches(searches: readonly SubSearch[]): SubSearch[] {
  if (searches.length === 0) throw new QmdError('BAD_ARGUMENT', 'searches is empty: give at least one sub-search');
  if (searches.length > MAX_SUB_SEARCHES) {
    throw new QmdError('BAD_ARGUMENT', `At most ${MAX_SUB_SEARCHES} sub-searches (got ${searches.length})`);
  }
  return searches.map((search, i) => {
    if (!['lex', 'vec', 'hyde'].includes(search.type)) {
      throw new QmdError('BAD_ARGUMENT', `searches[${i}].type must be lex, vec or hyde`);
    }
    const query = typeof search.query === 'string' ? search.query.trim() : '';
    if (query === '') throw new QmdError('BAD_ARGUMENT', `searches[${i}].query is blank`);
    return { type: search.type, query };
  });
}

function checkCandidateLimit(value: number | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!Number.isInteger(value) || value < 1)
    throw new QmdError('BAD_ARGUMENT', 'candidateLimit must be a positive integer');
  return Math.min(value, MAX_CANDIDATE_LIMIT);
}

function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new QmdError('ABORTED', 'The query was cancelled');
}
