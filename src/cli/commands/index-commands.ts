import { existsSync } from 'node:fs';
import { discardIndex, openStore } from '../../core/index.js';
import type { IndexProgress, Store } from '../../core/types.js';
import type { CliContext } from '../context.js';
import { formatReport } from '../format.js';
import { EXIT_INTERRUPTED, onInterrupt } from '../terminal/interrupt.js';
import { createProgress, type Progress } from '../terminal/progress.js';
import { addHint, interruptedAdd, interruptedUpdate, updateHint } from './index-messages.js';
import { runUpdateHooks } from './update-hooks.js';

/**
 * `qmd collection add DIR [--name NAME] [--mask GLOB]`: adds the collection and indexes it at
 * once, each batch of files committed as it is read. Progress on stderr; Ctrl-C keeps the
 * collection with the files written so far, or nothing if none was (`interruptedAdd`). An
 * index this command created and could not add to is removed again: a failed first add leaves
 * no empty index behind.
 */
export async function collectionAdd(ctx: CliContext, dir: string, options: { name?: string; mask?: string }) {
  const progress = createProgress({ intervalMs: ctx.config.progressIntervalMs });
  const created = !existsSync(ctx.indexPath);
  let store: Store | undefined;
  const interrupt = onInterrupt({
    log: progress.log,
    unit: 'batch of files',
    endOutput: () => progress.stop(),
    // Quitting before the first unit committed leaves the index as it was: none, if it made
    // it. After, it keeps the collection with the files written (each unit is committed).
    onQuit: () => {
      if (created && (store === undefined || holdsNoCollection(store))) discardIndex(ctx.indexPath);
    },
  });
  store = openStore(ctx.indexPath, { log: progress.log });
  let failed = false;
  try {
    const before = new Set(store.listCollections().map((c) => c.name));
    const report = await store.addCollection(dir, {
      ...(options.name !== undefined && { name: options.name }),
      ...(options.mask !== undefined && { mask: options.mask }),
      onProgress: indexProgress(progress),
      stop: interrupt.stop,
    });
    await interrupt.finish();
    progress.stop();
    const added = store.listCollections().find((c) => !before.has(c.name));
    if (interrupt.interrupted) {
      progress.log.line(interruptedAdd(report, added?.name));
      process.exitCode = EXIT_INTERRUPTED;
      if (report.stopped !== undefined) return;
    }
    const hint = addHint(options.mask ?? added?.mask ?? '**/*.md');
    ctx.out(`Added collection ${added?.name ?? dir} (${added?.root ?? dir}): ${formatReport(report, hint)}`);
  } catch (error) {
    failed = true;
    throw error;
  } finally {
    progress.stop();
    await closeOrDiscard(store, created);
    await interrupt.leave(failed);
  }
}

/**
 * `qmd update [--pull] [--watch [--interval DURATION]]`: runs the collections' update commands
 * first (`update-hooks.ts`), then re-scans every collection incrementally, each batch of files
 * committed as it is read; Ctrl-C keeps the collections read in full and the files read of the
 * one being read. With `--watch` it then keeps the index fresh until Ctrl-C
 * (`watch-command.ts`), one Ctrl-C for both phases.
 */
export async function update(ctx: CliContext, flags: { pull?: boolean; watch?: boolean; intervalMs?: number } = {}) {
  const progress = createProgress({ intervalMs: ctx.config.progressIntervalMs });
  const interrupt = onInterrupt({ log: progress.log, unit: 'batch of files', endOutput: () => progress.stop() });
  const store = openStore(ctx.indexPath, { create: false, log: progress.log });
  let failed = false;
  let watching = false;
  try {
    await runUpdateHooks(ctx, store.listCollections(), flags);
    const report = await store.update({ onProgress: indexProgress(progress), stop: interrupt.stop });
    watching = flags.watch === true && !interrupt.interrupted;
    if (!watching) await interrupt.finish();
    progress.stop();
    if (interrupt.interrupted) {
      progress.log.line(interruptedUpdate(report));
      process.exitCode = EXIT_INTERRUPTED;
      if (report.stopped !== undefined) return;
    }
    const masks = new Map(store.listCollections().map((c) => [c.name, c.mask]));
    ctx.out(`Updated ${report.collections} collection(s): ${formatReport(report, updateHint(masks))}`);
  } catch (error) {
    failed = true;
    throw error;
  } finally {
    progress.stop();
    await store.close();
    if (!watching) await interrupt.leave(failed);
  }
  if (!watching) return;
  const { watchAfterUpdate } = await import('./watch-command.js');
  await watchAfterUpdate(ctx, { ...(flags.intervalMs !== undefined && { intervalMs: flags.intervalMs }) }, interrupt);
}

/** The store's indexing stages as progress: listing a folder, then reading and writing its files, batch by batch. */
function indexProgress(progress: Progress): (p: IndexProgress) => void {
  let stage = '';
  return (p) => {
    const key = `${p.stage}\0${p.collection}`;
    if (key !== stage) {
      stage = key;
      if (p.stage === 'listing') progress.stage(`Listing ${p.collection}`);
      else progress.stage(`Indexing ${p.collection}`, { unit: 'files', total: p.total });
    }
    progress.update(p.done, p.total);
  };
}

/** Whether the index holds no collection (and so nothing this command must keep); unreadable: no. */
function holdsNoCollection(store: Store): boolean {
  try {
    return store.listCollections().length === 0;
  } catch {
    return false;
  }
}

/**
 * Closes the store; an index this command created is then removed if it holds no collection
 * (the add failed, or was stopped before a file was read). One that another process has added
 * a collection to meanwhile is kept.
 */
async function closeOrDiscard(store: Store, created: boolean): Promise<void> {
  let empty = false;
  if (created) {
    try {
      empty = store.listCollections().length === 0;
    } catch {
      // Unreadable: leave it for the next command to report.
    }
  }
  await store.close();
  if (empty) discardIndex(store.path);
}
