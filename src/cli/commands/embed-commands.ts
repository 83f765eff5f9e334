import { QmdError } from '../../errors.js';
import { openStore } from '../../store/index.js';
import type { EmbedReport, ModelChange } from '../../store/types.js';
import type { CliContext } from '../context.js';
import { downloadReporter } from '../download-progress.js';
import { embedStoreOptions } from '../embed-model.js';
import { formatQueryResult, hitsJson } from '../format.js';
import { progressBar } from '../progress.js';
import { type SearchFlags, searchOptions } from './read-commands.js';

/** Exit code after Ctrl-C, as shells report a SIGINT death (128 + 2). */
const EXIT_INTERRUPTED = 130;

/**
 * `qmd embed [--batch N] [--json]`: embeds what changed since the last run. A progress bar on
 * stderr (TTY only), one summary line on stdout. Ctrl-C stops between chunks, keeps what was
 * computed, and disposes the model safely; a second Ctrl-C kills at once (the index stays
 * consistent: every batch is its own transaction).
 */
export async function embed(ctx: CliContext, flags: { batch?: number; json?: boolean }) {
  const download = downloadReporter();
  const store = openStore(ctx.indexPath, {
    create: false,
    log: ctx.log,
    failpoints: ctx.config.failpoints,
    ...embedStoreOptions(ctx),
    onModelDownload: download.onProgress,
  });
  const progress = await progressBar('Embedding', 'chunks');
  const interrupt = new AbortController();
  const onSigint = (): void => {
    ctx.log.line('Stopping after the current chunk (Ctrl-C again to quit at once)...');
    interrupt.abort();
  };
  process.once('SIGINT', onSigint);
  try {
    const report = await store.embed({
      signal: interrupt.signal,
      onModelChange: (change) => ctx.log.line(modelChangeLine(change)),
      ...(flags.batch !== undefined && { batchSize: flags.batch }),
      ...(progress.onProgress && {
        onProgress: ({ done, total }) => progress.onProgress?.({ collection: 'chunks', done, total }),
      }),
    });
    progress.stop();
    ctx.out(flags.json ? JSON.stringify(report, null, 2) : formatEmbedReport(report));
  } catch (error) {
    if (!(interrupt.signal.aborted && error instanceof QmdError && error.code === 'ABORTED')) throw error;
    progress.stop();
    ctx.log.line(`qmd: ${error.message}`);
    process.exitCode = EXIT_INTERRUPTED;
  } finally {
    process.removeListener('SIGINT', onSigint);
    download.stop();
    progress.stop();
    await store.close();
  }
}

/** Said before anything is embedded, when `embed` moves the index to another model spec. */
export function modelChangeLine(change: ModelChange): string {
  return change.reembed
    ? `Re-embedding every chunk with ${change.to}: the index was embedded with ${change.from} (its vectors are replaced)`
    : `The index's embedding model is now at ${change.to} (was ${change.from}; the same model, nothing to re-embed)`;
}

/** `Embedded 12 chunks, skipped 30 unchanged, removed 2 (3 notes chunked; 42 chunks) in 1.20 s: 10.0 chunks/s …` */
export function formatEmbedReport(report: EmbedReport): string {
  const seconds = report.ms / 1000;
  const rate = seconds > 0 ? report.embedded / seconds : 0;
  return (
    `Embedded ${report.embedded} chunks, skipped ${report.skipped} unchanged, removed ${report.removed} ` +
    `(${report.documents} notes chunked; ${report.chunks} chunks in the index) in ${seconds.toFixed(2)} s: ` +
    `${rate.toFixed(1)} chunks/s [model ${report.model}; vectors: ${report.vectorBackend}]`
  );
}

/** `qmd vsearch QUERY`: vector search only. */
export async function vsearch(ctx: CliContext, query: string, flags: SearchFlags) {
  const store = openStore(ctx.indexPath, { readonly: true, log: ctx.log, ...embedStoreOptions(ctx) });
  try {
    const result = await store.vsearch(query, searchOptions(flags));
    ctx.out(
      flags.json
        ? hitsJson(result.hits, { mode: result.mode, ...(result.note && { note: result.note }) })
        : formatQueryResult(result),
    );
  } finally {
    await store.close();
  }
}
