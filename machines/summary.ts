/** How a drain ended: every handler settled, the deadline passed, or an escalation cut it short. */
type Drain = 'idle' | 'deadline' | 'cutShort';

/**
 * The words every machine's summary uses for its teardown: how the drain ended and which steps
 * failed, e.g. `drained, all steps ok` or `drain deadline passed, failed: disposeStore (EBUSY)`.
 * A drain not recorded reads as `drained`.
 */
export function teardownWords(
  drain: Drain | null,
  failedSteps: ReadonlyArray<{ step: string; error: string }>,
): string {
  const drained = drain === 'deadline' ? 'drain deadline passed' : drain === 'cutShort' ? 'drain cut short' : 'drained';
  const steps =
    failedSteps.length === 0
      ? 'all steps ok'
      : `failed: ${failedSteps.map((f) => `${f.step} (${f.error})`).join(', ')}`;
  return `${drained}, ${steps}`;
}
