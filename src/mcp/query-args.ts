import * as z from 'zod';
import { MAX_CANDIDATE_LIMIT, MAX_SUB_SEARCHES, type QueryOptions, type SubSearch } from '../core/reader-types.js';
import {
  MAX_COLLECTION_NAME_CHARS,
  MAX_COLLECTIONS,
  MAX_INTENT_CHARS,
  MAX_QUERY_CHARS,
  MAX_REF_CHARS,
} from './limits.js';
import { strictArguments } from './shapes.js';

/**
 * The arguments of the `query` tool and of `POST /query` over HTTP: qmd 2.8's,
 * so prompts and agent skills written for it work here, checked strictly (an unknown or
 * misspelt argument is an error that names it), and one of ours, `folder`, optional.
 */
const text = (what: string) => z.string().trim().min(1).max(MAX_QUERY_CHARS).describe(what);

const subSearch = z.strictObject({
  type: z
    .enum(['lex', 'vec', 'hyde'])
    .describe(
      'lex: BM25 keywords ("quoted phrase", prefix*); vec: a question, searched by meaning; ' +
        'hyde: a passage that looks like the answer, searched by meaning against the notes.',
    ),
  query: text('The text of this sub-search.'),
});

export const queryArguments = strictArguments('query', {
  query: text(
    'What to look for, in plain text: searched by keywords and, when the notes are embedded, by meaning, ' +
      'fused. Give this or searches.',
  ).optional(),
  searches: z
    .array(subSearch)
    .max(MAX_SUB_SEARCHES)
    .optional()
    .describe(
      'Typed sub-searches, each ranked on its own and all fused (reciprocal rank fusion, each counting ' +
        'equally), never expanded: [{type:"lex",query:"connection pool timeout"},{type:"vec",query:"why do ' +
        'connections time out"}]. Give this or query.',
    ),
  limit: z.number().int().min(1).max(100).default(10).describe('At most this many results (1-100, default 10).'),
  minScore: z
    .number()
    .min(0)
    .max(1)
    .optional()
    .describe('Drop results weaker than this fraction of the best one (0-1; the best scores 1).'),
  candidateLimit: z
    .number()
    .int()
    .min(1)
    .max(MAX_CANDIDATE_LIMIT)
    .optional()
    .describe(
      'How many of the best fused documents are candidates: the reranker reads each, and results come from them ' +
        '(default 40; lower is faster but may miss results).',
    ),
  collections: z
    .array(z.string().min(1).max(MAX_COLLECTION_NAME_CHARS))
    .max(MAX_COLLECTIONS)
    .optional()
    .describe('Only search these collections (default, or [], all). An unknown name is an error.'),
  // Not in qmd 2.8 (it has no folder filter): ours, optional, so the peer's clients are unaffected.
  folder: z
    .string()
    .max(MAX_REF_CHARS)
    .optional()
    .describe(
      'Only documents under this folder, a path relative to the collection root (e.g. "2024/q1"), matched by ' +
        'whole segments ("2024" does not hold "2024x/"); in every collection searched, so combine with ' +
        'collections to pick one. Default, or "", the whole collection. No "..", absolute path or URI.',
    ),
  intent: z
    .string()
    .trim()
    .min(1)
    .max(MAX_INTENT_CHARS)
    .optional()
    .describe(
      'What the query is about, to tell senses apart (query "performance", intent "web page load times"). ' +
        'Folded into every vec search and given to the reranker; it does not search on its own.',
    ),
  rerank: z
    .boolean()
    .optional()
    .describe(
      'Rerank the candidates with the reranking model (default true when one is configured); false: the ' +
        'fusion’s order (RRF only), faster on a CPU.',
    ),
}).superRefine((args, ctx) => {
  const searches = args.searches?.length ?? 0;
  if (args.query === undefined && searches === 0) {
    ctx.addIssue({
      code: 'custom',
      path: ['query'],
      message: 'give query (plain text) or searches (typed lex/vec/hyde sub-searches)',
    });
  } else if (args.query !== undefined && searches > 0) {
    ctx.addIssue({ code: 'custom', path: ['searches'], message: 'give query or searches, not both' });
  }
});

export type QueryArguments = z.infer<typeof queryArguments>;

/** What the store is asked: the plain text or the sub-searches, and the options. */
export function toStoreQuery(
  args: QueryArguments,
  signal: AbortSignal,
): { input: string | SubSearch[]; options: QueryOptions } {
  return {
    // `searches: []` beside `query` means no sub-searches, as in qmd 2.8.
    input: args.searches?.length ? args.searches : (args.query ?? ''),
    options: {
      limit: args.limit,
      signal,
      // An empty list means "all", as in the peer (its clients send [] for no filter).
      ...(args.collections?.length ? { collections: args.collections } : {}),
      // Blank is "no folder", as [] is "all collections"; the store checks the rest (`folder.ts`).
      ...(args.folder?.trim() ? { folder: args.folder } : {}),
      ...(args.minScore !== undefined && { minScore: args.minScore }),
      ...(args.candidateLimit !== undefined && { candidateLimit: args.candidateLimit }),
      ...(args.intent !== undefined && { intent: args.intent }),
      ...(args.rerank !== undefined && { rerank: args.rerank }),
    },
  };
}

/**
 * The text a summary names the search by: the plain query, else qmd 2.8's choice among the
 * sub-searches (the first lex, else the first vec, else the first).
 */
export function primaryText(input: string | readonly SubSearch[]): string {
  if (typeof input === 'string') return input;
  return (input.find((s) => s.type === 'lex') ?? input.find((s) => s.type === 'vec') ?? input[0])?.query ?? '';
}
