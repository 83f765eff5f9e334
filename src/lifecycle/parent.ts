import type { Clock, TimerHandle } from './clock.js';

export interface ParentWatchOptions {
  /** Reads the parent's PID now (`process.ppid` is a live getter). */
  ppid: () => number;
  clock: Clock;
  /** How often to look (default 500 ms). */
  intervalMs?: number;
  /**
   * The parent's PID when the process started. Read as early as possible (the top of the
   * entry module): a client that dies during start-up has already reparented us by the time
   * the lifecycle starts, and comparing with the PPID read then would never notice.
   */
  original?: number;
}

export const DEFAULT_PARENT_POLL_MS = 500;

/**
 * When the client dies but a grandchild inherited our stdin, no EOF ever comes; the only fact
 * left is that we were reparented (the PPID changed). Polling `process.ppid` is one getppid()
 * syscall per interval, and the timer is unref'd, so it never keeps the loop alive.
 * A process whose parent is already PID 1 has nothing to watch.
 */
export function watchParent(options: ParentWatchOptions, send: (event: { type: 'parent.gone' }) => void): () => void {
  const { clock } = options;
  const interval = options.intervalMs ?? DEFAULT_PARENT_POLL_MS;
  const original = options.original ?? options.ppid();
  let timer: TimerHandle | undefined;
  const poll = (): void => {
    timer = clock.setTimeout(check, interval, { unref: true });
  };
  // One timer at a time, and none once the parent is gone: detaching clears the pending one.
  const check = (): void => {
    if (options.ppid() !== original) send({ type: 'parent.gone' });
    else poll();
  };
  if (original > 1) poll();
  return () => clock.clearTimeout(timer);
}
