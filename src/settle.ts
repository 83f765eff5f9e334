import { errorMessage } from './errors.js';
/**
 * Waiting and giving up, the same way everywhere: the one abortable wait and the one policy for
 * teardown steps that must all run. A neutral leaf: the store, the LLM wrapper and the
 * failpoints use it, and it imports nothing of ours.
 */

/**
 * `promise`, or a rejection with `reason()` as soon as `signal` fires. The promise itself runs
 * on: this only stops waiting for it (a native call cannot be interrupted, only abandoned).
 */
export function untilAborted<T>(promise: Promise<T>, signal: AbortSignal, reason: () => unknown): Promise<T> {
  if (signal.aborted) return Promise.reject(reason());
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(reason());
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** Resolves after `ms`, or rejects with the signal's reason as soon as it fires. */
export function abortableDelay(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Runs every step in order, each even if the ones before failed (a failed model disposal must
 * not leave the database open), then reports: nothing, the one failure as it was, or an
 * `AggregateError` of several, named by `what`.
 */
export async function runEvery(what: string, steps: ReadonlyArray<() => unknown>): Promise<void> {
  const failures: unknown[] = [];
  for (const step of steps) {
    try {
      await step();
    } catch (error) {
      failures.push(error);
    }
  }
  if (failures.length === 1) throw failures[0];
  if (failures.length > 1) {
    const messages = failures.map((f) => errorMessage(f)).join('; ');
    throw new AggregateError(failures, `${what}: ${messages}`);
  }
}
