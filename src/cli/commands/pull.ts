import { existsSync } from 'node:fs';
import { EMBED_MODEL_KIND, EXPAND_MODEL_KIND, fetchModel, type ModelKind, RERANK_MODEL_KIND } from '../../llm/index.js';
import { openStore } from '../../store/index.js';
import type { CliContext } from '../context.js';
import { downloadReporter } from '../download-progress.js';
import { embedStoreOptions } from '../embed-model.js';
import { modelStoreOptions } from '../query-models.js';

/**
 * `qmd pull`: fetches the configured models (embedding, reranking, query expansion) into the
 * models directory, so that searches, which never download inside a call, can use them. The
 * embedding model is the one named, else the index's (when there is an index), else the
 * default, as every command chooses it. A model already cached, or given as a local file, is
 * only checked. One line per model on stdout; a model that cannot be had is one line on
 * stderr, and the exit code is 1.
 */
export async function pull(ctx: CliContext): Promise<void> {
  const { rerankModel, expandModel } = modelStoreOptions(ctx, { query: true });
  const roles: Array<[string, string | undefined, ModelKind]> = [
    ['embed', embeddingModel(ctx), EMBED_MODEL_KIND],
    ['rerank', rerankModel, RERANK_MODEL_KIND],
    ['expand', expandModel, EXPAND_MODEL_KIND],
  ];
  const interrupt = new AbortController();
  const onSigint = (): void => interrupt.abort();
  process.once('SIGINT', onSigint);
  try {
    for (const [role, spec, kind] of roles) {
      if (spec === undefined) {
        ctx.out(`${role}: off`);
        continue;
      }
      const download = downloadReporter();
      try {
        const file = await fetchModel(spec, {
          log: ctx.log,
          signal: interrupt.signal,
          kind,
          onDownloadProgress: download.onProgress,
        });
        download.stop();
        ctx.out(`${role}: ${spec} → ${file}`);
      } catch (error) {
        download.stop();
        if (interrupt.signal.aborted) throw error;
        ctx.log.line(`qmd: ${role}: ${error instanceof Error ? error.message : String(error)}`);
        process.exitCode = 1;
      }
    }
  } finally {
    process.removeListener('SIGINT', onSigint);
  }
}

/** The embedding model a search would use: named, else the index's, else the default. */
function embeddingModel(ctx: CliContext): string | undefined {
  const options = embedStoreOptions(ctx);
  if (options.embedModel !== undefined || !existsSync(ctx.indexPath))
    return options.embedModel ?? options.defaultEmbedModel;
  try {
    const store = openStore(ctx.indexPath, { readonly: true, ...options });
    try {
      return store.embeddingModel()?.spec;
    } finally {
      void store.close();
    }
  } catch {
    return options.defaultEmbedModel;
  }
}
