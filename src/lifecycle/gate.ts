/**
 * The in-flight gate: every tool handler runs through it, so the lifecycle knows how many
 * are running (`handler.started` / `handler.settled`) and can abort them on escalation.
 * The machine waits for the drain itself (it counts those events), so the gate has no `onIdle`.
 */
export interface InflightGate {
  /**
   * Runs `handler` as one in-flight unit. It receives an `AbortSignal` that fires when the
   * caller's `signal` does (the SDK aborts it on `server.close()`) or when the gate aborts
   * everything (escalation). The gate counts it as settled however it ends, rejection included.
   */
  run<T>(handler: (signal: AbortSignal) => T | Promise<T>, options?: { signal?: AbortSignal }): Promise<T>;
  /**
   * The same gate for work that runs inside a unit already counted (over HTTP a tool handler
   * runs inside its POST exchange, which is the unit the drain waits for): its handlers get
   * the same signals and are aborted by `abortAll()`, but are not counted, so one request is
   * one in-flight unit, not two.
   */
  uncounted(): HandlerGate;
  /** Handlers running now. */
  readonly size: number;
  /** Aborts every running handler's signal, and the signal of any handler started later. */
  abortAll(reason?: unknown): void;
}

/** What a tool handler needs of a gate: a way to run, with a signal that the lifecycle can abort. */
export type HandlerGate = Pick<InflightGate, 'run'>;

export interface GateOptions {
  onStarted?: () => void;
  onSettled?: () => void;
}

export function createInflightGate(options: GateOptions = {}): InflightGate {
  const running = new Set<AbortController>();
  const runningUncounted = new Set<AbortController>();
  let abortReason: unknown;
  let abortedAll = false;

  const settle = (controller: AbortController): void => {
    running.delete(controller);
    options.onSettled?.();
  };

  const runUnit = async <T>(
    handler: (signal: AbortSignal) => T | Promise<T>,
    runOptions: { signal?: AbortSignal } | undefined,
    counted: boolean,
  ): Promise<T> => {
    const controller = new AbortController();
    if (counted) {
      running.add(controller);
      options.onStarted?.();
    } else runningUncounted.add(controller);
    const outer = runOptions?.signal;
    // Called only with `outer` set: at once if it is already aborted, else as its listener.
    const forward = (): void => controller.abort(outer!.reason);
    if (abortedAll) controller.abort(abortReason);
    else if (outer?.aborted) forward();
    // An AbortSignal fires once; `finally` removes the listener either way.
    else outer?.addEventListener('abort', forward);
    try {
      return await handler(controller.signal);
    } finally {
      outer?.removeEventListener('abort', forward);
      if (counted) settle(controller);
      else runningUncounted.delete(controller);
    }
  };

  return {
    get size() {
      return running.size;
    },

    run: (handler, runOptions) => runUnit(handler, runOptions, true),

    uncounted: () => ({ run: (handler, runOptions) => runUnit(handler, runOptions, false) }),

    abortAll(reason = new Error('aborted: the server is shutting down')) {
      abortedAll = true;
      abortReason = reason;
      for (const controller of [...running, ...runningUncounted]) {
        try {
          controller.abort(reason);
        } catch {
          // An abort listener that throws must not stop the others from being aborted.
        }
      }
    },
  };
}
