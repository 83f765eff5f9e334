/**
 * A FIFO that runs one task at a time. The embedder puts every native embedding call through
 * one of these, so "running natively" is a well-defined count (0 or 1) that `dispose()` can
 * wait for, and "queued" is a list it can reject.
 */
interface Job {
  run: () => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
  detach: () => void;
}

export class SerialQueue {
  readonly #jobs: Job[] = [];
  #current: Promise<void> | undefined;
  #closed: (() => Error) | undefined;

  /** Tasks started and not yet settled: 0 or 1. */
  get running(): number {
    return this.#current === undefined ? 0 : 1;
  }

  /** Tasks waiting for their turn. */
  get pending(): number {
    return this.#jobs.length;
  }

  /**
   * Runs `task` after the tasks before it. Rejects with `closed()`'s error if the queue is
   * closed, and with `aborted(signal)` if `signal` fires while the task is still waiting (a
   * started task is the task's business).
   */
  add<T>(task: () => Promise<T>, signal?: AbortSignal, aborted?: (signal: AbortSignal) => Error): Promise<T> {
    if (this.#closed !== undefined) return Promise.reject(this.#closed());
    if (signal?.aborted) return Promise.reject(aborted?.(signal) ?? signal.reason);
    return new Promise<T>((resolve, reject) => {
      const onAbort = (): void => {
        const index = this.#jobs.indexOf(job);
        if (index === -1) return;
        this.#jobs.splice(index, 1);
        reject(aborted?.(signal!) ?? signal?.reason);
      };
      const job: Job = {
        run: task,
        resolve: resolve as (value: unknown) => void,
        reject,
        detach: () => signal?.removeEventListener('abort', onAbort),
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#jobs.push(job);
      this.#next();
    });
  }

  /**
   * Refuses new tasks, rejects the waiting ones with `reason()`, and settles when the running
   * task (if any) has settled. It never abandons a running task: that is the point.
   */
  close(reason: () => Error): Promise<void> {
    this.#closed ??= reason;
    for (const job of this.#jobs.splice(0)) {
      job.detach();
      job.reject(reason());
    }
    return this.#current ?? Promise.resolve();
  }

  #next(): void {
    if (this.#current !== undefined) return;
    const job = this.#jobs.shift();
    if (job === undefined) return;
    job.detach();
    this.#current = (async () => {
      try {
        job.resolve(await job.run());
      } catch (error) {
        job.reject(error);
      } finally {
        this.#current = undefined;
        this.#next();
      }
    })();
  }
}
