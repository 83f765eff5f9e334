import type { McpServer } from '@modelcontextprotocol/server';
import * as z from 'zod';
import type { StatusReport } from '../../store/types.js';
import type { McpDeps } from '../deps.js';
import { formatStatus } from '../format.js';
import { runTool } from '../run.js';

const outputSchema = {
  index: z.string().describe('absolute path of the index file'),
  sizeBytes: z.number(),
  documents: z.number().int(),
  collections: z.array(
    z.object({
      name: z.string(),
      root: z.string(),
      mask: z.string(),
      documents: z.number().int(),
      updatedAt: z.string(),
    }),
  ),
  embeddings: z.object({
    model: z.string().nullable(),
    chunks: z.number().int(),
    embeddedChunks: z.number().int(),
    vectorBackend: z.enum(['sqlite-vec', 'fallback', 'none']),
  }),
};

/** `status`: the index, its collections and embeddings (the StatusReport). */
export function registerStatusTool(server: McpServer, deps: McpDeps): void {
  server.registerTool(
    'status',
    {
      title: 'Index status',
      description: 'Show the index: its file, collections (name, root, document count) and embeddings.',
      inputSchema: z.object({}),
      outputSchema: z.object(outputSchema),
      annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    },
    (_args, ctx) =>
      runTool(deps, 'status', ctx.mcpReq.signal, () => {
        const status = deps.store.status();
        return { content: [{ type: 'text', text: formatStatus(status) }], structuredContent: pickStatus(status) };
      }),
  );
}

/** Field by field, so a store that reports more than this contract still validates. */
function pickStatus(status: StatusReport): z.infer<z.ZodObject<typeof outputSchema>> {
  const { embeddings } = status;
  return {
    index: status.index,
    sizeBytes: status.sizeBytes,
    documents: status.documents,
    collections: status.collections.map((c) => ({
      name: c.name,
      root: c.root,
      mask: c.mask,
      documents: c.documents,
      updatedAt: c.updatedAt,
    })),
    embeddings: {
      model: embeddings.model,
      chunks: embeddings.chunks,
      embeddedChunks: embeddings.embeddedChunks,
      vectorBackend: embeddings.vectorBackend,
    },
  };
}
