/**
 * The fake host of each machine: the real host (`createLifecycle`, `createSharedLifecycle`) with
 * hand-written fakes for every piece of I/O (the clock, signals, the log, the exit code,
 * `process.exit`, the steps, and for the lifecycle stdin, stdout and the parent PID). `calls`
 * records, in order, every effect a user could observe and `callTimes` when each happened on
 * the fake clock: the contract oracles (test/model/oracle.ts, shared-oracle.ts) read both.
 */
import { EventEmitter } from 'node:events';
import type { LifecycleOutput } from '../../machines/lifecycle.js';
import type { ServerOutput } from '../../machines/shared-server.js';
import type { ShutdownSignal } from '../../machines/triggers.js';
import type { InflightGate } from '../../src/lifecycle/gate.js';
import { createLifecycle, type LifecycleOptions } from '../../src/lifecycle/host.js';
import type { HostOptions } from '../../src/lifecycle/host-options.js';
import {
  createSharedLifecycle,
  type OpenedSession,
  type SharedLifecycleOptions,
} from '../../src/lifecycle/shared-host.js';
import type { Log } from '../../src/log.js';
import { type Deferred, deferred } from './deferred.js';
import { FakeClock } from './fake-clock.js';
import { fakeStep, type StepMode } from './fake-step.js';
import { FakeWatcher } from './fake-watcher.js';
import { recordProcess } from './process-record.js';
import { SAFETY } from './run-bounds.js';

export type { StepMode };

/** A tool handler in flight through a gate, settled when the test says. */
export interface HandlerProbe {
  /** The shared server's session it runs in. */
  session?: string;
  signal: AbortSignal;
  /** `calls.length` when its signal fired: the abort came before `calls[abortedAt]`. */
  abortedAt?: number;
  settled: boolean;
  settle(): void;
  fail(error?: unknown): void;
  result: Promise<unknown>;
}

/** The host options a test may set on either fake host; unset, the host's defaults. */
type HostSettings = Pick<HostOptions, 'drainTimeoutMs' | 'stepTimeoutMs' | 'watchdogMs' | 'traceFile' | 'inspect'>;

/** What both fake hosts share: the clock, the recorded process, the signals, and `done`'s output. */
function fakeProcess<Output>(settings: HostSettings, priorExitCode?: unknown) {
  const clock = new FakeClock();
  const runs = new Map<string, number>();
  const recorded = recordProcess(clock, priorExitCode);
  const signals = new EventEmitter();
  let output: Output | undefined;
  return {
    clock,
    recorded,
    signals,
    /** The host options every fake host takes. */
    hostOptions: {
      clock,
      signals,
      exitCode: recorded.exitCode,
      exit: recorded.exit,
      drainTimeoutMs: settings.drainTimeoutMs,
      stepTimeoutMs: settings.stepTimeoutMs,
      watchdogMs: settings.watchdogMs,
      traceFile: settings.traceFile,
      inspect: settings.inspect,
    },
    /** Captures what `done` resolves with, once teardown completes. */
    capture(done: Promise<Output>): void {
      void done.then((o) => {
        output = o;
      });
    },
    output: () => output,
    /**
     * True once the step `name` has run `SAFETY` times in this host: it then succeeds, so that a
     * machine looping through its steps ends even with the run bounds broken (their own tests).
     */
    giveUp(name: string): boolean {
      const n = (runs.get(name) ?? 0) + 1;
      runs.set(name, n);
      return n > SAFETY;
    },
    signalListeners: () =>
      signals.listenerCount('SIGTERM') + signals.listenerCount('SIGINT') + signals.listenerCount('SIGHUP'),
  };
}

/** Starts a tool handler through `gate`; the test settles it. */
function probeHandler(gate: InflightGate, calls: string[], session?: string): HandlerProbe {
  const d = deferred();
  let signal!: AbortSignal;
  const result = gate.run((s) => {
    signal = s;
    return d.promise;
  });
  result.catch(() => {});
  const probe: HandlerProbe = {
    ...(session !== undefined && { session }),
    signal,
    settled: false,
    settle: () => {
      probe.settled = true;
      d.resolve();
    },
    fail: (e?: unknown) => d.reject(e ?? new Error('boom')),
    result,
  };
  if (signal.aborted) probe.abortedAt = calls.length;
  else signal.addEventListener('abort', () => (probe.abortedAt = calls.length), { once: true });
  return probe;
}

// ---- the lifecycle (`qmd mcp`, the relay) --------------------------------------------------
/** A stdin that emits exactly what the test says, and reports `readableEnded`/`destroyed` like a stream. */
export class FakeStdin extends EventEmitter {
  readableEnded = false;
  destroyed = false;
  end(): void {
    this.readableEnded = true;
    this.emit('end');
  }
  close(): void {
    this.destroyed = true;
    this.emit('close');
  }
}

/** A stdout whose client can stop reading: `fail()` emits the EPIPE a real pipe would. */
export class FakeStdout extends EventEmitter {
  fail(code = 'EPIPE'): void {
    this.emit('error', Object.assign(new Error(`write ${code}`), { code }));
  }
}

export interface HarnessOptions {
  closeTransport?: StepMode;
  disposeStore?: StepMode;
  drainTimeoutMs?: number;
  stepTimeoutMs?: number;
  watchdogMs?: number;
  parentPollMs?: number;
  /** What the exit code slot holds before any trigger (`process.exitCode` in production). */
  priorExitCode?: unknown;
  /** `null`: stdin is not a client (HTTP mode); `h.stdin` is then connected to nothing. */
  stdin?: FakeStdin | null;
  /** `false`: created but not started, as a composition root has it before `start(steps)`. */
  start?: boolean;
  log?: Log;
  traceFile?: string;
  activeResources?: string[];
  inspect?: LifecycleOptions['inspect'];
  /**
   * Gives the lifecycle a fake index watcher (`h.watcher`), as `qmd mcp` gives it the real one:
   * its calls are recorded among the others and it holds an unref'd timer until closed.
   */
  watcher?: boolean;
}

export type Harness = ReturnType<typeof createHarness>;

/**
 * Options for a real lifecycle that hears no process-level source and cannot touch the
 * process: no stdin, stdout, signals or parent watch; the exit code and `exit` are sinks.
 * Spread it, then name what the test is about.
 */
export const DETACHED = {
  stdin: null,
  stdout: null,
  signals: null,
  parent: null,
  exitCode: { get: () => undefined, set: () => {} },
  exit: () => {},
} satisfies LifecycleOptions;

/** The fake lifecycle: the real host, then `start(steps)` as src/serve/serve-mcp.ts does. */
export function createHarness(options: HarnessOptions = {}) {
  const fake = fakeProcess<LifecycleOutput>(options, options.priorExitCode);
  const { clock, recorded, signals, giveUp } = fake;
  const { calls, callTimes, record } = recorded;
  const log = options.log ?? recorded.log;
  const stdin = options.stdin ?? new FakeStdin();
  const stdout = new FakeStdout();
  const pending: Record<'closeTransport' | 'disposeStore', Deferred<void>[]> = { closeTransport: [], disposeStore: [] };
  const stepSignals: AbortSignal[] = [];
  /** Each teardown step as it began: when, and how many handlers were still in flight. */
  const stepLog: Array<{ name: string; at: number; inflight: number; drain: string | null }> = [];
  const handlers: HandlerProbe[] = [];
  let ppid = 4242;

  const step = (name: 'closeTransport' | 'disposeStore', mode: StepMode) => (signal: AbortSignal) => {
    record(name);
    // A machine that loops through its steps: the run bounds stop it long before (giveUp).
    if (giveUp(name)) return Promise.resolve();
    stepSignals.push(signal);
    stepLog.push({
      name,
      at: clock.now(),
      inflight: lifecycle.gate.size,
      drain: lifecycle.actor.getSnapshot().context.drain,
    });
    return fakeStep(name, mode, clock, (d) => pending[name].push(d));
  };

  const lifecycle = createLifecycle({
    ...fake.hostOptions,
    stdin: options.stdin === null ? null : stdin,
    stdout,
    log,
    parent: { ppid: () => ppid, intervalMs: options.parentPollMs ?? 100 },
    activeResources: () => options.activeResources ?? ['TCPSocketWrap'],
  });
  const watcher = options.watcher ? new FakeWatcher({ clock, record }) : undefined;
  if (watcher) lifecycle.ownWatcher(watcher);
  const start = (): void =>
    lifecycle.start({
      closeTransport: step('closeTransport', options.closeTransport ?? 'ok'),
      disposeStore: step('disposeStore', options.disposeStore ?? 'ok'),
    });
  if (options.start !== false) start();

  fake.capture(lifecycle.done);

  return {
    clock,
    calls,
    callTimes,
    lines: recorded.log.lines,
    stdin,
    stdout,
    signals,
    exits: recorded.exits,
    pending,
    stepSignals,
    stepLog,
    handlers,
    lifecycle,
    /** The fake watcher, with `watcher: true`. */
    watcher,
    /** Starts a harness made with `start: false`; a second call changes nothing. */
    start,
    get exitCode() {
      return recorded.current;
    },
    set exitCode(value: unknown) {
      recorded.current = value;
    },
    /** What `done` resolved with, or `undefined` while teardown has not completed. */
    output: fake.output,
    /** The teardown steps that ran, in order. */
    steps: () => calls.filter((c) => c === 'closeTransport' || c === 'disposeStore'),
    state: () => lifecycle.state(),
    signal(name: ShutdownSignal) {
      signals.emit(name);
    },
    /** The parent dies: the PPID changes and the next poll notices. */
    async parentDies() {
      ppid = 1;
      await clock.advance(options.parentPollMs ?? 100);
    },
    /**
     * The MCP transport closes: by itself while connected (SDK v2's stdio transport sees EOF),
     * or because teardown closed it. The composition root reports every close.
     */
    transportCloses() {
      lifecycle.trigger({ type: 'transport.closed' });
    },
    /** Starts a tool handler through the gate; the test settles it. */
    startHandler(): HandlerProbe {
      const probe = probeHandler(lifecycle.gate, calls);
      handlers.push(probe);
      return probe;
    },
    listeners() {
      return {
        stdin: stdin.listenerCount('end') + stdin.listenerCount('close'),
        stdout: stdout.listenerCount('error'),
        signals: fake.signalListeners(),
      };
    },
  };
}

// ---- the shared server (`qmd mcp --shared`) -----------------------------------------------

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
  traceFile?: string;
  log?: Log;
}

/** A handler in flight in one session. */
export type SessionHandler = HandlerProbe & { session: string };

/**
 * The fake shared server. Besides steps by session, `calls` has `open:<id>` or `open:refused`
 * for each relay that connects and `detach:<id>`.
 */
export function createSharedHarness(options: SharedHarnessOptions = {}) {
  const fake = fakeProcess<ServerOutput>(options);
  const { clock, recorded, giveUp } = fake;
  const { calls, callTimes, record } = recorded;
  /** The latest run of each step by name (`closeListener`, `closeServer:session-1`, …) in manual mode. */
  const pending = new Map<string, Deferred<void>>();
  const settledSteps = new WeakSet<Deferred<void>>();
  const sessions = new Map<string, OpenedSession>();
  const handlers: SessionHandler[] = [];

  const step = (name: string, mode: StepMode) => (): Promise<void> => {
    record(name);
    if (giveUp(name)) return Promise.resolve();
    return fakeStep(name, mode, clock, (d) => pending.set(name, d));
  };

  const lifecycle = createSharedLifecycle({
    ...fake.hostOptions,
    log: options.log ?? recorded.log,
    activeResources: () => ['TCPServerWrap'],
    idleTimeoutMs: options.idleTimeoutMs,
    sessionDrainTimeoutMs: options.sessionDrainTimeoutMs,
    sessionStepTimeoutMs: options.sessionStepTimeoutMs,
  });
  lifecycle.start({
    closeListener: step('closeListener', options.closeListener ?? 'ok'),
    disposeStore: step('disposeStore', options.disposeStore ?? 'ok'),
  });

  fake.capture(lifecycle.done);

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
    output: fake.output,
    signal(name: ShutdownSignal) {
      fake.signals.emit(name);
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
      const handler = probeHandler(sessions.get(id)!.gate, calls, id) as SessionHandler;
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
    listeners: fake.signalListeners,
  };
}

export type SharedHarness = ReturnType<typeof createSharedHarness>;
