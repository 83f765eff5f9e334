import * as z from 'zod';
import type { QueryResult, SearchHit } from '../core/reader-types.js';

/**
 * What `query` answers, as `structuredContent` (and, with a `uri` per result, the body of
 * `POST /query`). Built field by field: the client validates it against this schema, which
 * refuses properties it does not list.
 */
export const queryOutputShape = {
  mode: z.enum(['bm25', 'vector', 'hybrid']).describe('How the results were ranked.'),
  note: z.string().optional().describe('Why: e.g. vector searches skipped because nothing is embedded.'),
  searches: z
    .array(
      z.object({
        type: z.enum(['lex', 'vec', 'hyde']),
        query: z.string(),
        expanded: z.boolean().optional().describe('Written by the query expansion model.'),
        ran: z.enum(['bm25', 'vector', 'skipped']).describe('What it ran as.'),
        candidates: z.number().int().describe('Documents it ranked.'),
      }),
    )
    .describe(
      'Each sub-search (a plain query is lex and vec of its text, then the lines the expansion model wrote) ' +
        'and what became of it.',
    ),
  reranked: z
    .boolean()
    .describe('The candidates were reranked by the reranking model, its score blended with the fused rank.'),
  rerankNote: z.string().optional().describe('Why the results are not reranked, when reranking was wanted.'),
  expansionNote: z
    .string()
    .optional()
    .describe('Why a plain query was not expanded (or its expansion kept nothing), when expansion was wanted.'),
  results: z.array(
    z.object({
      file: z.string().describe('collection/path.md, as get accepts it'),
      docid: z.string().describe('#docid, as get accepts it'),
      title: z.string(),
      score: z.number().describe('0-1: strength as a fraction of the best result (1)'),
      snippet: z
        .string()
        .describe(
          "qmd 2.8's form: 'LINE: @@ -FROM,COUNT @@' (LINE the best match), then the excerpt's lines, each 'N: text'",
        ),
      line: z.number().int().optional().describe('1-based line of the best match'),
      snippetRange: z
        .object({ fromLine: z.number().int(), lines: z.number().int() })
        .optional()
        .describe('The absolute lines the snippet was taken from: get file:fromLine:lines reads them'),
      context: z.string().optional().describe('What the contexts covering this document say (qmd context add)'),
    }),
  ),
};

export type QueryStructured = z.infer<z.ZodObject<typeof queryOutputShape>>;

export function queryStructured(result: QueryResult): QueryStructured {
  return {
    mode: result.mode,
    ...(result.note !== undefined && { note: result.note }),
    searches: result.searches.map((s) => ({
      type: s.type,
      query: s.query,
      ...(s.expanded && { expanded: true }),
      ran: s.ran,
      candidates: s.candidates,
    })),
    reranked: result.reranked,
    ...(result.rerankNote !== undefined && { rerankNote: result.rerankNote }),
    ...(result.expansionNote !== undefined && { expansionNote: result.expansionNote }),
    results: result.hits.map((hit) => ({
      file: hit.file,
      docid: hit.docid,
      title: hit.title,
      score: hit.score,
      snippet: numberedSnippet(hit),
      ...(hit.line !== undefined && { line: hit.line }),
      ...(hit.snippetRange !== undefined && {
        snippetRange: { fromLine: hit.snippetRange.fromLine, lines: hit.snippetRange.lines },
      }),
      ...(hit.context !== undefined && { context: hit.context }),
    })),
  };
}

/**
 * The snippet as qmd 2.8 gives it in `structuredContent` (and its REST replies), which its
 * clients and tests parse: a header with the best match's line and the absolute lines the
 * excerpt spans, `301: @@ -300,2 @@`, then the excerpt's lines, each numbered with its line in
 * the note (the excerpt is the note's text between tokens, so its line ends are the note's).
 * Without a known place (a title match), the excerpt as it is. The text content keeps the
 * one-line form (`formatQuery`).
 */
export function numberedSnippet(hit: SearchHit): string {
  if (hit.snippetRange === undefined || hit.line === undefined) return hit.snippet;
  const { fromLine, lines } = hit.snippetRange;
  // The range counts lines with visible text: an edge line that is only a cut (…) or blank is not one.
  const parts = hit.snippet.split('\n');
  const blank = (part: string | undefined): boolean => part !== undefined && part.replaceAll('…', '').trim() === '';
  while (parts.length > 1 && blank(parts[0])) parts.shift();
  while (parts.length > 1 && blank(parts.at(-1))) parts.pop();
  const body = parts.map((text, i) => `${fromLine + i}: ${text}`);
  return [`${hit.line}: @@ -${fromLine},${lines} @@`, ...body].join('\n');
}
