import { openStore } from '../../store/index.js';
import type { ContextInfo } from '../../store/types.js';
import type { CliContext } from '../context.js';

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
    ctx.out(options.json ? JSON.stringify(contexts, null, 2) : formatContexts(contexts));
  } finally {
    await store.close();
  }
}

export async function contextRemove(ctx: CliContext, place: string) {
  const store = openStore(ctx.indexPath, { create: false, log: ctx.log });
  try {
    const removed = store.removeContext(place, { cwd: process.cwd() });
    ctx.out(`Removed context for ${removed.path}`);
  } finally {
    await store.close();
  }
}

/** `notes/meetings  Weekly team meeting notes`, one per line, the path as `rm` takes it back. */
function formatContexts(contexts: ContextInfo[]): string {
  if (contexts.length === 0) return 'No contexts yet. Add one with: qmd context add PATH "what is there"';
  const width = Math.max(...contexts.map((c) => c.path.length));
  return contexts.map((c) => `${c.path.padEnd(width)}  ${c.text.replace(/\s+/g, ' ')}`).join('\n');
}
