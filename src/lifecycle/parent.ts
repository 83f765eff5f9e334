import { type ParentDeathRule, parentDeathRule } from '../platform.js';
import type { Clock, TimerHandle } from './clock.js';

export interface ParentWatchOptions {
  /** Reads the parent's PID now (`process.ppid` is a live getter). */
  ppid: () => number;
  clock: Clock;
  /** How often to look (default `DEFAULT_PARENT_POLL_MS`). */
  intervalMs?: number;
  /**
   * The parent's PID when the process started. Read as early as possible (the top of the
   * entry module): a client that dies during start-up has already reparented us by the time
   * the lifecycle starts, and comparing with the PPID read then would never notice.
   */
  original?: number;
  /**
   * How the parent's death shows (`src/platform.ts`): the PPID changes (Linux, macOS), or the
   * original parent no longer exists (Windows: no reparenting). Default: this platform's.
   */
  rule?: ParentDeathRule;
  /** Whether a process exists (`rule: 'parent-alive'`); default `process.kill(pid, 0)`. */
  alive?: (pid: number) => boolean;
}

/**
 * 100 ms: no cheaper signal of the parent's death exists on Linux, and 100 ms meets the
 * ≤ 150 ms goal for about 0.13% of one core while idle; 500 ms made parent death the slowest
 * way out. The measurements: docs/design.md §5 (the parent watch).
 */
export const DEFAULT_PARENT_POLL_MS = 100;

/**
 * When the client dies but a grandchild inherited our stdin, no EOF ever comes; the only fact
 * left is that we were reparented (the PPID changed). Polling `process.ppid` is one getppid()
 * syscall per interval (see `DEFAULT_PARENT_POLL_MS` for why polling, and why 100 ms), and
 * the timer is unref'd, so it never keeps the loop alive. A process whose parent is already
 * PID 1 has nothing to watch. On Windows the PPID never changes: there the same poll asks
 * whether the original parent still exists.
 */
export function watchParent(options: ParentWatchOptions, send: (event: { type: 'parent.gone' }) => void): () => void {
  const { clock } = options;
  const interval = options.intervalMs ?? DEFAULT_PARENT_POLL_MS;
  const original = options.original ?? options.ppid();
  const rule = options.rule ?? parentDeathRule(process.platform);
  const alive = options.alive ?? processExists;
  const gone = rule === 'reparented' ? () => options.ppid() !== original : () => !alive(original);
  let timer: TimerHandle | undefined;
  const poll = (): void => {
    timer = clock.setTimeout(check, interval, { unref: true });
  };
  // One timer at a time, and none once the parent is gone: detaching clears the pending one.
  const check = (): void => {
    if (gone()) send({ type: 'parent.gone' });
    else poll();
  };
  if (original > 1) poll();
  return () => clock.clearTimeout(timer);
}

/** `kill(pid, 0)`: no signal is sent; ESRCH means no such process, EPERM one we may not signal (alive). */
export function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
