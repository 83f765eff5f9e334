import { openStore } from '../../store/index.js';
import type { CliContext } from '../context.js';
import { formatCollections, formatReport } from '../format.js';
import { progressBar } from '../progress.js';

/** `qmd collection add DIR [--name NAME] [--mask GLOB]`: adds the collection and indexes it at once. */
export async function collectionAdd(ctx: CliContext, dir: string, options: { name?: string; mask?: string }) {
  const store = openStore(ctx.indexPath, { log: ctx.log });
  const progress = await progressBar('Indexing');
  try {
    const before = new Set(store.listCollections().map((c) => c.name));
    const report = await store.addCollection(dir, {
      ...(options.name !== undefined && { name: options.name }),
      ...(options.mask !== undefined && { mask: options.mask }),
      ...(progress.onProgress && { onProgress: progress.onProgress }),
    });
    progress.stop();
    const added = store.listCollections().find((c) => !before.has(c.name));
    ctx.out(`Added collection ${added?.name ?? dir} (${added?.root ?? dir}): ${formatReport(report)}`);
  } finally {
    progress.stop();
    await store.close();
  }
}

export async function collectionList(ctx: CliContext, options: { json?: boolean }) {
  const store = openStore(ctx.indexPath, { readonly: true, log: ctx.log });
  try {
    const collections = store.listCollections();
    ctx.out(options.json ? JSON.stringify(collections, null, 2) : formatCollections(collections));
  } finally {
    await store.close();
  }
}

export async function collectionRemove(ctx: CliContext, name: string) {
  const store = openStore(ctx.indexPath, { create: false, log: ctx.log });
  try {
    store.removeCollection(name);
    ctx.out(`Removed collection ${name}`);
  } finally {
    await store.close();
  }
}

/** `qmd update`: re-scans every collection incrementally, all or nothing. */
export async function update(ctx: CliContext) {
  const store = openStore(ctx.indexPath, { create: false, log: ctx.log });
  const progress = await progressBar('Updating');
  try {
    const report = await store.update(progress.onProgress ? { onProgress: progress.onProgress } : {});
    progress.stop();
    ctx.out(`Updated ${report.collections} collection(s): ${formatReport(report)}`);
  } finally {
    progress.stop();
    await store.close();
  }
}
