import { existsSync, statSync } from 'node:fs';
import { QmdError } from '../../errors.js';
import { DEFAULT_EMBED_MODEL, defaultModelsDir, isLlmError, pullModel } from '../../llm/index.js';
import { openStore } from '../../store/index.js';
import type { CleanupReport } from '../../store/types.js';
import type { CliContext } from '../context.js';
import { downloadReporter } from '../download-progress.js';
import { embedStoreOptions } from '../embed-model.js';
import { formatBytes } from '../formats/collections.js';

/**
 * `qmd cleanup [--dry-run]`, in qmd 2.x's words: what nothing uses goes (content no document
 * has, vectors of no chunk or of a model the index no longer uses), the full-text index is
 * merged and the file VACUUMed. qmd 2.x's first line, its LLM cache, has no counterpart here.
 */
export async function cleanup(ctx: CliContext, flags: { dryRun?: boolean }) {
  const store = openStore(ctx.indexPath, { readonly: flags.dryRun === true, create: false, log: ctx.log });
  try {
    const report = store.cleanup({ dryRun: flags.dryRun ?? false });
    ctx.out(flags.dryRun ? formatDryRun(report) : formatCleanup(report));
  } finally {
    await store.close();
  }
}

function formatCleanup(r: CleanupReport): string {
  return [
    r.orphanedEmbeddings > 0
      ? `✓ Removed ${r.orphanedEmbeddings} orphaned embedding chunks`
      : 'No orphaned embeddings to remove',
    ...(r.orphanedContent > 0 ? [`✓ Removed ${r.orphanedContent} orphaned content hashes`] : []),
    `✓ FTS compacted, database vacuumed (${formatBytes(r.bytesBefore)} → ${formatBytes(r.bytesAfter)})`,
  ].join('\n');
}

function formatDryRun(r: CleanupReport): string {
  return [
    'Dry run — no changes made.',
    '',
    r.orphanedEmbeddings > 0
      ? `Would remove ${r.orphanedEmbeddings} orphaned embedding chunks`
      : 'No orphaned embeddings to remove',
    ...(r.orphanedContent > 0 ? [`Would remove ${r.orphanedContent} orphaned content hashes`] : []),
    'Would compact FTS and vacuum the database',
  ].join('\n');
}

/**
 * `qmd pull`: makes sure the model files are on disk, downloading what is missing, as qmd
 * 2.x's `pull` does, one line each. The models are those qmd uses: the embedding model a search
 * would use (`--embed-model`, `QMD_EMBED_MODEL`, the one the index remembers, else the default,
 * qmd 2.x's too, so a file it downloaded is found and not fetched again).
 */
export async function pull(ctx: CliContext) {
  const specs = [await embeddingModel(ctx)];
  ctx.out('Pulling models');
  const download = downloadReporter();
  try {
    for (const spec of specs) {
      const pulled = await pullModel(spec, {
        modelsDir: defaultModelsDir(ctx.env),
        log: ctx.log,
        signal: new AbortController().signal,
        onDownloadProgress: download.onProgress,
        env: ctx.env,
      }).catch((error: unknown) => {
        throw toQmdError(error);
      });
      const size = formatBytes(statSync(pulled.file).size);
      ctx.out(`- ${spec} -> ${pulled.file} (${size}, ${pulled.downloaded ? 'downloaded' : 'cached/checked'})`);
    }
  } finally {
    download.stop();
  }
}

/** The embedding model `query` would use: named, else the index's (when there is an index), else the default. */
async function embeddingModel(ctx: CliContext): Promise<string> {
  if (ctx.config.embed.model !== undefined || !existsSync(ctx.indexPath)) {
    return ctx.config.embed.model ?? DEFAULT_EMBED_MODEL;
  }
  const store = openStore(ctx.indexPath, { readonly: true, log: ctx.log, ...embedStoreOptions(ctx) });
  try {
    return store.embeddingModel()?.spec ?? DEFAULT_EMBED_MODEL;
  } finally {
    await store.close();
  }
}

/** The model's own one-line reason (no network, no such file) is the user's error, exit 1. */
function toQmdError(error: unknown): unknown {
  return isLlmError(error) ? new QmdError('MODEL_UNAVAILABLE', error.message, { cause: error }) : error;
}
