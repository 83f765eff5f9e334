import type {
  CollectionInfo,
  ModelsReport,
  MultiGetResult,
  QueryResult,
  StatusReport,
  SubSearchRun,
} from '../core/reader-types.js';

/**
 * The text content of each tool: what a model reads. The same facts, typed, are in
 * `structuredContent`; these renderings are for reading, not parsing.
 */

/**
 * `Found 2 results for "pool timeout" (bm25: nothing is embedded yet):` then, per hit,
 * `#a1b2c3 87% notes/db.md:12 - Connection pools`, the snippet indented on one line after the
 * absolute lines it was taken from (`@@ -11,3 @@`), and the hit's context when one covers it. `file:line` is what `get` accepts, so a hit can be opened
 * where it matched. Typed or expanded sub-searches get a line saying what each ran as; a
 * rerank or an expansion that was wanted and not done is said after the header.
 */
export function formatQuery(query: string, result: QueryResult, options: { typed?: boolean } = {}): string {
  const mode = result.note ? `${result.mode}: ${result.note}` : result.mode;
  const flat = oneLine(query);
  const count = `${result.hits.length} result${result.hits.length === 1 ? '' : 's'}`;
  const lines = [
    result.hits.length === 0 ? `No results for "${flat}" (${mode}).` : `Found ${count} for "${flat}" (${mode}):`,
  ];
  if (options.typed || result.searches.some((run) => run.expanded))
    lines.push(`Searches: ${result.searches.map(formatRun).join('; ')}`);
  if (result.expansionNote !== undefined) lines.push(sentence(result.expansionNote));
  if (result.rerankNote !== undefined) lines.push(sentence(result.rerankNote));
  else if (result.reranked) lines.push('Reranked.');
  for (const hit of result.hits) {
    const where = hit.line === undefined ? hit.file : `${hit.file}:${hit.line}`;
    lines.push('', `${hit.docid} ${Math.round(hit.score * 100)}% ${where} - ${hit.title}`);
    const snippet = oneLine(hit.snippet);
    // The lines it came from, diff-style, so a client can locate it by itself (the peer
    // numbers a `@@ -300,4 @@` header the same way): `get file:FROM:COUNT` reads them.
    const range =
      hit.snippetRange === undefined ? '' : `@@ -${hit.snippetRange.fromLine},${hit.snippetRange.lines} @@ `;
    if (snippet !== '') lines.push(`  ${range}${snippet}`);
    if (hit.context !== undefined) lines.push(`  Context: ${oneLine(hit.context)}`);
  }
  return lines.join('\n');
}

function sentence(note: string): string {
  return `${note[0]?.toUpperCase()}${note.slice(1)}.`;
}

/** `lex "pool timeout" → bm25, 12 candidates`, `vec "…" → skipped`, `hyde (expanded) "…" → vector, 30 candidates`. */
function formatRun(run: SubSearchRun): string {
  const what = `${run.type}${run.expanded ? ' (expanded)' : ''} "${oneLine(run.query)}"`;
  return run.ran === 'skipped' ? `${what} → skipped` : `${what} → ${run.ran}, ${run.candidates} candidates`;
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/**
 * What a model reads of a fetched document: the contexts that cover it first, as an HTML
 * comment as qmd 2.8 writes it (`<!-- Context: … -->`, a blank line, then the text), so a note
 * opened by path still says what its folder is. A `-->` inside a context would end the comment
 * early: it is written `-- >`.
 */
export function withContext(text: string, context: string | undefined): string {
  if (context === undefined) return text;
  return `<!-- Context: ${context.replaceAll('-->', '-- >')} -->\n\n${text}`;
}

/** A slice is announced only when it is one: a whole document is returned as it is. */
export function formatSliceNote(slice: { fromLine: number; lines: number; totalLines: number }): string | undefined {
  const last = slice.fromLine + slice.lines - 1;
  if (slice.fromLine === 1 && last >= slice.totalLines) return undefined;
  if (slice.lines === 0) return `[no lines: the document has ${slice.totalLines}]`;
  const more = last < slice.totalLines ? `; more with fromLine=${last + 1}` : '';
  return `[lines ${slice.fromLine}-${last} of ${slice.totalLines}${more}]`;
}

/**
 * What `multi_get` found, in the words of qmd 2.8 where a client written for it looks for them:
 * `No files matched pattern: P` when nothing was read, and `File not found: X` for a list item
 * that names no indexed document; then ours: `2 documents, 1 skipped.`, each document, and why
 * each other one was left out.
 */
export function formatMultiGetSummary(result: MultiGetResult, pattern: string): string {
  const docs = result.documents.length;
  const lines =
    docs === 0
      ? [`No files matched pattern: ${oneLine(pattern)}`]
      : [`${docs} document${docs === 1 ? '' : 's'}, ${result.skipped.length} skipped.`];
  for (const doc of result.documents) {
    lines.push(
      `  ${doc.file} ${doc.docid} (${doc.lines} of ${doc.totalLines} lines${doc.truncated ? ', truncated' : ''})`,
    );
  }
  for (const skip of result.skipped) {
    if (skip.kind === 'not-found') lines.push(`  File not found: ${skip.file}${skip.reason.slice('not found'.length)}`);
    else if (skip.kind === 'no-match') {
      // Said once, as the header, when it was the whole pattern.
      if (docs > 0 || skip.file !== pattern.trim()) lines.push(`  No files matched pattern: ${skip.file}`);
    } else lines.push(`  skipped ${skip.file}: ${skip.reason}`);
  }
  return lines.join('\n');
}

export function formatStatus(status: StatusReport): string {
  const { embeddings } = status;
  const lines = [
    `Index: ${status.index} (${formatBytes(status.sizeBytes)}), ${status.documents} documents`,
    `Collections: ${status.collections.length}`,
    ...status.collections.map(formatCollection),
    `Embeddings: ${embeddings.embeddedChunks}/${embeddings.chunks} chunks embedded` +
      ` (model: ${embeddings.model ?? 'none'}, vectors: ${embeddings.vectorBackend});` +
      ` ${status.needsEmbedding} document${status.needsEmbedding === 1 ? '' : 's'} need embedding` +
      `; vector index: ${status.hasVectorIndex ? 'yes' : 'no'}`,
  ];
  if (status.contexts.length > 0) {
    lines.push(`Contexts: ${status.contexts.length}`);
    for (const c of status.contexts) lines.push(`  - ${c.path}: ${oneLine(c.text)}`);
  }
  return lines.join('\n');
}

/**
 * `llama.cpp: vulkan on NVIDIA H200 (VRAM 139.8 GiB, 139.1 GiB free; --gpu auto), 16 threads`
 * or `llama.cpp: not loaded yet (…)`, then one line per model:
 * `  embed: hf:… (loaded, 25 of 25 layers on the GPU)`, `  rerank: off`.
 */
export function formatModels(report: ModelsReport): string {
  const { backend } = report;
  let head: string;
  if (backend === undefined) {
    head = `llama.cpp: not loaded yet (it loads with the first query that needs a model; --gpu ${report.requested})`;
  } else if (backend.gpu === 'cpu' || backend.devices.length === 0) {
    const why = backend.fallback === undefined ? '' : `: ${backend.fallback}`;
    head = `llama.cpp: the CPU${why} (--gpu ${report.requested}), ${threads(report.threads)}`;
  } else {
    const vram = report.vram === undefined ? '' : `VRAM ${gib(report.vram.total)}, ${gib(report.vram.free)} free; `;
    head = `llama.cpp: ${backend.gpu} on ${backend.devices.join(', ')} (${vram}--gpu ${report.requested}), ${threads(report.threads)}`;
  }
  const lines = [head];
  if (report.error !== undefined) lines.push(`  could not load llama.cpp: ${oneLine(report.error)}`);
  for (const role of ['embed', 'rerank', 'expand'] as const) {
    const spec = report.configured[role];
    const model = report.models.find((m) => m.role === role);
    if (spec === null) lines.push(`  ${role}: off`);
    else if (model === undefined || !model.loaded) lines.push(`  ${role}: ${spec} (not loaded)`);
    else {
      const layers = model.layers === undefined ? '' : `, ${model.gpuLayers ?? 0} of ${model.layers} layers on the GPU`;
      lines.push(`  ${role}: ${spec} (loaded${layers})`);
    }
  }
  return lines.join('\n');
}

function threads(count: number): string {
  return `${count} thread${count === 1 ? '' : 's'}`;
}

function gib(bytes: number): string {
  return `${(bytes / 2 ** 30).toFixed(1)} GiB`;
}

export function formatCollection(collection: CollectionInfo): string {
  return `  - ${collection.name}: ${collection.root} (${collection.mask}), ${collection.documents} documents, updated ${collection.updatedAt}`;
}

function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}
