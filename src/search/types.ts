/**
 * What a search is asked and answers: BM25 (`search`), vectors (`vsearch`) and the hybrid
 * `query` with its typed sub-searches, expansion and reranking.
 */

export interface SearchOptions {
  /** At most this many results (default 10). */
  limit?: number;
  /** Only these collections. An unknown name is an error. */
  collections?: string[];
  /**
   * Only documents under this folder, a path relative to the root of each collection searched
   * (`2024/q1`; a trailing `/` is the same), by whole segments: `2024` holds `2024/a.md` and
   * `2024/q1/b.md`, not `2024x/c.md`. With `collections`, both apply. Answered inside the
   * index, by BM25 and vectors alike. A path that could leave a collection (`..`, absolute, a
   * URI) is OUTSIDE_COLLECTIONS; blank, `.` or empty segments, backslashes BAD_ARGUMENT
   * (`folder.ts`).
   */
  folder?: string;
  /**
   * Drop results whose `score` is below this, i.e. weaker than this fraction of the query's
   * best result (in [0, 1]; 0 keeps everything, 1 keeps the best and its ties).
   */
  minScore?: number;
  /** Stops the work early when it fires (the request was cancelled). */
  signal?: AbortSignal;
  /** What surrounds matched terms in `snippet` (default `**` and `**`). */
  highlight?: { open: string; close: string };
}

export interface SearchHit {
  /** `collection/relative/path.md`, as `get` accepts it. */
  file: string;
  /** `#` followed by the short stable id. */
  docid: string;
  collection: string;
  /** Relative to the collection root. */
  path: string;
  title: string;
  /**
   * In [0, 1]: this result's strength as a fraction of the best result of the same query, by
   * the mode's own measure (BM25, cosine similarity, fused rank). The best scores 1. Not
   * comparable across queries (`scores.ts` says why).
   */
  score: number;
  /** A short excerpt with the matched terms. */
  snippet: string;
  /** 1-based line where the best match is, when known. */
  line?: number;
  /** The lines the snippet was taken from, when known: `get file:fromLine:lines` reads them. */
  snippetRange?: SnippetRange;
  /**
   * What the contexts that cover this document say (`qmd context add`): the global one, then
   * its collection's, then each folder's down to the document's, joined by a blank line.
   */
  context?: string;
}

/** Absolute lines of a document: the first (1-based) and how many. */
export interface SnippetRange {
  fromLine: number;
  lines: number;
}

export type SearchMode = 'bm25' | 'vector' | 'hybrid';

/**
 * One typed sub-search of `query` (qmd 2.8's `searches`): `lex` is BM25 over the text, `vec`
 * the vectors nearest the text as a question, `hyde` the vectors nearest the text as a
 * passage (a hypothetical answer, embedded as the notes' own chunks are).
 */
export interface SubSearch {
  type: 'lex' | 'vec' | 'hyde';
  query: string;
}

/** What became of one sub-search: what it ran as and how many candidates it gave. */
export interface SubSearchRun extends SubSearch {
  /** Written by the query expansion model for a plain query (absent for the query's own and typed ones). */
  expanded?: true;
  /**
   * `bm25` or `vector` as asked; `skipped` for a vector sub-search when vectors cannot answer
   * (the result's `note` says why); `bm25` for a vec/hyde one run as BM25 over its text
   * instead, which happens only when every sub-search is a vector one.
   */
  ran: 'bm25' | 'vector' | 'skipped';
  /** Documents it ranked (at most its candidate depth). */
  candidates: number;
}

/** qmd 2.8 takes at most 10 sub-searches; each is a ranking computed and fused. */
export const MAX_SUB_SEARCHES = 10;

/** The deepest `candidateLimit`: deeper rankings only cost snippets nobody reads. */
export const MAX_CANDIDATE_LIMIT = 1_000;

/** Fused candidates the reranker reads when `candidateLimit` is not given: the peer's 40. */
export const DEFAULT_CANDIDATE_LIMIT = 40;

export interface QueryOptions extends SearchOptions {
  /**
   * Background that disambiguates the query ("web page load times" for "performance"). It
   * never searches on its own: it is folded into the text of every `vec` sub-search (and the
   * vector half of a plain query) before that text is embedded; BM25 and `hyde` texts are
   * used as given.
   */
  intent?: string;
  /**
   * The best this many fused documents are the candidates: the reranker reads each (its best
   * chunk), and the results come from them (default 40, the peer's; at most 1,000). Each
   * sub-search ranks at least this deep.
   */
  candidateLimit?: number;
  /**
   * Rerank the candidates with the reranking model (default true when one is configured):
   * its score is blended with the fused rank, the rank weighing more near the top (ranks
   * 1–3: 75% rank, 25% reranker; 4–10: 60/40; below: 40/60). False: the fusion's order (RRF only).
   */
  rerank?: boolean;
  /**
   * Expand a plain query with the query expansion model (default true when one is
   * configured): its typed lines are searched beside the query's own lex and vec, at half
   * their weight. Typed `searches` are never expanded.
   */
  expand?: boolean;
}

export interface QueryResult {
  mode: SearchMode;
  hits: SearchHit[];
  /** Why the mode is what it is, e.g. `nothing is embedded yet: BM25 only`. */
  note?: string;
  /**
   * Each sub-search in the order given (a plain query is `lex` and `vec` of its text, then
   * the expansion's lines, marked `expanded`).
   */
  searches: SubSearchRun[];
  /** The candidates were reranked and the scores blended (`QueryOptions.rerank`). */
  reranked: boolean;
  /** Why the results are not reranked, when reranking was wanted (asked, or a reranker is configured). */
  rerankNote?: string;
  /** Why a plain query was not expanded, or its expansion kept no line, when expansion was wanted. */
  expansionNote?: string;
}
