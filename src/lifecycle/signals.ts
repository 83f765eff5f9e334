import type { ShutdownSignal } from '../../machines/triggers.js';
import { shutdownSignals } from '../platform.js';
import { claimSigint } from '../sigint.js';

/** What the host needs of `process` to hear signals; a fake in tests. */
export interface SignalSource {
  on(signal: ShutdownSignal, listener: () => void): unknown;
  off(signal: ShutdownSignal, listener: () => void): unknown;
}

/** This platform's (`src/platform.ts`): on Windows no process can be sent SIGTERM, so none is listened for. */
export const SHUTDOWN_SIGNALS: readonly ShutdownSignal[] = shutdownSignals(process.platform);

/**
 * Installing a listener replaces Node's default action (terminate), so a signal goes through
 * the machine instead of killing the process mid-teardown. Returns the function that removes them.
 */
export function watchSignals(
  source: SignalSource,
  onSignal: (signal: ShutdownSignal) => void,
  signals: readonly ShutdownSignal[] = SHUTDOWN_SIGNALS,
): () => void {
  const listeners = signals.map((signal) => {
    const listener = (): void => onSignal(signal);
    source.on(signal, listener);
    return [signal, listener] as const;
  });
  // The process's first SIGINT listener (src/sigint.ts) leaves a SIGINT to the machine now.
  const release = source === process && signals.includes('SIGINT') ? claimSigint() : () => {};
  return () => {
    for (const [signal, listener] of listeners) source.off(signal, listener);
    release();
  };
}
