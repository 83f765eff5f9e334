import { openStore } from '../../core/index.js';
import { QmdError } from '../../errors.js';
import type { CliContext } from '../context.js';
import { formatLs, formatLsCollections } from '../formats/collections.js';

/**
 * `qmd ls [COLLECTION[/PATH]]` (also `qmd://COLLECTION/PATH`): the collections with their file
 * counts, or a collection's documents (those at or under PATH, by whole segments) as
 * `size  date  qmd://…`, as qmd 2.x lists them.
 */
export async function ls(ctx: CliContext, where: string | undefined, flags: { json?: boolean }) {
  const store = openStore(ctx.indexPath, { readonly: true, log: ctx.log });
  try {
    if (where === undefined || where.trim() === '') {
      const collections = store.listCollections();
      ctx.out(flags.json ? JSON.stringify(collections, null, 2) : formatLsCollections(collections));
      return;
    }
    const rest = where
      .trim()
      .replace(/^qmd:\/\//i, '')
      .replace(/\/+$/, '');
    const slash = rest.indexOf('/');
    const collection = slash === -1 ? rest : rest.slice(0, slash);
    const prefix = slash === -1 ? undefined : rest.slice(slash + 1);
    if (collection === '') throw new QmdError('BAD_ARGUMENT', `Give a collection: qmd ls NAME[/PATH] (got "${where}")`);
    const entries = store.listDocuments(collection, prefix === '' ? undefined : prefix);
    ctx.out(flags.json ? JSON.stringify(entries, null, 2) : formatLs(entries, rest));
  } finally {
    await store.close();
  }
}
