import type { CallToolResult, McpServer } from '@modelcontextprotocol/server';
import * as z from 'zod';
import type { McpDeps } from '../deps.js';
import { formatMultiGetSummary } from '../format.js';
import { MAX_BYTES_CEILING, MAX_PATTERN_CHARS } from '../limits.js';
import { assertInsideCollections, documentUri, stripScheme } from '../refs.js';
import { runTool } from '../run.js';
import { sliceMeta, sliceShape } from '../shapes.js';

const inputSchema = {
  pattern: z
    .string()
    .trim()
    .min(1)
    .max(MAX_PATTERN_CHARS)
    .describe('A glob over collection/path (e.g. notes/2025-*.md) or a comma list of files and #docids.'),
  maxBytes: z
    .number()
    .int()
    .min(1)
    .max(MAX_BYTES_CEILING)
    .optional()
    .describe('At most this many bytes of text in all; documents past it are listed as skipped.'),
};

const outputSchema = {
  documents: z.array(z.object({ ...sliceShape, truncated: z.boolean() })),
  skipped: z.array(z.object({ file: z.string(), reason: z.string() })),
};

/** `multi_get`: several indexed documents at once, bounded by `maxBytes`. */
export function registerMultiGetTool(server: McpServer, deps: McpDeps): void {
  server.registerTool(
    'multi_get',
    {
      title: 'Read several notes',
      description:
        'Read several indexed documents by glob (notes/2025-*.md) or comma list (a.md, #docid). ' +
        'Text beyond maxBytes is left out and listed as skipped.',
      inputSchema: z.object(inputSchema),
      outputSchema: z.object(outputSchema),
      annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    },
    (args, ctx) =>
      runTool(deps, 'multi_get', ctx.mcpReq.signal, () => {
        // The store skips a bad item of a list with its reason; a traversal attempt anywhere in
        // the pattern refuses the whole call instead. Splitting inside a brace glob (`{a,b}`)
        // only makes the checked pieces smaller, which cannot hide a `..` segment.
        for (const item of args.pattern.split(',')) assertInsideCollections(stripScheme(item.trim()));
        const options = args.maxBytes === undefined ? {} : { maxBytes: args.maxBytes };
        const result = deps.store.multiGet(args.pattern, options);
        // One embedded resource per document: its URI says which document the text is, so the
        // text itself stays exactly the document's (as the peer does).
        const content: CallToolResult['content'] = [{ type: 'text', text: formatMultiGetSummary(result) }];
        for (const doc of result.documents) {
          content.push({
            type: 'resource',
            resource: { uri: documentUri(doc.file), mimeType: 'text/markdown', text: doc.text },
          });
        }
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
