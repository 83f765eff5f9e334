import type { McpServer } from '@modelcontextprotocol/server';
import * as z from 'zod';
import type { McpDeps } from '../deps.js';
import { formatQuery } from '../format.js';
import { primaryText, queryArguments, toStoreQuery } from '../query-args.js';
import { queryOutputShape, queryStructured } from '../query-reply.js';
import { runTool } from '../run.js';
import { withCatchingUp } from '../watch-status.js';

/**
 * `query`: the ranked search every session starts with, with qmd 2.8's arguments, so a client
 * written for the peer works unchanged. A plain `query` is expanded by the query expansion
 * model, then BM25 and vectors fused by reciprocal rank fusion when the index is embedded with
 * the server's model (else BM25 with a note saying why), then reranked; `searches` runs typed
 * lex/vec/hyde sub-searches and fuses and reranks them the same way. The mode, what each
 * sub-search ran as, and whether it was expanded and reranked are in the text and
 * `structuredContent` (search/query.ts has the pipeline).
 */
export function registerQueryTool(server: McpServer, deps: McpDeps): void {
  server.registerTool(
    'query',
    {
      title: 'Search notes',
      description:
        'Search the indexed markdown notes by keywords and, when the notes are embedded, by meaning ' +
        '(hybrid ranking; the result says which mode ran). Either `query` (plain text) or `searches`, typed ' +
        'sub-searches fused together: lex (BM25 keywords, "phrases", prefix*), vec (a question, by meaning), ' +
        'hyde (a passage that looks like the answer, by meaning). `intent` says what the query is about; ' +
        '`collections` and `folder` (a folder inside them) narrow where it looks. ' +
        'Returns a ranked list of documents with a snippet each, and the context of their folder when one is ' +
        'set; open one with `get` (its file or #docid) or several with `multi_get`.',
      inputSchema: queryArguments,
      outputSchema: z.object(queryOutputShape),
      annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    },
    (args, ctx) =>
      runTool(deps, 'query', ctx.mcpReq.signal, async (signal) => {
        const { input, options } = toStoreQuery(args, signal);
        const found = await deps.store.query(input, options);
        const result = withCatchingUp(found, deps.watch?.().vectorsPending ?? 0);
        return {
          content: [
            { type: 'text', text: formatQuery(primaryText(input), result, { typed: typeof input !== 'string' }) },
          ],
          structuredContent: queryStructured(result),
        };
      }),
  );
}
