/**
 * Failpoints: how tests and benchmarks make faults happen inside the real binary.
 * `QMD_FAILPOINTS="NAME=ACTION;NAME=ACTION"`, ACTION one of `delay(MS)`, `until(SIGUSR2)`,
 * `hang`, `throw` (semantics in `docs/design.md` §6). Inert unless set: with no spec, `hit()`
 * returns `undefined` synchronously, so a handler pays one Map lookup and no await.
 *
 * - `delay(MS)` is slow but well behaved: settles after MS, or rejects at once when its
 *   abort signal fires.
 * - `until(SIGUSR2)` is the same with the end chosen from outside: it settles when the process
 *   gets SIGUSR2, so a test holds a request in flight exactly as long as it needs, no timing.
 * - `hang` is the worst case: ignores its signal, never settles, and holds the event loop
 *   open with a ref'd timer, like a stuck native call or a socket that ignores cancellation.
 * - `throw` rejects at once with an error that names the failpoint.
 */
export type FailpointAction =
  | { kind: 'delay'; ms: number }
  | { kind: 'until'; signal: 'SIGUSR2' }
  | { kind: 'hang' }
  | { kind: 'throw' };

export interface Failpoints {
  readonly names: readonly string[];
  has(name: string): boolean;
  /** Runs the failpoint `name` if one is set; `undefined` (synchronously) if not. */
  hit(name: string, signal?: AbortSignal): Promise<void> | undefined;
  /**
   * The action of `name` if one is set, announced as `hit` announces it but not run: for a
   * failpoint carried out on another thread (`store.worker.query`, by `holdThread`).
   */
  carry(name: string): FailpointAction | undefined;
}

export class FailpointError extends Error {
  constructor(readonly failpoint: string) {
    super(`failpoint ${failpoint}: throw`);
    this.name = 'FailpointError';
  }
}

import { abortableDelay } from './settle.js';

/** Timers created by `hang`: kept here so nothing can collect or clear them. */
const hung: unknown[] = [];

/**
 * `onHit` hears every failpoint that fires, before it acts: a test waits for that line to know
 * a request is in flight (a hung handler says nothing else). `onAbort` hears a `delay` or
 * `until` cut short by its signal, so a spawned test can tell a drained request from an
 * aborted one (docs/design.md §2.1: only an escalation aborts handlers).
 */
export function parseFailpoints(
  spec: string | undefined,
  onHit?: (name: string, action: string) => void,
  onAbort?: (name: string, reason: unknown) => void,
): Failpoints {
  const actions = new Map<string, FailpointAction>();
  for (const part of (spec ?? '').split(';')) {
    const trimmed = part.trim();
    if (trimmed === '') continue;
    const eq = trimmed.indexOf('=');
    if (eq <= 0) throw new Error(`QMD_FAILPOINTS: expected NAME=ACTION, got "${trimmed}"`);
    const name = trimmed.slice(0, eq).trim();
    actions.set(name, parseAction(name, trimmed.slice(eq + 1).trim()));
  }
  return {
    names: [...actions.keys()],
    has: (name) => actions.has(name),
    hit(name, signal) {
      const action = actions.get(name);
      if (action === undefined) return undefined;
      onHit?.(name, action.kind);
      const pending = run(name, action, signal);
      if (onAbort === undefined || signal === undefined) return pending;
      return pending.catch((error: unknown) => {
        if (signal.aborted) onAbort(name, signal.reason);
        throw error;
      });
    },
    carry(name) {
      const action = actions.get(name);
      if (action !== undefined) onHit?.(name, action.kind);
      return action;
    },
  };
}

/**
 * Carries out `action` synchronously on this thread, for a failpoint that stands for a
 * synchronous call (`store.worker.query`, a query's SQL): `hang` is a JS loop that never
 * yields (a runaway query: only `worker.terminate()` or the process's exit ends it),
 * `delay(MS)` one that yields after MS, `throw` throws. `until(SIGUSR2)` cannot be waited for
 * without yielding, so it throws too, saying so.
 */
export function holdThread(name: string, action: FailpointAction): void {
  if (action.kind === 'throw') throw new FailpointError(name);
  if (action.kind === 'until') throw new Error(`failpoint ${name}: until(SIGUSR2) needs a thread that yields`);
  const end = action.kind === 'hang' ? Number.POSITIVE_INFINITY : performance.now() + action.ms;
  while (performance.now() < end) {
    // Never yields: the thread is as busy as a statement that does not return.
  }
}

function parseAction(name: string, text: string): FailpointAction {
  if (text === 'hang') return { kind: 'hang' };
  if (text === 'throw') return { kind: 'throw' };
  if (text === 'until(SIGUSR2)') return { kind: 'until', signal: 'SIGUSR2' };
  const delay = /^delay\((\d+)\)$/.exec(text);
  if (delay?.[1] !== undefined) return { kind: 'delay', ms: Number(delay[1]) };
  throw new Error(
    `QMD_FAILPOINTS: unknown action "${text}" for ${name} (use delay(MS), until(SIGUSR2), hang or throw)`,
  );
}

function run(name: string, action: FailpointAction, signal: AbortSignal | undefined): Promise<void> {
  switch (action.kind) {
    case 'throw':
      return Promise.reject(new FailpointError(name));
    case 'hang':
      hung.push(setInterval(() => {}, 2 ** 30));
      return new Promise<void>(() => {});
    case 'delay':
      return abortableDelay(action.ms, signal);
    case 'until':
      return untilSignal(action.signal, signal);
  }
}

/**
 * Settles when the process gets `name`, or rejects at once when `signal` fires. Its listener
 * is on only while it waits (the signal's default action, exit, is back once none waits).
 */
function untilSignal(name: NodeJS.Signals, signal: AbortSignal | undefined): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const stop = (): void => {
      process.off(name, onSignal);
      signal?.removeEventListener('abort', onAbort);
    };
    const onSignal = (): void => {
      stop();
      resolve();
    };
    const onAbort = (): void => {
      stop();
      reject(signal?.reason);
    };
    process.on(name, onSignal);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** The failpoints of this process, from `QMD_FAILPOINTS`. */
export const noFailpoints: Failpoints = parseFailpoints(undefined);
