import type { McpServer } from '@modelcontextprotocol/server';
import * as z from 'zod';
import type { ModelsReport, StatusReport } from '../../core/reader-types.js';
import { isQmdError } from '../../errors.js';
import type { McpDeps } from '../deps.js';
import { formatModels, formatStatus } from '../format.js';
import { runTool } from '../run.js';
import { strictArguments } from '../shapes.js';
import { formatWatch, pickWatch, watchShape } from '../watch-status.js';

/** Ours and qmd 2.8's fields: a client written against either reads what it knows. */
const outputSchema = {
  index: z.string().describe('absolute path of the index file'),
  sizeBytes: z.number(),
  documents: z.number().int(),
  totalDocuments: z.number().int().describe("qmd 2.8's name for documents"),
  needsEmbedding: z
    .number()
    .int()
    .describe('documents (distinct texts) qmd embed would chunk or embed for the index’s model'),
  hasVectorIndex: z.boolean().describe('vector search can answer (some chunk has a vector)'),
  collections: z.array(
    z.object({
      name: z.string(),
      root: z.string(),
      mask: z.string(),
      documents: z.number().int(),
      updatedAt: z.string().describe('ISO time of the last scan'),
      path: z.string().describe("qmd 2.8's name for root"),
      pattern: z.string().describe("qmd 2.8's name for mask"),
      lastUpdated: z.string().describe('ISO time of the newest modification among its documents'),
    }),
  ),
  contexts: z
    .array(z.object({ path: z.string().describe('/, collection or collection/dir'), text: z.string() }))
    .describe('What each place holds (qmd context add)'),
  embeddings: z.object({
    model: z.string().nullable().describe('what the index is embedded with: an absolute .gguf path or an hf: URI'),
    fingerprint: z.string().nullable().describe('that model file’s fingerprint; only its vectors are searched'),
    chunks: z.number().int(),
    embeddedChunks: z.number().int(),
    vectorBackend: z.enum(['sqlite-vec', 'fallback', 'none']),
  }),
  llm: z
    .object({
      requested: z.enum(['auto', 'off', 'metal', 'cuda', 'vulkan']).describe('the GPU choice (--gpu, QMD_GPU)'),
      backend: z
        .enum(['metal', 'cuda', 'vulkan', 'cpu'])
        .nullable()
        .describe('what llama.cpp runs on; null until the first query that needs a model loads it'),
      devices: z.array(z.string()).describe('the GPU devices llama.cpp uses'),
      fallback: z.string().optional().describe('why it is not on a GPU, when asked for one'),
      vram: z
        .object({ total: z.number(), used: z.number(), free: z.number() })
        .optional()
        .describe('the GPU memory, bytes'),
      threads: z.number().int().describe('llama.cpp threads per model'),
      models: z.array(
        z.object({
          role: z.enum(['embed', 'rerank', 'expand']),
          model: z.string().nullable().describe('the configured model; null: turned off'),
          loaded: z.boolean(),
          gpuLayers: z.number().int().optional().describe('layers on the GPU, once loaded'),
          layers: z.number().int().optional(),
        }),
      ),
    })
    .describe('llama.cpp: the backend (GPU or CPU) and each model of a query, as this server has them'),
  watch: watchShape.optional(),
};

/** `status`: the index, its collections, contexts and embeddings (the StatusReport). */
export function registerStatusTool(server: McpServer, deps: McpDeps): void {
  server.registerTool(
    'status',
    {
      title: 'Index status',
      description:
        'Show the index: its file, collections (name, root, document count, last update), the contexts ' +
        'that describe them, embeddings (how many documents still need embedding), and how the index is kept ' +
        'fresh as notes change (what is watched or polled, what is pending, the last change seen).',
      inputSchema: strictArguments('status', {}),
      outputSchema: z.object(outputSchema),
      annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    },
    (_args, ctx) =>
      runTool(deps, 'status', ctx.mcpReq.signal, async (signal) => {
        const models = await deps.store.models();
        const watch = deps.watch?.();
        const watchText = watch === undefined ? '' : `\n${formatWatch(watch)}`;
        const watchField = watch === undefined ? {} : { watch: pickWatch(watch) };
        let status: StatusReport;
        try {
          status = await deps.store.readStatus({ signal });
        } catch (error) {
          // No index yet (the server started before the first `qmd collection add`): what the
          // status is, not a failure. The line says what to run; the counts are all zero.
          if (isQmdError(error) && error.code === 'INDEX_MISSING') {
            return {
              content: [{ type: 'text', text: `${error.message}\n${formatModels(models)}${watchText}` }],
              structuredContent: { ...noIndexYet(deps.store.path, models), ...watchField },
            };
          }
          throw error;
        }
        return {
          content: [{ type: 'text', text: `${formatStatus(status)}\n${formatModels(models)}${watchText}` }],
          structuredContent: { ...pickStatus(status, models), ...watchField },
        };
      }),
  );
}

/** Field by field, so a store that reports more than this contract still validates. */
function pickStatus(status: StatusReport, models: ModelsReport): z.infer<z.ZodObject<typeof outputSchema>> {
  const { embeddings } = status;
  return {
    index: status.index,
    sizeBytes: status.sizeBytes,
    documents: status.documents,
    totalDocuments: status.totalDocuments,
    needsEmbedding: status.needsEmbedding,
    hasVectorIndex: status.hasVectorIndex,
    collections: status.collections.map((c) => ({
      name: c.name,
      root: c.root,
      mask: c.mask,
      documents: c.documents,
      updatedAt: c.updatedAt,
      path: c.path,
      pattern: c.pattern,
      lastUpdated: c.lastUpdated,
    })),
    contexts: status.contexts.map((c) => ({ path: c.path, text: c.text })),
    embeddings: {
      model: embeddings.model,
      fingerprint: embeddings.fingerprint,
      chunks: embeddings.chunks,
      embeddedChunks: embeddings.embeddedChunks,
      vectorBackend: embeddings.vectorBackend,
    },
    llm: pickModels(models),
  };
}

/** The `llm` field: the backend (once loaded) and each model of a query. */
function pickModels(models: ModelsReport): z.infer<z.ZodObject<typeof outputSchema>>['llm'] {
  const { backend } = models;
  return {
    requested: models.requested,
    backend: backend?.gpu ?? null,
    devices: backend?.devices ?? [],
    ...(backend?.fallback !== undefined && { fallback: backend.fallback }),
    ...(models.vram !== undefined && { vram: models.vram }),
    threads: models.threads,
    models: (['embed', 'rerank', 'expand'] as const).map((role) => {
      const model = models.models.find((m) => m.role === role);
      return {
        role,
        model: models.configured[role],
        loaded: model?.loaded ?? false,
        ...(model?.gpuLayers !== undefined && model.loaded && { gpuLayers: model.gpuLayers }),
        ...(model?.layers !== undefined && model.loaded && { layers: model.layers }),
      };
    }),
  };
}

/** The status of an index that does not exist yet: its path, and nothing in it. */
function noIndexYet(index: string, models: ModelsReport): z.infer<z.ZodObject<typeof outputSchema>> {
  return {
    index,
    sizeBytes: 0,
    documents: 0,
    totalDocuments: 0,
    needsEmbedding: 0,
    hasVectorIndex: false,
    collections: [],
    contexts: [],
    embeddings: { model: null, fingerprint: null, chunks: 0, embeddedChunks: 0, vectorBackend: 'none' },
    llm: pickModels(models),
  };
}
