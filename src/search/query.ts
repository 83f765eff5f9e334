import { QmdError } from '../errors.js';
import { checkLimit } from './bm25.js';
import { keptExpansion } from './expansion.js';
import { candidateDepth, fuseLists, type Ranking } from './hybrid.js';
import { bestChunk, blend, rerankQuery } from './rerank.js';
import {
  DEFAULT_CANDIDATE_LIMIT,
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
  /**
   * The query expansion model's typed lines for `text`, or why there are none (the model is
   * unavailable). Absent: no expansion model is configured.
   */
  expand?(text: string, signal: AbortSignal | undefined): Promise<{ lines: SubSearch[] } | { note: string }>;
  /** The reranker's score of each text for `query`, or why there are none. Absent: no reranker. */
  rerank?(
    query: string,
    texts: readonly string[],
    signal: AbortSignal | undefined,
  ): Promise<{ scores: number[] } | { note: string }>;
  /** The indexed text of each document, by its `file`, for the chunk the reranker reads. */
  bodies(hits: readonly SearchHit[]): Promise<Map<string, string>>;
}

/** Why `rerank: true` gave the fusion's order; also the note when none is configured. */
export const NOT_RERANKED = 'not reranked: no reranking model is configured';
const NOT_EXPANDED = 'not expanded: no query expansion model is configured';
/**
 * A plain query's own lex and vec count double an expansion line (the peer's weights): the
 * user's words are the surest evidence, a small model's rewrites the least. Typed sub-searches
 * all count the same (the peer doubles the first; README says why we do not).
 */
const OWN_WEIGHT = 2;

interface Planned extends SubSearch {
  weight: number;
  expanded?: true;
}

/**
 * `query`, the peer's pipeline (qmd 2.8): a plain query is the sub-searches `lex` and `vec`
 * of its text, plus, when an expansion model is configured, the typed lines it writes for
 * the text (`expansion.ts` says which are kept), each at half the weight of the query's own;
 * a list of typed sub-searches runs as given, each counting the same. Each sub-search is
 * one ranking; rankings are fused by weighted reciprocal rank fusion (`hybrid.ts`), or, when
 * one answers alone, keep its own scores, so a plain query on an index without vectors and
 * without models answers exactly as BM25 did. The best `candidateLimit` (40) fused documents
 * are the candidates; when a reranker is configured (and `rerank` is not false) it reads the
 * best chunk of each and its score is blended with the fused rank (`rerank.ts`).
 *
 * When vectors cannot answer, vector sub-searches are skipped and the result's `note` says
 * why; if that leaves nothing (every sub-search was `vec` or `hyde`), each runs as BM25 over
 * its text instead, so a caller that asked only for meaning still gets the keyword matches.
 * A model that is unavailable is a note too (`expansionNote`, `rerankNote`), never an error.
 */
export async function runQuery(
  input: string | readonly SubSearch[],
  options: QueryOptions,
  sources: QuerySources,
): Promise<QueryResult> {
  const { signal } = options;
  const limit = checkLimit(options.limit);
  const candidateLimit = checkCandidateLimit(options.candidateLimit) ?? DEFAULT_CANDIDATE_LIMIT;
  const intent = options.intent?.trim() || undefined;
  const plain = typeof input === 'string';
  const searches: Planned[] = plain
    ? [
        { type: 'lex', query: input, weight: OWN_WEIGHT },
        { type: 'vec', query: input, weight: OWN_WEIGHT },
      ]
    : checkSearches(input).map((search) => ({ ...search, weight: 1 }));
  throwIfAborted(signal);

  let expansionNote: string | undefined;
  if (plain && options.expand !== false) {
    if (sources.expand === undefined) {
      if (options.expand === true) expansionNote = NOT_EXPANDED;
    } else {
      const expansion = await sources.expand(input, signal);
      throwIfAborted(signal);
      if ('note' in expansion) expansionNote = `not expanded: ${expansion.note}`;
      else {
        const kept = keptExpansion(input, expansion.lines, searches, MAX_SUB_SEARCHES - searches.length);
        searches.push(...kept.map((line) => ({ ...line, weight: 1, expanded: true as const })));
        if (kept.length === 0) {
          expansionNote = `the expansion kept none of its ${expansion.lines.length} line(s): none was new and shared a word with the query`;
        }
      }
    }
  }

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
  const depth = Math.max(answering > 1 ? candidateDepth(limit) : limit, candidateLimit);

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
    runs.push({
      type: search.type,
      query: search.query,
      ...(search.expanded && { expanded: true as const }),
      ran,
      candidates: hits?.length ?? 0,
    });
    if (hits !== undefined) rankings.push({ hits, lexical: ran === 'bm25', weight: search.weight });
  }

  const fused = rankings.length === 1 ? [...(rankings[0]?.hits ?? [])] : fuseLists(rankings);
  const candidates = fused.slice(0, candidateLimit);
  const reranking = await rerankCandidates(candidates, primaryText(input), intent, options, sources);
  const ranked = reranking.hits ?? candidates;
  const hits = ranked.filter((hit) => hit.score >= (options.minScore ?? 0)).slice(0, limit);
  const notes = [
    ...('note' in embedded ? [embedded.note] : []),
    ...(intent !== undefined &&
    !runs.some((r) => r.type === 'vec' && r.ran === 'vector') &&
    reranking.hits === undefined
      ? ['intent unused: it shapes vec searches and the reranker, and neither ran']
      : []),
  ];
  return {
    mode: modeOf(runs),
    hits,
    ...(notes.length > 0 && { note: notes.join('; ') }),
    searches: runs,
    reranked: reranking.hits !== undefined,
    ...(reranking.note !== undefined && { rerankNote: reranking.note }),
    ...(expansionNote !== undefined && { expansionNote }),
  };
}

/**
 * The candidates reranked and blended, or why not: not wanted (`rerank: false`), no reranker
 * (a note only when `rerank: true` was asked), fewer than two candidates (nothing to order),
 * or the reranker unavailable (a note).
 */
async function rerankCandidates(
  candidates: SearchHit[],
  text: string,
  intent: string | undefined,
  options: QueryOptions,
  sources: QuerySources,
): Promise<{ hits?: SearchHit[]; note?: string }> {
  if (options.rerank === false) return {};
  if (sources.rerank === undefined) return options.rerank === true ? { note: NOT_RERANKED } : {};
  if (candidates.length < 2) return {};
  const bodies = await sources.bodies(candidates);
  throwIfAborted(options.signal);
  const texts = candidates.map((hit) => bestChunk(bodies.get(hit.file) ?? hit.snippet, text, intent));
  const scored = await sources.rerank(rerankQuery(text, intent), texts, options.signal);
  throwIfAborted(options.signal);
  if ('note' in scored) return { note: `not reranked: ${scored.note}` };
  return { hits: blend(candidates, scored.scores) };
}

/**
 * The text a summary, the reranker and the chunk choice go by: the plain query, else qmd
 * 2.8's choice among the sub-searches (the first lex, else the first vec, else the first).
 */
export function primaryText(input: string | readonly SubSearch[]): string {
  if (typeof input === 'string') return input;
  return (input.find((s) => s.type === 'lex') ?? input.find((s) => s.type === 'vec') ?? input[0])?.query ?? '';
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
