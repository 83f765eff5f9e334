import { openStore, type Store } from '../../core/index.js';
import { privacyProblems } from '../../store/private.js';
import type { CliContext } from '../context.js';
import { embedStoreOptions } from '../embed-model.js';
import { formatModels, formatStatus } from '../format.js';
import { formatDocuments } from '../formats/documents.js';
import { type FormatFlags, outputFormat } from '../formats/output-format.js';
import { embeddingModelLine } from '../model-status.js';
import { modelStoreOptions } from '../query-models.js';
import { printHits, type QueryFlags, type SearchFlags, searchOptions, warningsHeard } from './search-output.js';

/** `qmd search QUERY`: BM25 only. */
export async function search(ctx: CliContext, query: string, flags: SearchFlags) {
  const store = openStore(ctx.indexPath, { readonly: true, log: ctx.log });
  try {
    const hits = store.search(query, searchOptions(flags));
    printHits(ctx, store, hits, flags, {
      mode: 'bm25',
      searches: [{ type: 'lex', query, ran: 'bm25', candidates: hits.length }],
    });
  } finally {
    await store.close();
  }
}

/** `qmd query QUERY`: what the MCP `query` tool runs (expanded, hybrid when embedded, else BM25, reranked). */
export async function query(ctx: CliContext, text: string, flags: SearchFlags & QueryFlags) {
  const { log, warned } = warningsHeard(ctx.log);
  const store = openStore(ctx.indexPath, {
    readonly: true,
    log,
    ...embedStoreOptions(ctx),
    ...modelStoreOptions(ctx, { query: true }),
  });
  try {
    const result = await store.query(text, {
      ...searchOptions(flags),
      ...(flags.intent !== undefined && { intent: flags.intent }),
      ...(flags.candidateLimit !== undefined && { candidateLimit: flags.candidateLimit }),
      ...(flags.rerank === false && { rerank: false }),
      ...(flags.expand === false && { expand: false }),
    });
    printHits(ctx, store, result.hits, flags, result, warned);
  } finally {
    await store.close();
  }
}

export interface GetFlags {
  from?: number;
  lines?: number;
  /** `--line-numbers`; qmd 2.x's `--no-line-numbers` is the default here (commander sets false). */
  lineNumbers?: boolean;
  json?: boolean;
  /** qmd 2.x's `--full`: the whole document, which `get` prints unless given a range. */
  full?: boolean;
}

/**
 * `qmd get REF [--from LINE] [--lines N] [--line-numbers]`: the indexed text, as is unless
 * asked for numbers (scripts read this output: docs/design.md §6). REF is anything the MCP
 * `get` takes, `REF:LINE` and `REF:FROM:COUNT` included; the store resolves it.
 */
export async function get(ctx: CliContext, ref: string, flags: GetFlags) {
  const store = openStore(ctx.indexPath, { readonly: true, log: ctx.log });
  try {
    const slice = store.get(ref, {
      ...(flags.from !== undefined && { fromLine: flags.from }),
      ...(flags.lines !== undefined && { maxLines: flags.lines }),
      lineNumbers: flags.lineNumbers ?? false,
    });
    ctx.out(flags.json ? JSON.stringify(slice, null, 2) : slice.text);
  } finally {
    await store.close();
  }
}

export interface MultiGetFlags extends FormatFlags {
  maxBytes?: number;
  lines?: number;
  lineNumbers?: boolean;
}

/**
 * `qmd multi-get PATTERN [--max-bytes N] [-l N] [--line-numbers] [--json|--csv|--md|--xml|--files]`:
 * several documents, in qmd 2.x's formats; a document over `--max-bytes` is listed as skipped.
 * What names nothing is said on stderr in qmd 2.x's words, not listed: `No files matched
 * pattern: P` for a glob, `File not found: X` for a list item; nothing found at all is exit 1
 * with stdout empty (qmd 2.x: the same line and exit 1 for a glob).
 */
export async function multiGet(ctx: CliContext, pattern: string, flags: MultiGetFlags) {
  const store = openStore(ctx.indexPath, { readonly: true, log: ctx.log });
  try {
    const result = await store.multiGet(pattern, {
      ...(flags.maxBytes !== undefined && { maxBytes: flags.maxBytes }),
      ...(flags.lines !== undefined && { maxLines: flags.lines }),
      lineNumbers: flags.lineNumbers ?? false,
    });
    const listed = { ...result, skipped: result.skipped.filter((s) => s.kind === 'too-large' || s.kind === 'full') };
    for (const skip of result.skipped) {
      if (skip.kind === 'no-match') ctx.log.line(`No files matched pattern: ${skip.file}`);
      else if (skip.kind === 'not-found')
        ctx.log.line(`File not found: ${skip.file}${skip.reason.slice('not found'.length)}`);
      else if (skip.kind === 'refused') ctx.log.line(`qmd: ${skip.file}: ${skip.reason}`);
    }
    if (listed.documents.length === 0 && listed.skipped.length === 0) {
      process.exitCode = 1;
      return;
    }
    const text = formatDocuments(listed, outputFormat(flags), (file) => described(store, file));
    if (text !== '') ctx.out(text);
  } finally {
    await store.close();
  }
}

/** A skipped document's docid, title and context, as qmd 2.x lists a skipped one; undefined for no document. */
function described(store: Store, file: string) {
  try {
    const { docid, title, context } = store.get(file, { maxLines: 1 });
    return { docid, title, ...(context !== undefined && { context }) };
  } catch {
    return undefined;
  }
}

/**
 * `qmd status`: where the models run (the llama.cpp backend, loaded for this, and each
 * model's file), and the index's health too. It runs quick_check, as `qmd mcp` does at start, so a
 * damaged index is reported here in the same words (exit 1) even where a search would not
 * touch the damaged pages. It says who else can read the index (an index of this user is made
 * private when opened; one of another user is not ours to change), which servers run for
 * it, asked over their control sockets, and how it is kept fresh (what those servers watch, and
 * who holds the writer's place).
 */
export async function status(ctx: CliContext, flags: { json?: boolean }) {
  const store = openStore(ctx.indexPath, {
    readonly: true,
    quickCheck: true,
    log: ctx.log,
    ...embedStoreOptions(ctx),
    ...modelStoreOptions(ctx, { query: true }),
  });
  try {
    const report = store.status();
    const [
      { formatSharedStatus, readSharedStatus },
      { formatHttpStatus, readHttpStatus },
      { tokenPath },
      { formatWatchingStatus, readWatchingStatus },
      { loadWatchWriter },
    ] = await Promise.all([
      import('../../serve/control/shared-status.js'),
      import('../../serve/control/http-status.js'),
      import('../../serve/token-path.js'),
      import('../../serve/control/watch-status.js'),
      import('../../serve/watching.js'),
    ]);
    const [shared, http, writerOf] = await Promise.all([
      readSharedStatus(ctx.indexPath, ctx.env),
      readHttpStatus(ctx.indexPath, ctx.env),
      loadWatchWriter(),
    ]);
    const watching = await readWatchingStatus(ctx.indexPath, shared, http, writerOf);
    const privacy = privacyProblems(ctx.indexPath, [tokenPath(ctx.indexPath)]);
    // The backend is loaded to say what it is (GPU, devices, VRAM); the models are not.
    const models = await store.models({ probe: true });
    ctx.out(
      flags.json
        ? JSON.stringify(
            {
              ...report,
              privacy: { private: privacy.length === 0, problems: privacy },
              sharedServer: shared,
              httpServer: http,
              watch: watching,
              models,
            },
            null,
            2,
          )
        : [
            formatStatus(report, embeddingModelLine(report.embeddings, ctx.config.embed, ctx.env)),
            formatModels(models),
            privacy.length === 0
              ? 'Privacy: the index and its files are yours alone'
              : `Privacy: ${privacy.join('; ')}`,
            formatSharedStatus(shared),
            formatHttpStatus(http),
            formatWatchingStatus(watching),
          ].join('\n'),
    );
  } finally {
    await store.close();
  }
}
