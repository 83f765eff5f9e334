import type { IndexReport, StatusReport } from '../core/types.js';
import { formatIgnored, type IgnoredHint } from './commands/index-messages.js';

/** The backend and models, as the MCP `status` tool words them (one wording for both). */
export { formatModels } from '../mcp/format.js';

/** The summary of `collection add` and `update`; `hint` says how to include files the mask passed by. */
export function formatReport(report: IndexReport, hint?: IgnoredHint): string {
  const parts = [
    `${report.scanned} file${report.scanned === 1 ? '' : 's'} scanned`,
    `${report.added} added`,
    `${report.updated} updated`,
    `${report.removed} removed`,
    `${report.unchanged} unchanged`,
  ];
  const seconds = (report.ms / 1000).toFixed(2);
  const lines = [`${parts.join(', ')} in ${seconds} s`];
  const ignored = hint && formatIgnored(report.ignored, hint);
  if (ignored !== undefined) lines.push(ignored);
  for (const e of report.errors.slice(0, 20)) lines.push(`  skipped ${e.file}: ${e.error}`);
  if (report.errors.length > 20) lines.push(`  … and ${report.errors.length - 20} more skipped`);
  return lines.join('\n');
}

/** `modelLine`: what `embeddingModelLine` says of the model (it looks at files; this only formats). */
export function formatStatus(status: StatusReport, modelLine?: string): string {
  const mb = (status.sizeBytes / 1024 / 1024).toFixed(1);
  const e = status.embeddings;
  return [
    `Index: ${status.index} (${mb} MB)`,
    `Documents: ${status.documents} in ${status.collections.length} collection(s)`,
    ...status.collections.map(
      (c) => `  ${c.name}: ${c.documents} documents, ${c.root} (${c.mask}), updated ${c.updatedAt}`,
    ),
    `Embeddings: ${e.embeddedChunks}/${e.chunks} chunks embedded (vectors: ${e.vectorBackend})`,
    ...(modelLine === undefined ? [] : [modelLine]),
    `Needs embedding: ${status.needsEmbedding} document${status.needsEmbedding === 1 ? '' : 's'}`,
    ...(status.contexts.length === 0
      ? []
      : [
          `Contexts: ${status.contexts.length}`,
          ...status.contexts.map((c) => `  ${c.path}: ${c.text.replace(/\s+/g, ' ')}`),
        ]),
  ].join('\n');
}
