import { openStore } from '../../core/index.js';
import type { Store } from '../../core/types.js';
import { QmdError } from '../../errors.js';
import type { CliContext } from '../context.js';
import { formatCollectionList, formatCollectionShow } from '../formats/collections.js';

/**
 * `qmd collection list|show|remove|rename|include|exclude|update-cmd`, with qmd 2.x's meaning
 * and output (its `✓` lines included). Collections live in the index here, not in a YAML file:
 * every change is one transaction on it.
 */

export async function collectionList(ctx: CliContext, flags: { json?: boolean }) {
  await withStore(ctx, true, (store) => {
    const collections = store.listCollections();
    ctx.out(flags.json ? JSON.stringify(collections, null, 2) : formatCollectionList(collections));
  });
}

export async function collectionShow(ctx: CliContext, name: string, flags: { json?: boolean }) {
  await withStore(ctx, true, (store) => {
    const collection = find(store, name);
    const contexts = store.listContexts().filter((c) => c.collection === name).length;
    ctx.out(
      flags.json ? JSON.stringify({ ...collection, contexts }, null, 2) : formatCollectionShow(collection, contexts),
    );
  });
}

export async function collectionRemove(ctx: CliContext, name: string) {
  await withStore(ctx, false, (store) => {
    const { documents } = find(store, name);
    store.removeCollection(name);
    ctx.out(`✓ Removed collection '${name}'\n  Deleted ${documents} documents`);
  });
}

export async function collectionRename(ctx: CliContext, from: string, to: string) {
  await withStore(ctx, false, (store) => {
    store.renameCollection(from, to);
    ctx.out(`✓ Renamed collection '${from}' to '${to}'\n  Virtual paths updated: qmd://${from}/ → qmd://${to}/`);
  });
}

export async function collectionInclude(ctx: CliContext, name: string, include: boolean) {
  await withStore(ctx, false, (store) => {
    store.configureCollection(name, { includeByDefault: include });
    ctx.out(`✓ Collection '${name}' ${include ? 'included in' : 'excluded from'} default queries`);
  });
}

/**
 * `qmd collection update-cmd NAME [COMMAND...]`: the words after the name, joined by spaces as
 * qmd 2.x joins them, are the command `qmd update` runs in the collection's folder first; none
 * clears it. No trust prompt: only the person at this account writes it (there is no
 * project-local configuration here to bring someone else's command in).
 */
export async function collectionUpdateCmd(ctx: CliContext, name: string, words: string[]) {
  await withStore(ctx, false, (store) => {
    const command = words.join(' ').trim();
    store.configureCollection(name, { update: command === '' ? null : command });
    ctx.out(
      command === '' ? `✓ Cleared update command for '${name}'` : `✓ Set update command for '${name}': ${command}`,
    );
  });
}

/**
 * `qmd collection set-mask NAME GLOB`: which files the collection indexes, relative to its
 * folder (commas separate several), as `collection add --mask` set it. qmd 2.x has no command
 * for it (its users edit `pattern` in `index.yml`); the next `qmd update` adds the files the
 * new mask takes in and removes those it leaves out.
 */
export async function collectionSetMask(ctx: CliContext, name: string, mask: string) {
  await withStore(ctx, false, (store) => {
    const before = find(store, name).mask;
    store.configureCollection(name, { mask });
    const after = find(store, name).mask;
    ctx.out(`✓ Set mask for '${name}': ${after} (was ${before})\n  qmd update indexes the collection by it`);
  });
}

function find(store: Store, name: string) {
  const collection = store.listCollections().find((c) => c.name === name);
  if (collection === undefined) {
    const known = store.listCollections().map((c) => c.name);
    throw new QmdError('UNKNOWN_COLLECTION', `No collection named "${name}"; known: ${known.join(', ') || '(none)'}`);
  }
  return collection;
}

async function withStore(ctx: CliContext, readonly: boolean, work: (store: Store) => void): Promise<void> {
  const store = openStore(ctx.indexPath, { readonly, create: false, log: ctx.log });
  try {
    work(store);
  } finally {
    await store.close();
  }
}
