import { existsSync, statSync } from 'node:fs';
import { openStore } from '../../core/index.js';
import {
  defaultModelsDir,
  EMBED_MODEL_KIND,
  EXPAND_MODEL_KIND,
  type ModelKind,
  pullModel,
  RERANK_MODEL_KIND,
} from '../../llm/index.js';
import type { CliContext } from '../context.js';
import { downloadReporter } from '../download-progress.js';
import { embedStoreOptions } from '../embed-model.js';
import { formatBytes } from '../formats/collections.js';
import { modelStoreOptions } from '../query-models.js';

/**
 * `qmd pull`: makes sure the configured models are on disk (embedding, reranking, query
 * expansion), downloading what is missing, one line each in qmd 2.x's words
 * (`- SPEC -> FILE (SIZE, downloaded|cached/checked)`), so that searches, which never download
 * inside a call, can use them. The embedding model is the one named, else the index's (when
 * there is an index), else the default, as every command chooses it; qmd 2.x's cache names are
 * ours, so a file it downloaded is found and not fetched again, unless it is not a whole model
 * (then it is fetched again) or `--refresh` asks. A model turned off is `- ROLE: off`; one that
 * cannot be had is its one line on stderr, the others are still pulled, and the exit code is 1.
 * Ctrl-C stops the download at once.
 */
export async function pull(ctx: CliContext, flags: { refresh?: boolean } = {}): Promise<void> {
  // Read first: a malformed QMD_DOWNLOAD_IDLE_MS is refused before anything is fetched.
  const idleMs = ctx.config.downloadIdleMs;
  const { rerankModel, expandModel } = modelStoreOptions(ctx, { query: true });
  const roles: Array<[string, string | undefined, ModelKind]> = [
    ['embed', await embeddingModel(ctx), EMBED_MODEL_KIND],
    ['rerank', rerankModel, RERANK_MODEL_KIND],
    ['expand', expandModel, EXPAND_MODEL_KIND],
  ];
  ctx.out('Pulling models');
  const interrupt = new AbortController();
  const onSigint = (): void => interrupt.abort();
  process.once('SIGINT', onSigint);
  try {
    for (const [role, spec, kind] of roles) {
      if (spec === undefined) {
        ctx.out(`- ${role}: off`);
        continue;
      }
      const download = downloadReporter();
      try {
        const pulled = await pullModel(spec, {
          modelsDir: defaultModelsDir(ctx.env),
          log: ctx.log,
          signal: interrupt.signal,
          kind,
          onDownloadProgress: download.onProgress,
          env: ctx.env,
          ...(flags.refresh === true && { refresh: true }),
          ...(idleMs !== undefined && { idleMs }),
        });
        download.stop();
        const size = formatBytes(statSync(pulled.file).size);
        const how = pulled.refreshed ? 'refreshed' : pulled.downloaded ? 'downloaded' : 'cached/checked';
        ctx.out(`- ${spec} -> ${pulled.file} (${size}, ${how})`);
      } catch (error) {
        download.stop();
        if (interrupt.signal.aborted) throw error;
        ctx.log.line(`qmd: ${error instanceof Error ? error.message : String(error)}`);
        process.exitCode = 1;
      }
    }
  } finally {
    process.removeListener('SIGINT', onSigint);
  }
}

/** The embedding model a search would use: named, else the index's, else the default. */
async function embeddingModel(ctx: CliContext): Promise<string | undefined> {
  const options = embedStoreOptions(ctx);
  if (options.embedModel !== undefined || !existsSync(ctx.indexPath))
    return options.embedModel ?? options.defaultEmbedModel;
  try {
    const store = openStore(ctx.indexPath, { readonly: true, log: ctx.log, ...options });
    try {
      return store.embeddingModel()?.spec ?? options.defaultEmbedModel;
    } finally {
      await store.close();
    }
  } catch {
    return options.defaultEmbedModel;
  }
}
