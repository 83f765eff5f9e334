import { openStore } from '../../store/index.js';
import { privacyProblems } from '../../store/private.js';
import type { CliContext } from '../context.js';
import { embedStoreOptions } from '../embed-model.js';
import { formatHits, formatModels, formatQueryResult, formatStatus, hitsJson } from '../format.js';
import { embeddingModelLine } from '../model-status.js';
import { modelStoreOptions } from '../query-models.js';
import { type OutputStyle, outputStyle } from '../terminal/terminal.js';

export interface SearchFlags {
  n?: number;
  json?: boolean;
  collection?: string[];
  folder?: string;
  minScore?: number;
  /** `qmd query` only. */
  intent?: string;
  candidateLimit?: number;
  /** `--no-rerank`, `--no-expand` (commander sets false; true by default). */
  rerank?: boolean;
  expand?: boolean;
}

/**
 * `search`, `query` and `vsearch`'s options; the store checks the folder (`folder.ts`). On a
 * terminal, matched words come back marked in colour (`style.highlight`), never with --json.
 */
export function searchOptions(flags: SearchFlags, style?: OutputStyle) {
  return {
    ...(style?.highlight !== undefined && !flags.json && { highlight: style.highlight }),
    ...(flags.n !== undefined && { limit: flags.n }),
    ...(flags.collection !== undefined && { collections: flags.collection }),
    ...(flags.folder !== undefined && { folder: flags.folder }),
    ...(flags.minScore !== undefined && { minScore: flags.minScore }),
  };
}

/** `qmd search QUERY`: BM25 only. */
export async function search(ctx: CliContext, query: string, flags: SearchFlags) {
  const store = openStore(ctx.indexPath, { readonly: true, log: ctx.log });
  try {
    const style = outputStyle(process.stdout, ctx.env);
    const hits = store.search(query, searchOptions(flags, style));
    ctx.out(flags.json ? hitsJson(hits, { mode: 'bm25' }) : formatHits(hits, undefined, style));
  } finally {
    await store.close();
  }
}

/** `qmd query QUERY`: what the MCP `query` tool runs (expanded, hybrid when embedded, else BM25, reranked). */
export async function query(ctx: CliContext, text: string, flags: SearchFlags) {
  const store = openStore(ctx.indexPath, {
    readonly: true,
    log: ctx.log,
    ...embedStoreOptions(ctx),
    ...modelStoreOptions(ctx, { query: true }),
  });
  try {
    const style = outputStyle(process.stdout, ctx.env);
    const result = await store.query(text, {
      ...searchOptions(flags, style),
      ...(flags.intent !== undefined && { intent: flags.intent }),
      ...(flags.candidateLimit !== undefined && { candidateLimit: flags.candidateLimit }),
      ...(flags.rerank === false && { rerank: false }),
      ...(flags.expand === false && { expand: false }),
    });
    ctx.out(
      flags.json
        ? hitsJson(result.hits, {
            mode: result.mode,
            ...(result.note && { note: result.note }),
            reranked: result.reranked,
            ...(result.rerankNote && { rerankNote: result.rerankNote }),
            ...(result.expansionNote && { expansionNote: result.expansionNote }),
            searches: result.searches,
          })
        : formatQueryResult(result, style),
    );
  } finally {
    await store.close();
  }
}

export interface GetFlags {
  from?: number;
  lines?: number;
  lineNumbers?: boolean;
  json?: boolean;
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

export interface MultiGetFlags {
  maxBytes?: number;
  lines?: number;
  lineNumbers?: boolean;
  json?: boolean;
}

/** `qmd multi-get PATTERN [--max-bytes N] [--lines N] [--line-numbers]`: several documents. */
export async function multiGet(ctx: CliContext, pattern: string, flags: MultiGetFlags) {
  const store = openStore(ctx.indexPath, { readonly: true, log: ctx.log });
  try {
    const result = await store.multiGet(pattern, {
      ...(flags.maxBytes !== undefined && { maxBytes: flags.maxBytes }),
      ...(flags.lines !== undefined && { maxLines: flags.lines }),
      lineNumbers: flags.lineNumbers ?? false,
    });
    if (flags.json) {
      ctx.out(JSON.stringify(result, null, 2));
      return;
    }
    for (const doc of result.documents) {
      ctx.out(`==> ${doc.file} (${doc.docid})${doc.truncated ? ' [truncated]' : ''} <==\n${doc.text}\n`);
    }
    for (const s of result.skipped) ctx.log.line(`skipped ${s.file}: ${s.reason}`);
  } finally {
    await store.close();
  }
}

/**
 * `qmd status`: where the models run (the llama.cpp backend, loaded for this, and each
 * model's file), and the index's health too. It runs quick_check, as `qmd mcp` does at start, so a
 * damaged index is reported here in the same words (exit 1) even where a search would not
 * touch the damaged pages. It says who else can read the index (an index of this user is made
 * private when opened; one of another user is not ours to change), and which servers run for
 * it, asked over their control sockets.
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
    const [{ formatSharedStatus, readSharedStatus }, { formatHttpStatus, readHttpStatus }, { tokenPath }] =
      await Promise.all([
        import('../../serve/control/shared-status.js'),
        import('../../serve/control/http-status.js'),
        import('../../serve/token-path.js'),
      ]);
    const [shared, http] = await Promise.all([
      readSharedStatus(ctx.indexPath, ctx.env),
      readHttpStatus(ctx.indexPath, ctx.env),
    ]);
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
          ].join('\n'),
    );
  } finally {
    await store.close();
  }
}
