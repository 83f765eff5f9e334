import type { CallToolResult, McpServer } from '@modelcontextprotocol/server';
import * as z from 'zod';
import { isQmdError } from '../../errors.js';
import type { DocumentSlice, Store } from '../../store/types.js';
import type { McpDeps } from '../deps.js';
import { formatSliceNote } from '../format.js';
import { MAX_REF_CHARS } from '../limits.js';
import { assertInsideCollections, splitLineSuffix, stripScheme } from '../refs.js';
import { runTool } from '../run.js';
import { sliceMeta, sliceShape } from '../shapes.js';

const inputSchema = {
  file: z
    .string()
    .trim()
    .min(1)
    .max(MAX_REF_CHARS)
    .describe('A path as query returns it (collection/path.md, optionally :LINE) or a #docid.'),
  fromLine: z.number().int().min(1).optional().describe('First line to return (1-based).'),
  maxLines: z.number().int().min(1).optional().describe('At most this many lines.'),
};

/** `get`: one indexed document, whole or a line range. */
export function registerGetTool(server: McpServer, deps: McpDeps): void {
  server.registerTool(
    'get',
    {
      title: 'Read a note',
      description:
        'Read one indexed document by the file or #docid that query returned. ' +
        'Use fromLine/maxLines for a slice of a long document.',
      inputSchema: z.object(inputSchema),
      outputSchema: z.object(sliceShape),
      annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    },
    (args, ctx) =>
      runTool(deps, 'get', ctx.mcpReq.signal, () => {
        const slice = getSlice(deps.store, args.file, args.fromLine, args.maxLines);
        const note = formatSliceNote(slice);
        const content: CallToolResult['content'] = [{ type: 'text', text: slice.text }];
        if (note !== undefined) content.push({ type: 'text', text: note });
        return { content, structuredContent: sliceMeta(slice) };
      }),
  );
}

/**
 * The peer accepts `path.md:120` for "from line 120". The literal reference is tried first, so
 * a file whose name really ends in `:digits` stays readable.
 */
function getSlice(store: Store, ref: string, fromLine?: number, maxLines?: number): DocumentSlice {
  // Checked decoded; the store is given the reference as sent and decodes qmd:// itself.
  assertInsideCollections(stripScheme(ref));
  const options = { ...(fromLine === undefined ? {} : { fromLine }), ...(maxLines === undefined ? {} : { maxLines }) };
  const suffixed = fromLine === undefined ? splitLineSuffix(ref) : undefined;
  if (suffixed === undefined) return store.get(ref, options);
  try {
    return store.get(ref, options);
  } catch (error) {
    // NOT_FOUND for a path, BAD_ARGUMENT for `#docid:LINE` (not a valid docid as it is).
    if (!isQmdError(error) || (error.code !== 'NOT_FOUND' && error.code !== 'BAD_ARGUMENT')) throw error;
    return store.get(suffixed.ref, { ...options, fromLine: suffixed.line });
  }
}
