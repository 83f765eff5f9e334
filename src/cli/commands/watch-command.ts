import { openReader } from '../../core/open.js';
import { watchIndex } from '../../watch/index.js';
import type { IndexedChange } from '../../watch/types.js';
import type { CliContext } from '../context.js';
import { embedStoreOptions } from '../embed-model.js';
import { EXIT_INTERRUPTED, type Interrupt } from '../terminal/interrupt.js';

/** The most paths one batch's line names before it says how many more. */
const NAMED = 3;

/**
 * `qmd update --watch [--interval DURATION]`, after the update itself (`index-commands.ts`):
 * keeps the index fresh without a server, for a terminal or a login service. It watches as a
 * server does (`src/watch/`, docs/design.md §9), prints one line per committed batch and is
 * quiet otherwise; a server already holding the writer's place is said once, and this process
 * takes over when that one goes. Ctrl-C stops after the batch being written (a second quits at
 * once) and exits 130 with its line, as `update` and `embed` do.
 */
export async function watchAfterUpdate(
  ctx: CliContext,
  options: { intervalMs?: number },
  interrupt: Interrupt,
): Promise<void> {
  const reader = openReader(ctx.indexPath, {
    readonly: true,
    quickCheck: false,
    log: ctx.log,
    failpoints: ctx.config.failpoints,
    ...embedStoreOptions(ctx),
  });
  const watcher = watchIndex(reader, {
    log: ctx.log,
    failpoints: ctx.config.failpoints,
    by: 'qmd update --watch',
    ...(options.intervalMs !== undefined && { pollIntervalMs: options.intervalMs }),
    onRole: (role, pid) => {
      if (role === 'reader')
        ctx.log.line(
          `Another qmd${pid === undefined ? '' : ` (pid ${pid})`} keeps this index fresh; waiting to take over if it stops (Ctrl-C to quit)`,
        );
      else if (started) ctx.log.line('Taking over: watching the collections now');
    },
  });
  let started = false;
  watcher.onIndexed((change) => ctx.out(describeBatch(change)));
  // The watcher holds nothing that keeps the process alive (by design: a server must be free to
  // exit); this command is the one that must stay, until Ctrl-C.
  const alive = setInterval(() => {}, 2 ** 30);
  try {
    await watcher.start();
    started = true;
    const report = watcher.report();
    if (report.role === 'writer') {
      const polled = report.collections.filter((c) => c.via === 'polling').length;
      ctx.log.line(
        `Watching ${report.collections.length} collection(s)${polled > 0 ? ` (${polled} polled)` : ''}; a line per change written (Ctrl-C to stop)`,
      );
    }
    if (!interrupt.stop.aborted)
      await new Promise<void>((resolve) => interrupt.stop.addEventListener('abort', () => resolve(), { once: true }));
    await watcher.close();
    await interrupt.finish();
    ctx.log.line('Stopped watching; the index keeps every change written.');
    process.exitCode = EXIT_INTERRUPTED;
  } finally {
    clearInterval(alive);
    await watcher.close();
    await reader.close();
    // The watch ends only at Ctrl-C (exit 130 now) or by an error (not interrupted: returns, so it is reported).
    await interrupt.leave(!interrupt.interrupted);
  }
}

/** `notes: +2 ~1 -1 (a.md, b.md, c.md, +1 more)`. */
export function describeBatch(change: IndexedChange): string {
  const paths = [...change.added, ...change.updated, ...change.removed];
  const named = paths.slice(0, NAMED).join(', ');
  const more = paths.length > NAMED ? `, +${paths.length - NAMED} more` : '';
  return `${change.collection}: +${change.added.length} ~${change.updated.length} -${change.removed.length} (${named}${more})`;
}
