import { QmdError } from '../../errors.js';
import type { CliContext } from '../context.js';
import { type PidRecord, pidfilePath, readPidfile, releasePidfile, removePidfile, staleReason } from './pidfile.js';

/**
 * The daemon's teardown is bounded: drain 5 s, each step 2 s, watchdog 1 s (docs/design.md §2.1).
 * Waiting a little longer than their sum before escalating means a healthy daemon is never
 * hurried; the second SIGTERM is the machine's "hurry up", never a SIGKILL.
 */
const FIRST_WAIT_MS = 12_000;
const SECOND_WAIT_MS = 8_000;
const POLL_MS = 50;

/**
 * `qmd mcp stop`: SIGTERM to the daemon recorded in `<index>.mcp.pid`, only if that PID is
 * still the very process that wrote it (same boot, same start time, same command line), then
 * waits for it to exit. A stale pidfile is reported and removed, and nothing is signalled.
 *
 * Exit codes: 0 when the daemon stopped; 1 when there was nothing to stop (no pidfile, or a
 * stale one) or it would not stop — "nothing was stopped" is worth a non-zero code to a
 * script, which can add `|| true` when it does not care.
 */
export async function stopDaemon(
  ctx: CliContext,
  target: { pidfile: string; what: string } = { pidfile: pidfilePath(ctx.indexPath), what: 'daemon' },
): Promise<void> {
  const { pidfile, what } = target;
  const record = readPidfile(pidfile);
  if (record === null) throw new QmdError('NOT_FOUND', `no ${what} is running for ${ctx.indexPath} (no ${pidfile})`);
  if (record === 'corrupt') {
    removePidfile(pidfile);
    throw new QmdError('NOT_FOUND', `the pidfile ${pidfile} was unreadable; removed it and signalled nothing`);
  }
  const stale = staleReason(record);
  if (stale !== null) {
    removePidfile(pidfile);
    throw new QmdError(
      'NOT_FOUND',
      `stale pidfile ${pidfile}: pid ${record.pid} ${stale}; removed it and signalled nothing`,
    );
  }

  signal(record);
  ctx.log.line(`qmd: sent SIGTERM to the ${what} (pid ${record.pid}, ${record.url})`);
  let gone = await waitUntilGone(record, FIRST_WAIT_MS);
  if (!gone && staleReason(record) === null) {
    signal(record);
    ctx.log.line(`qmd: still running after ${FIRST_WAIT_MS / 1000} s; sent a second SIGTERM (escalation)`);
    gone = await waitUntilGone(record, SECOND_WAIT_MS);
  }
  if (!gone)
    throw new QmdError('INDEX_LOCKED', `the ${what} (pid ${record.pid}) is still running; not signalled again`);
  // The daemon removes its own pidfile; one that was killed outright could not.
  releasePidfile(pidfile, record.pid, record.startTicks);
  ctx.out(`Stopped the ${what} (pid ${record.pid}, ${record.url})`);
}

/** Verified just before: the window for the PID to be reused in between is microseconds. */
function signal(record: PidRecord): void {
  try {
    process.kill(record.pid, 'SIGTERM');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
}

async function waitUntilGone(record: PidRecord, ms: number): Promise<boolean> {
  const deadline = performance.now() + ms;
  for (;;) {
    if (staleReason(record) !== null) return true;
    if (performance.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}
