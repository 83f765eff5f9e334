import { openStore } from '../../core/index.js';
import type { EmbedReport, ModelChange } from '../../core/types.js';
import { isQmdError } from '../../errors.js';
import type { CliContext } from '../context.js';
import { downloadReporter } from '../download-progress.js';
import { embedStoreOptions } from '../embed-model.js';
import { modelStoreOptions } from '../query-models.js';
import { EXIT_INTERRUPTED, type Interrupt, onInterrupt } from '../terminal/interrupt.js';
import { count, createProgress } from '../terminal/progress.js';
import { printHits, type SearchFlags, searchOptions } from './search-output.js';

/**
 * `qmd embed [--batch N] [-f] [--json]`: embeds what changed since the last run (`-f`:
 * everything again, as qmd 2.x's `embed -f`). Progress on stderr
 * (a bar on a terminal, a line every 10 s otherwise), one summary line on stdout. The first
 * Ctrl-C lets the chunk in flight finish, saves its batch, says what was kept and exits 130; a
 * second exits 130 at once (the index stays consistent: every batch is its own transaction).
 */
export async function embed(ctx: CliContext, flags: { batch?: number; force?: boolean; json?: boolean }) {
  // Read now: a malformed QMD_DOWNLOAD_IDLE_MS is refused before anything starts (the download,
  // inside the store, reads the variable itself).
  ctx.config.downloadIdleMs;
  const progress = createProgress({ intervalMs: ctx.config.progressIntervalMs });
  const download = downloadReporter();
  const interrupt = onInterrupt({
    log: progress.log,
    unit: 'chunk',
    endOutput: () => {
      download.stop();
      progress.stop();
    },
  });
  const store = openStore(ctx.indexPath, {
    create: false,
    log: progress.log,
    failpoints: ctx.config.failpoints,
    ...embedStoreOptions(ctx),
    // The download draws its own bar (download-progress.ts): ours steps aside until the next stage.
    onModelDownload: (p) => {
      progress.hide();
      download.onProgress(p);
    },
    ...modelStoreOptions(ctx, { query: false }),
  });
  let failed = false;
  try {
    progress.stage('Preparing');
    let embedding = false;
    const report = await stoppedEarly(
      interrupt,
      store.embed({
        stop: interrupt.stop,
        onModelChange: (change) => progress.log.line(modelChangeLine(change)),
        ...(flags.batch !== undefined && { batchSize: flags.batch }),
        ...(flags.force === true && { force: true }),
        onChunked: (notes) => {
          if (notes === 0 || embedding) return;
          download.stop();
          progress.stage('Chunking notes', { unit: 'notes' });
          progress.update(notes);
        },
        onProgress: ({ done, total }) => {
          if (!embedding) {
            download.stop();
            progress.stage('Embedding', { unit: 'chunks', total });
          }
          embedding = true;
          progress.update(done, total);
        },
      }),
    );
    await interrupt.finish();
    if (report === undefined) {
      progress.stop();
      progress.log.line('Interrupted before anything was embedded; qmd embed goes on from there.');
      process.exitCode = EXIT_INTERRUPTED;
      return;
    }
    progress.stop();
    if (interrupt.interrupted) {
      progress.log.line(interruptedEmbed(report));
      process.exitCode = EXIT_INTERRUPTED;
    }
    if (flags.json) ctx.out(JSON.stringify(report, null, 2));
    else if (!report.stopped) ctx.out(formatEmbedReport(report));
  } catch (error) {
    failed = true;
    throw error;
  } finally {
    download.stop();
    progress.stop();
    await store.close();
    await interrupt.leave(failed);
  }
}

/** Said before anything is embedded, when `embed` moves the index to another model spec. */
export function modelChangeLine(change: ModelChange): string {
  return change.reembed
    ? `Re-embedding every chunk with ${change.to}: the index was embedded with ${change.from} (its vectors are replaced)`
    : `The index's embedding model is now at ${change.to} (was ${change.from}; the same model, nothing to re-embed)`;
}

/** The work's result, or `undefined` when Ctrl-C stopped it before it began (the model's download or load). */
async function stoppedEarly<T>(interrupt: Interrupt, work: Promise<T>): Promise<T | undefined> {
  try {
    return await work;
  } catch (error) {
    if (interrupt.stop.aborted && isQmdError(error) && error.code === 'ABORTED') return undefined;
    throw error;
  }
}

/** What `qmd embed` says when Ctrl-C stopped it (stderr, one line). */
export function interruptedEmbed(report: EmbedReport): string {
  if (!report.stopped) return 'Interrupted after the work was done: every chunk is embedded.';
  const todo = report.chunks - report.skipped;
  return (
    `Interrupted: ${count(report.embedded)} of ${count(todo)} chunks embedded and saved` +
    `${report.documents > 0 ? ` (${count(report.documents)} notes chunked)` : ''}; qmd embed goes on from there.`
  );
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
  const store = openStore(ctx.indexPath, {
    readonly: true,
    log: ctx.log,
    ...embedStoreOptions(ctx),
    ...modelStoreOptions(ctx, { query: false }),
  });
  try {
    const result = await store.vsearch(query, searchOptions(flags));
    printHits(ctx, store, result.hits, flags, result);
  } finally {
    await store.close();
  }
}
