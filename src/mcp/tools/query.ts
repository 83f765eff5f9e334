import type { McpServer } from '@modelcontextprotocol/server';
import * as z from 'zod';
import type { McpDeps } from '../deps.js';
import { formatQuery } from '../format.js';
import { MAX_COLLECTION_NAME_CHARS, MAX_COLLECTIONS, MAX_QUERY_CHARS } from '../limits.js';
import { runTool } from '../run.js';

const inputSchema = {
  query: z
    .string()
    .trim()
    .min(1)
    .max(MAX_QUERY_CHARS)
    .describe('What to look for: keywords or a natural-language question.'),
  limit: z.number().int().min(1).max(100).default(10).describe('At most this many results (1-100, default 10).'),
  collections: z
    .array(z.string().min(1).max(MAX_COLLECTION_NAME_CHARS))
    .max(MAX_COLLECTIONS)
    .optional()
    .describe('Only search these collections (default: all). An unknown name is an error.'),
  minScore: z.number().min(0).max(1).optional().describe('Drop results scoring below this (0-1).'),
};

const outputSchema = {
  mode: z.enum(['bm25', 'vector', 'hybrid']).describe('How the results were ranked.'),
  note: z.string().optional().describe('Why the mode is what it is.'),
  results: z.array(
    z.object({
      file: z.string().describe('collection/path.md, as get accepts it'),
      docid: z.string().describe('#docid, as get accepts it'),
      title: z.string(),
      score: z.number().describe('0-1, higher is better'),
      snippet: z.string(),
      line: z.number().int().optional().describe('1-based line of the best match'),
    }),
  ),
};

/**
 * `query`: the ranked search every session starts with. Hybrid (BM25 and vectors fused by
 * reciprocal rank fusion) when the index is embedded with the server's model, else BM25 with a
 * note saying why; the mode is in both the text and `structuredContent`.
 */
export function registerQueryTool(server: McpServer, deps: McpDeps): void {
  server.registerTool(
    'query',
    {
      title: 'Search notes',
      description:
        'Search the indexed markdown notes by keywords and, when the notes are embedded, by meaning ' +
        '(hybrid ranking; the result says which mode ran). Returns a ranked list of documents with a ' +
        'snippet each; open one with `get` (its file or #docid) or several with `multi_get`.',
      inputSchema: z.object(inputSchema),
      outputSchema: z.object(outputSchema),
      annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    },
    (args, ctx) =>
      runTool(deps, 'query', ctx.mcpReq.signal, async (signal) => {
        const result = await deps.store.query(args.query, {
          limit: args.limit,
          signal,
          // An empty list means "all", as in the peer (its clients send [] for no filter).
          ...(args.collections?.length ? { collections: args.collections } : {}),
          ...(args.minScore === undefined ? {} : { minScore: args.minScore }),
        });
        // Built field by field: the client validates against the declared schema, which
        // refuses properties it does not list (`additionalProperties: false`).
        const results = result.hits.map((hit) => ({
          file: hit.file,
          docid: hit.docid,
          title: hit.title,
          score: hit.score,
          snippet: hit.snippet,
          ...(hit.line === undefined ? {} : { line: hit.line }),
        }));
        return {
          content: [{ type: 'text', text: formatQuery(args.query, result) }],
          structuredContent: { mode: result.mode, ...(result.note ? { note: result.note } : {}), results },
        };
      }),
  );
}
