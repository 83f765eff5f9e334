import { EventEmitter } from 'node:events';
import type { ShutdownSignal } from '../../machines/triggers.js';
import {
  createSharedLifecycle,
  type OpenedSession,
  type SharedLifecycleOptions,
} from '../../src/lifecycle/shared-host.js';
import { type Deferred, deferred } from './deferred.js';
import { FakeClock } from './fake-clock.js';
import { fakeStep, type StepMode } from './fake-step.js';
import { recordingLog } from './recording-log.js';

export interface SharedHarnessOptions {
  idleTimeoutMs?: number;
  drainTimeoutMs?: number;
  stepTimeoutMs?: number;
  sessionDrainTimeoutMs?: number;
  sessionStepTimeoutMs?: number;
  watchdogMs?: number;
  closeListener?: StepMode;
  disposeStore?: StepMode;
  /** How every session's steps behave. */
  closeServer?: StepMode;
  releaseSession?: StepMode;
  inspect?: SharedLifecycleOptions['inspect'];
}

/** A handler in flight in one session, settled when the test says. */
export interface SessionHandler {
  signal: AbortSignal;
  settle(): void;
}

/**
 * The real shared-server host (`createSharedLifecycle`) with hand-written fakes for its I/O:
 * signals, the clock, the exit code, `process.exit`, and every step. `calls` records, in order,
 * every effect a user could observe: steps by session, breadcrumbs, warnings, the exit code.
 */
export function createSharedHarness(options: SharedHarnessOptions = {}) {
  const clock = new FakeClock();
  const calls: string[] = [];
  const log = recordingLog((kind, text) => calls.push(`${kind === 'warn' ? 'warn' : 'log'}:${text}`));
  const signals = new EventEmitter();
  const exits: number[] = [];
  const pending = new Map<string, Deferred<void>>();
  const sessions = new Map<string, { opened: OpenedSession; handlers: SessionHandler[] }>();
  let exitCode: unknown;

  const step = (name: string, mode: StepMode) => (): Promise<void> => {
    calls.push(name);
    return fakeStep(name, mode, clock, (d) => pending.set(name, d));
  };

  const lifecycle = createSharedLifecycle({
    clock,
    log,
    signals,
    exitCode: {
      get: () => exitCode,
      set: (code) => {
        exitCode = code;
        calls.push(`exitCode=${code}`);
      },
    },
    exit: (code) => {
      exits.push(code);
      calls.push(`exit(${code})`);
    },
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

  return {
    clock,
    calls,
    lines: log.lines,
    exits,
    pending,
    lifecycle,
    get exitCode() {
      return exitCode;
    },
    set exitCode(value: unknown) {
      exitCode = value;
    },
    signal(name: ShutdownSignal) {
      signals.emit(name);
    },
    /** A relay connects: a session, or `null` when the server no longer accepts. */
    open(): string | null {
      let id = '';
      const opened = lifecycle.openSession({
        closeServer: () => step(`closeServer:${id}`, options.closeServer ?? 'ok')(),
        releaseSession: () => step(`releaseSession:${id}`, options.releaseSession ?? 'ok')(),
      });
      if (opened === null) return null;
      id = opened.id;
      sessions.set(id, { opened, handlers: [] });
      return id;
    },
    /** A tool call starts in a session; the test settles it. */
    startHandler(id: string): SessionHandler {
      const entry = sessions.get(id)!;
      const d = deferred();
      let signal!: AbortSignal;
      void entry.opened.gate
        .run((s) => {
          signal = s;
          return d.promise;
        })
        .catch(() => {});
      const handler = { signal, settle: () => d.resolve() };
      entry.handlers.push(handler);
      return handler;
    },
    trigger(id: string, type: 'connection.ended' | 'connection.closed' | 'transport.closed') {
      sessions.get(id)!.opened.trigger({ type });
    },
    inflight(id: string): number {
      return sessions.get(id)!.opened.gate.size;
    },
    steps: () => calls.filter((c) => !c.startsWith('log:') && !c.startsWith('warn:') && !c.startsWith('exit(')),
  };
}

export type SharedHarness = ReturnType<typeof createSharedHarness>;
