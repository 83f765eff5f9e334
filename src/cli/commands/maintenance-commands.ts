import { openStore } from '../../core/index.js';
import type { CleanupReport } from '../../core/types.js';
import type { CliContext } from '../context.js';
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
