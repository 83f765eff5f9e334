import { EventEmitter } from 'node:events';
import type { LifecycleOutput } from '../../machines/lifecycle.js';
import type { ShutdownSignal } from '../../machines/triggers.js';
import { createLifecycle, type LifecycleOptions } from '../../src/lifecycle/host.js';
import type { Log } from '../../src/log.js';
import { type Deferred, deferred } from './deferred.js';
import { FakeClock } from './fake-clock.js';
import { fakeStep, type StepMode } from './fake-step.js';
import { recordProcess } from './process-record.js';

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

export type { StepMode };

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
}

export interface HandlerProbe {
  signal: AbortSignal;
  /** `calls.length` when its signal fired: the abort came before `calls[abortedAt]`. */
  abortedAt?: number;
  settle(): void;
  fail(error?: unknown): void;
  result: Promise<unknown>;
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

/**
 * The one fake lifecycle: the real host (`createLifecycle`, then `start(steps)` as
 * src/serve/serve-mcp.ts does) with hand-written fakes for every piece of I/O: stdin, stdout,
 * the log, signals, the parent PID, the clock, the exit code and `process.exit`.
 * `calls` records, in order, every effect a user could observe.
 */
export function createHarness(options: HarnessOptions = {}) {
  const clock = new FakeClock();
  // `callTimes`: when each entry of `calls` happened, on the fake clock (the contract oracle reads it).
  const recorded = recordProcess(clock, options.priorExitCode);
  const { calls, callTimes, record } = recorded;
  const log = options.log ?? recorded.log;
  const stdin = options.stdin ?? new FakeStdin();
  const stdout = new FakeStdout();
  const signals = new EventEmitter();
  const pending: Record<'closeTransport' | 'disposeStore', Deferred<void>[]> = { closeTransport: [], disposeStore: [] };
  const stepSignals: AbortSignal[] = [];
  /** Each teardown step as it began: when, and how many handlers were still in flight. */
  const stepLog: Array<{ name: string; at: number; inflight: number; drain: string | null }> = [];
  const handlers: HandlerProbe[] = [];
  let ppid = 4242;

  const step = (name: 'closeTransport' | 'disposeStore', mode: StepMode) => (signal: AbortSignal) => {
    record(name);
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
    stdin: options.stdin === null ? null : stdin,
    stdout,
    log,
    signals,
    parent: { ppid: () => ppid, intervalMs: options.parentPollMs ?? 100 },
    clock,
    ...(options.drainTimeoutMs !== undefined && { drainTimeoutMs: options.drainTimeoutMs }),
    ...(options.stepTimeoutMs !== undefined && { stepTimeoutMs: options.stepTimeoutMs }),
    ...(options.watchdogMs !== undefined && { watchdogMs: options.watchdogMs }),
    ...(options.traceFile !== undefined && { traceFile: options.traceFile }),
    ...(options.inspect !== undefined && { inspect: options.inspect }),
    exitCode: recorded.exitCode,
    exit: recorded.exit,
    activeResources: () => options.activeResources ?? ['TCPSocketWrap'],
  });
  const start = (): void =>
    lifecycle.start({
      closeTransport: step('closeTransport', options.closeTransport ?? 'ok'),
      disposeStore: step('disposeStore', options.disposeStore ?? 'ok'),
    });
  if (options.start !== false) start();

  // What `shutdown()` and `done` resolve with, once teardown completes.
  let output: LifecycleOutput | undefined;
  void lifecycle.done.then((o) => {
    output = o;
  });

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
    /** Starts a harness made with `start: false`; a second call changes nothing. */
    start,
    get exitCode() {
      return recorded.current;
    },
    set exitCode(value: unknown) {
      recorded.current = value;
    },
    /** What `done` resolved with, or `undefined` while teardown has not completed. */
    output: () => output,
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
      const d = deferred();
      let signal!: AbortSignal;
      const result = lifecycle.gate.run((s) => {
        signal = s;
        return d.promise;
      });
      result.catch(() => {});
      const probe: HandlerProbe = {
        signal,
        settle: () => d.resolve(),
        fail: (e?: unknown) => d.reject(e ?? new Error('boom')),
        result,
      };
      if (signal.aborted) probe.abortedAt = calls.length;
      else signal.addEventListener('abort', () => (probe.abortedAt = calls.length), { once: true });
      handlers.push(probe);
      return probe;
    },
    listeners() {
      return {
        stdin: stdin.listenerCount('end') + stdin.listenerCount('close'),
        stdout: stdout.listenerCount('error'),
        signals: signals.listenerCount('SIGTERM') + signals.listenerCount('SIGINT') + signals.listenerCount('SIGHUP'),
      };
    },
  };
}
