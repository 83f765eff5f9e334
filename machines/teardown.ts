/**
 * What every machine's teardown records and how it ends, defined once for the lifecycle, the
 * shared server and its sessions: how a drain ended, a failed step, the exit code, and the
 * words of the summary. The contract is docs/design.md §1 and §2.1 (`done` row).
 *
 * Pure: imports nothing.
 */

/** How a drain ended: every handler settled, the deadline passed, or an escalation cut it short. */
export type DrainOutcome = 'idle' | 'deadline' | 'cutShort';

/** A teardown step that failed or timed out; the chain went on. */
export interface FailedStep<Step extends string = string> {
  step: Step;
  /** Why: the error's message, or `timed out after N ms`. */
  error: string;
}

/** The failure recorded for a step whose actor rejected (XState's `xstate.error.actor.*` event). */
export function stepFailure<Step extends string>(step: Step, event: unknown): FailedStep<Step> {
  const error = (event as { error?: unknown }).error;
  return { step, error: error instanceof Error ? error.message : String(error) };
}

/** The failure recorded for a step still running when its bound passed. */
export function stepTimeout<Step extends string>(step: Step, ms: number): FailedStep<Step> {
  return { step, error: `timed out after ${ms} ms` };
}

/**
 * Node allows `process.exitCode` to be a number, a string of digits or undefined; the machines
 * want a number. A string is parsed as Node parses it when the process exits (`'3'` exits 3), so
 * a code set as a string is kept like any other; anything else reads as 0 (nothing set).
 */
export function normalizeExitCode(code: unknown): number {
  const n = typeof code === 'string' ? Number.parseInt(code, 10) : code;
  // Number.isInteger is false for anything that is not a number.
  return Number.isInteger(n) ? (n as number) : 0;
}

/** The exit code at `done`: an earlier non-zero code is kept; otherwise 1 if a step failed, else 0. */
export function computeExitCode(context: { priorExitCode: number; failedSteps: ReadonlyArray<FailedStep> }): number {
  if (context.priorExitCode !== 0) return context.priorExitCode;
  return context.failedSteps.length > 0 ? 1 : 0;
}

/**
 * The words every machine's summary uses for its teardown: how the drain ended and which steps
 * failed, e.g. `drained, all steps ok` or `drain deadline passed, failed: disposeStore (EBUSY)`.
 * A drain not recorded reads as `drained`.
 */
export function teardownWords(drain: DrainOutcome | null, failedSteps: ReadonlyArray<FailedStep>): string {
  const drained = drain === 'deadline' ? 'drain deadline passed' : drain === 'cutShort' ? 'drain cut short' : 'drained';
  const steps =
    failedSteps.length === 0
      ? 'all steps ok'
      : `failed: ${failedSteps.map((f) => `${f.step} (${f.error})`).join(', ')}`;
  return `${drained}, ${steps}`;
}
