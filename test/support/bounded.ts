/**
 * Every wait for another process is bounded: a hang is a failure that says what did not
 * happen, never a stuck run. These are the only two places a test or a benchmark sets a
 * timer to give up (`within` for a promise, `Changes.until` for a fact that output changes).
 */

/** The generous bound of a wait in a spawned test. */
export const BOUND_MS = 20_000;

/** Words for what was awaited; a function is read only when the bound passes (it can show the output so far). */
export type What = string | (() => string);

function gaveUp(what: What, ms: number): Error {
  return new Error(`waited ${ms} ms for ${typeof what === 'string' ? what : what()}`);
}

/** `promise`, or a rejection once `ms` pass first. The timer is cleared either way. */
export function within<T>(promise: Promise<T>, what: What, ms = BOUND_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(gaveUp(what, ms)), ms);
  });
  return Promise.race([promise, bound]).finally(() => clearTimeout(timer));
}

/** Something that grows (a child's output, a list of events) says when it changed; waits re-check then. */
export class Changes {
  readonly #wakers = new Set<() => void>();

  changed(): void {
    for (const wake of [...this.#wakers]) wake();
  }

  /**
   * Resolves with `check()`'s first value other than `undefined`, tried now and at every
   * change; rejects when `check` throws (e.g. the process is gone), or once `ms` pass.
   */
  until<T>(check: () => T | undefined, what: What, ms = BOUND_MS): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const finish = (settle: () => void): void => {
        clearTimeout(timer);
        this.#wakers.delete(wake);
        settle();
      };
      const wake = (): void => {
        let value: T | undefined;
        try {
          value = check();
        } catch (error) {
          finish(() => reject(error));
          return;
        }
        if (value !== undefined) finish(() => resolve(value));
      };
      const timer = setTimeout(() => finish(() => reject(gaveUp(what, ms))), ms);
      this.#wakers.add(wake);
      wake();
    });
  }
}
