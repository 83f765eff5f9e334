import type { InspectionEvent } from 'xstate';
import type { ExitPolicyOptions } from './exit-policy.js';
import type { SignalSource } from './signals.js';

/**
 * What both hosts (the lifecycle's and the shared server's) take from around their machine:
 * the process's signals and exit, the clock, the bounds, and who watches.
 */
export interface HostOptions extends Partial<ExitPolicyOptions> {
  /** SIGTERM/SIGINT/SIGHUP; `null` hears none. Defaults to `process`. */
  signals?: SignalSource | null;
  drainTimeoutMs?: number;
  stepTimeoutMs?: number;
  /** `QMD_LIFECYCLE_TRACE` / `QMD_SHARED_TRACE`: a JSONL file with one line per state entered. */
  traceFile?: string;
  /** More inspection observers (the Stately inspector). */
  inspect?: Array<(event: InspectionEvent) => void>;
}
