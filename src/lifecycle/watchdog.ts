import type { Log } from '../log.js';
import type { Clock } from './clock.js';

export const DEFAULT_WATCHDOG_MS = 1000;

export interface WatchdogOptions {
  clock: Clock;
  log: Log;
  ms: number;
  exitCode: number;
  /** `process.getActiveResourcesInfo()`: what keeps the loop alive. */
  activeResources: () => string[];
  exit: (code: number) => void;
}

/**
 * Armed only after `done`. Its timer is unref'd, so it can fire only if something else still
 * holds the event loop (a leaked socket, a handler that ignored its abort signal). Native
 * objects are disposed by then, so a forced exit is safe at that point and only then; first it
 * names what held the loop. Returns the disarm function.
 */
export function armWatchdog(options: WatchdogOptions): () => void {
  const timer = options.clock.setTimeout(
    () => {
      let held: string;
      try {
        held = summarizeResources(options.activeResources());
      } catch {
        held = 'unknown';
      }
      options.log.warn(
        `still running ${options.ms} ms after teardown; held by: ${held}. Exiting with code ${options.exitCode}.`,
      );
      options.exit(options.exitCode);
    },
    options.ms,
    { unref: true },
  );
  return () => options.clock.clearTimeout(timer);
}

/** `['Timeout', 'Timeout', 'TCPSocketWrap']` → `Timeout ×2, TCPSocketWrap`. */
export function summarizeResources(resources: readonly string[]): string {
  if (resources.length === 0) return 'nothing reported';
  const counts = new Map<string, number>();
  for (const r of resources) counts.set(r, (counts.get(r) ?? 0) + 1);
  return [...counts].map(([name, n]) => (n > 1 ? `${name} ×${n}` : name)).join(', ');
}
