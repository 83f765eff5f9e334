import type { CollectionInfo, IndexReport, QueryResult, SearchHit, StatusReport } from '../store/types.js';
import { formatIgnored, type IgnoredHint } from './commands/index-messages.js';
import { fitWidth, type OutputStyle, PLAIN_OUTPUT } from './terminal/terminal.js';

/** The backend and models, as the MCP `status` tool words them (one wording for both). */
export { formatModels } from '../mcp/format.js';

/**
 * `#1a2b3c4d  0.87  notes/a.md:12  Title`, then the snippet indented on one line. On a terminal
 * (`style`): coloured, and the snippet cut to the width; piped, plain and whole.
 */
export function formatHits(hits: SearchHit[], header?: string, style: OutputStyle = PLAIN_OUTPUT): string {
  const { paint, width } = style;
  const lines: string[] = header ? [paint.dim(header)] : [];
  if (hits.length === 0) lines.push('No results.');
  for (const hit of hits) {
    const where = hit.line !== undefined ? `${hit.file}:${hit.line}` : hit.file;
    lines.push(
      `${paint.dim(hit.docid)}  ${paint.green(hit.score.toFixed(2))}  ${paint.cyan(where)}  ${paint.bold(hit.title)}`,
    );
    const snippet = hit.snippet.replace(/\s+/g, ' ').trim();
    if (snippet) lines.push(width === undefined ? `    ${snippet}` : fitWidth(`    ${snippet}`, width - 1));
  }
  return lines.join('\n');
}

export function formatQueryResult(result: QueryResult, style: OutputStyle = PLAIN_OUTPUT): string {
  const notes = [result.note, result.expansionNote, result.rerankNote].filter((n) => n !== undefined);
  const how = `${result.mode}${result.reranked ? ', reranked' : ''}`;
  return formatHits(result.hits, notes.length > 0 ? `(${how}: ${notes.join('; ')})` : `(${how})`, style);
}

/** Results as JSON, each with its path as `get` accepts it. */
export function hitsJson(hits: SearchHit[], extra: Record<string, unknown> = {}): string {
  return JSON.stringify({ ...extra, results: hits }, null, 2);
}

/** The summary of `collection add` and `update`; `hint` says how to include files the mask passed by. */
export function formatReport(report: IndexReport, hint?: IgnoredHint): string {
  const parts = [
    `${report.scanned} files scanned`,
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

export function formatCollections(collections: CollectionInfo[]): string {
  if (collections.length === 0) return 'No collections yet. Add one with: qmd collection add DIR';
  return collections.map((c) => `${c.name}  ${c.documents} documents  ${c.root}  (${c.mask})`).join('\n');
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
