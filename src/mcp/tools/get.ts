import type { CallToolResult, McpServer } from '@modelcontextprotocol/server';
import * as z from 'zod';
import type { McpDeps } from '../deps.js';
import { formatSliceNote } from '../format.js';
import { MAX_REF_CHARS } from '../limits.js';
import { runTool } from '../run.js';
import { documentResource, lineNumbersArgument, sliceMeta, sliceShape, strictArguments } from '../shapes.js';

/** qmd 2.8's `get` arguments, so prompts and skills written for it work here. */
const inputSchema = strictArguments('get', {
  file: z
    .string()
    .trim()
    .min(1)
    .max(MAX_REF_CHARS)
    .describe(
      'A document: collection/path.md or #docid as query returns them; also qmd://collection/path.md, ' +
        'a path without its collection or the unique end of one (meeting.md), or an absolute path inside ' +
        "a collection's folder. 'path:LINE' starts at LINE; 'path:FROM:COUNT' reads COUNT lines from FROM.",
    ),
  fromLine: z.number().int().min(1).optional().describe('First line to return (1-based); wins over a :LINE suffix.'),
  maxLines: z.number().int().min(1).optional().describe('At most this many lines; wins over a :FROM:COUNT suffix.'),
  lineNumbers: lineNumbersArgument,
});

/** `get`: one indexed document, whole or a line range. The store resolves the reference. */
export function registerGetTool(server: McpServer, deps: McpDeps): void {
  server.registerTool(
    'get',
    {
      title: 'Read a note',
      description:
        'Read one indexed document by the file or #docid that query returned. ' +
        'Use fromLine/maxLines (or file:LINE) for a slice of a long document. ' +
        'A miss suggests the closest indexed paths.',
      inputSchema,
      outputSchema: z.object(sliceShape),
      annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    },
    (args, ctx) =>
      runTool(deps, 'get', ctx.mcpReq.signal, () => {
        const slice = deps.store.get(args.file, {
          ...(args.fromLine !== undefined && { fromLine: args.fromLine }),
          ...(args.maxLines !== undefined && { maxLines: args.maxLines }),
          lineNumbers: args.lineNumbers,
        });
        const note = formatSliceNote(slice);
        // The document as an embedded resource, as qmd 2.8 returns it; a slice says so after it.
        const content: CallToolResult['content'] = [documentResource(slice)];
        if (note !== undefined) content.push({ type: 'text', text: note });
        return { content, structuredContent: sliceMeta(slice) };
      }),
  );
}
