import { EventEmitter } from 'node:events';
import type { ServerOutput } from '../../machines/shared-server.js';
import type { ShutdownSignal } from '../../machines/triggers.js';
import {
  createSharedLifecycle,
  type OpenedSession,
  type SharedLifecycleOptions,
} from '../../src/lifecycle/shared-host.js';
import { type Deferred, deferred } from './deferred.js';
import { FakeClock } from './fake-clock.js';
import { fakeStep, type StepMode } from './fake-step.js';
import { recordProcess } from './process-record.js';

export interface SharedHarnessOptions {
  idleTimeoutMs?: number;
  drainTimeoutMs?: number;
  stepTimeoutMs?: number;
  sessionDrainTimeoutMs?: number;
  sessionStepTimeoutMs?: number;
  watchdogMs?: number;
  closeListener?: StepMode;
  disposeStore?: StepMode;
  /** How every session's steps behave (`manual`: each session's step waits for `settleStep`). */
  closeServer?: StepMode;
  releaseSession?: StepMode;
  inspect?: SharedLifecycleOptions['inspect'];
}

/** A handler in flight in one session, settled when the test says. */
export interface SessionHandler {
  session: string;
  signal: AbortSignal;
  /** `calls.length` when its signal fired: the abort came before `calls[abortedAt]`. */
  abortedAt?: number;
  settled: boolean;
  settle(): void;
}

/**
 * The real shared-server host (`createSharedLifecycle`) with hand-written fakes for its I/O:
 * signals, the clock, the exit code, `process.exit`, and every step. `calls` records, in order,
 * every effect a user could observe (steps by session, `open:<id>` or `open:refused` for each
 * relay that connects, `detach:<id>`, breadcrumbs, warnings, the exit code), and `callTimes`
 * when each happened on the fake clock: the contract oracle (test/model/shared-oracle.ts) reads both.
 */
export function createSharedHarness(options: SharedHarnessOptions = {}) {
  const clock = new FakeClock();
  const recorded = recordProcess(clock);
  const { calls, callTimes, record } = recorded;
  const signals = new EventEmitter();
  /** The latest run of each step by name (`closeListener`, `closeServer:session-1`, …) in manual mode. */
  const pending = new Map<string, Deferred<void>>();
  const settledSteps = new WeakSet<Deferred<void>>();
  const sessions = new Map<string, OpenedSession>();
  const handlers: SessionHandler[] = [];

  const step = (name: string, mode: StepMode) => (): Promise<void> => {
    record(name);
    return fakeStep(name, mode, clock, (d) => pending.set(name, d));
  };

  const lifecycle = createSharedLifecycle({
    clock,
    log: recorded.log,
    signals,
    exitCode: recorded.exitCode,
    exit: recorded.exit,
    activeResources: () => ['TCPServerWrap'],
    ...(options.idleTimeoutMs !== undefined && { idleTimeoutMs: options.idleTimeoutMs }),
    ...(options.drainTimeoutMs !== undefined && { drainTimeoutMs: options.drainTimeoutMs }),
    ...(options.stepTimeoutMs !== undefined && { stepTimeoutMs: options.stepTimeoutMs }),
    ...(options.sessionDrainTimeoutMs !== undefined && { sessionDrainTimeoutMs: options.sessionDrainTimeoutMs }),
    ...(options.sessionStepTimeoutMs !== undefined && { sessionStepTimeoutMs: options.sessionStepTimeoutMs }),
    ...(options.watchdogMs !== undefined && { watchdogMs: options.watchdogMs }),
    ...(options.inspect !== undefined && { inspect: options.inspect }),
  });
  lifecycle.start({
    closeListener: step('closeListener', options.closeListener ?? 'ok'),
    disposeStore: step('disposeStore', options.disposeStore ?? 'ok'),
  });

  let output: ServerOutput | undefined;
  void lifecycle.done.then((o) => {
    output = o;
  });

  return {
    clock,
    calls,
    callTimes,
    lines: recorded.log.lines,
    exits: recorded.exits,
    pending,
    handlers,
    lifecycle,
    get exitCode() {
      return recorded.current;
    },
    set exitCode(value: unknown) {
      recorded.current = value;
    },
    /** What `done` resolved with, or `undefined` while teardown has not completed. */
    output: () => output,
    signal(name: ShutdownSignal) {
      signals.emit(name);
    },
    /** A relay connects: a session, or `null` when the server no longer accepts. */
    open(): string | null {
      let id = '';
      const opened = lifecycle.openSession({
        closeServer: () => step(`closeServer:${id}`, options.closeServer ?? 'ok')(),
        releaseSession: () => step(`releaseSession:${id}`, options.releaseSession ?? 'ok')(),
        detach: () => record(`detach:${id}`),
      });
      record(`open:${opened?.id ?? 'refused'}`);
      if (opened === null) return null;
      id = opened.id;
      sessions.set(id, opened);
      return id;
    },
    /** A tool call starts in a session; the test settles it. */
    startHandler(id: string): SessionHandler {
      const d = deferred();
      let signal!: AbortSignal;
      void sessions
        .get(id)!
        .gate.run((s) => {
          signal = s;
          return d.promise;
        })
        .catch(() => {});
      const handler: SessionHandler = {
        session: id,
        signal,
        settled: false,
        settle: () => {
          handler.settled = true;
          d.resolve();
        },
      };
      if (signal.aborted) handler.abortedAt = calls.length;
      else signal.addEventListener('abort', () => (handler.abortedAt = calls.length), { once: true });
      handlers.push(handler);
      return handler;
    },
    trigger(id: string, type: 'connection.ended' | 'connection.closed' | 'transport.closed') {
      sessions.get(id)!.trigger({ type });
    },
    inflight(id: string): number {
      return sessions.get(id)!.gate.size;
    },
    /** Whether the step `name` is running in manual mode and the test has not settled it. */
    stepRunning(name: string): boolean {
      const d = pending.get(name);
      return d !== undefined && !settledSteps.has(d);
    },
    /** Settles the running manual step `name`: resolves it, or rejects it with `error`. */
    settleStep(name: string, error?: unknown): void {
      const d = pending.get(name);
      if (!d || settledSteps.has(d)) throw new Error(`${name} is not running`);
      settledSteps.add(d);
      if (error === undefined) d.resolve();
      else d.reject(error);
    },
    steps: () => calls.filter((c) => !/^(log:|warn:|exit\(|open:|detach:)/.test(c)),
    listeners: () =>
      signals.listenerCount('SIGTERM') + signals.listenerCount('SIGINT') + signals.listenerCount('SIGHUP'),
  };
}

export type SharedHarness = ReturnType<typeof createSharedHarness>;
