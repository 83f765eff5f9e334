import type { CallToolResult, McpServer } from '@modelcontextprotocol/server';
import * as z from 'zod';
import { DEFAULT_MULTI_GET_MAX_BYTES } from '../../core/reader-types.js';
import type { McpDeps } from '../deps.js';
import { formatMultiGetSummary } from '../format.js';
import { MAX_BYTES_CEILING, MAX_PATTERN_CHARS } from '../limits.js';
import { runTool } from '../run.js';
import { documentResource, lineNumbersArgument, sliceMeta, sliceShape, strictArguments } from '../shapes.js';

/** qmd 2.8's `multi_get` arguments: `maxBytes` is a per-file cap, as there. */
const inputSchema = strictArguments('multi_get', {
  pattern: z
    .string()
    .trim()
    .min(1)
    .max(MAX_PATTERN_CHARS)
    .describe(
      'A glob (journal/2025-05*.md; *.md and **/2025-*.md match inside every collection) or a comma list ' +
        'of files and #docids, each as get accepts it.',
    ),
  maxLines: z.number().int().min(1).optional().describe('At most this many lines of each document.'),
  maxBytes: z
    .number()
    .int()
    .min(1)
    .max(MAX_BYTES_CEILING)
    .default(DEFAULT_MULTI_GET_MAX_BYTES)
    .describe('Skip a document whose text is larger than this (default 65536); it is listed with why.'),
  lineNumbers: lineNumbersArgument,
});

const outputSchema = {
  documents: z.array(z.object({ ...sliceShape, truncated: z.boolean().describe('maxLines cut it') })),
  skipped: z.array(z.object({ file: z.string(), reason: z.string() })),
};

/** `multi_get`: several indexed documents at once, each capped by `maxBytes`, all by a ceiling. */
export function registerMultiGetTool(server: McpServer, deps: McpDeps): void {
  server.registerTool(
    'multi_get',
    {
      title: 'Read several notes',
      description:
        'Read several indexed documents by glob (journal/2025-05*.md) or comma list (a.md, #docid). ' +
        'Documents larger than maxBytes are skipped and listed with why.',
      inputSchema,
      outputSchema: z.object(outputSchema),
      annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    },
    (args, ctx) =>
      runTool(deps, 'multi_get', ctx.mcpReq.signal, async (signal) => {
        const result = await deps.store.multiGet(args.pattern, {
          maxBytes: args.maxBytes,
          ...(args.maxLines !== undefined && { maxLines: args.maxLines }),
          lineNumbers: args.lineNumbers,
          // Whatever each file's cap, one reply never carries more than this.
          totalBytes: MAX_BYTES_CEILING,
          signal,
        });
        // One embedded resource per document: its URI says which document the text is, so the
        // text itself is only the document's (as the peer does).
        const content: CallToolResult['content'] = [
          { type: 'text', text: formatMultiGetSummary(result, args.pattern) },
          ...result.documents.map(documentResource),
        ];
        return {
          content,
          structuredContent: {
            documents: result.documents.map((doc) => ({ ...sliceMeta(doc), truncated: doc.truncated })),
            skipped: result.skipped.map((skip) => ({ file: skip.file, reason: skip.reason })),
          },
        };
      }),
  );
}
