import { openStore } from '../../core/index.js';
import type { CliContext } from '../context.js';
import { formatContextList } from '../formats/collections.js';

/**
 * `qmd context add PATH TEXT...`: says what the notes at PATH are. PATH is `/`
 * (everything), `collection`, `collection/dir` (also as `qmd://collection/dir`), or a folder on
 * disk inside a collection; the words after it are the text, as qmd 2.8 joins them.
 */
export async function contextAdd(ctx: CliContext, place: string, words: string[]) {
  const store = openStore(ctx.indexPath, { create: false, log: ctx.log });
  try {
    const { context, replaced } = store.setContext(place, words.join(' '), { cwd: process.cwd() });
    ctx.out(`${replaced ? 'Replaced' : 'Added'} context for ${context.path}: ${context.text}`);
  } finally {
    await store.close();
  }
}

export async function contextList(ctx: CliContext, options: { json?: boolean }) {
  const store = openStore(ctx.indexPath, { readonly: true, log: ctx.log });
  try {
    const contexts = store.listContexts();
    ctx.out(options.json ? JSON.stringify(contexts, null, 2) : formatContextList(contexts));
  } finally {
    await store.close();
  }
}

export async function contextRemove(ctx: CliContext, place: string) {
  const store = openStore(ctx.indexPath, { create: false, log: ctx.log });
  try {
    const removed = store.removeContext(place, { cwd: process.cwd() });
    // qmd 2.x's line: `✓ Removed global context`, else `✓ Removed context for: qmd://…`.
    ctx.out(removed.collection === null ? '✓ Removed global context' : `✓ Removed context for: qmd://${removed.path}`);
  } finally {
    await store.close();
  }
}
