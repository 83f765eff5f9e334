/**
 * The host's options and corner cases: when it starts listening, HTTP mode (no stdin),
 * inspection observers, a log that throws, what happens after `done`, and the keep-alive
 * timer on the real clock. Hand-written fakes throughout; the real clock only where the
 * point is what Node does with a real timer, and then no test waits for it to fire.
 */
import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import type { InspectionEvent } from 'xstate';
import { createLifecycle, type LifecycleOptions, startLifecycle } from '../../src/lifecycle/host.js';
import type { Log } from '../../src/log.js';
import { deferred } from '../support/deferred.js';
import { FakeClock, flush } from '../support/fake-clock.js';
import { createHarness, FakeStdin, FakeStdout } from '../support/lifecycle-harness.js';
import { recordingLog } from '../support/recording-log.js';

/** Options with every source faked; the test overrides what it is about. */
function fakes(overrides: Partial<LifecycleOptions> = {}) {
  const clock = new FakeClock();
  const stdin = new FakeStdin();
  const stdout = new FakeStdout();
  const signals = new EventEmitter();
  const exits: number[] = [];
  let exitCode: unknown;
  const log = recordingLog();
  const { lines } = log;
  const options: LifecycleOptions = {
    closeTransport: () => {},
    disposeStore: () => {},
    stdin,
    stdout,
    signals,
    parent: { ppid: () => 4242, intervalMs: 100 },
    clock,
    log,
    exitCode: {
      get: () => exitCode,
      set: (code) => {
        exitCode = code;
      },
    },
    exit: (code) => exits.push(code),
    activeResources: () => [],
    ...overrides,
  };
  const listeners = () => ({
    stdin: stdin.listenerCount('end') + stdin.listenerCount('close'),
    stdout: stdout.listenerCount('error'),
    signals: signals.listenerCount('SIGTERM') + signals.listenerCount('SIGINT') + signals.listenerCount('SIGHUP'),
  });
  return { options, clock, stdin, stdout, signals, exits, lines, listeners, exitCode: () => exitCode };
}

describe('starting', () => {
  it('nothing listens until start(), and a second start() changes nothing', async () => {
    const f = fakes();
    const lifecycle = createLifecycle(f.options);
    expect(f.listeners()).toEqual({ stdin: 0, stdout: 0, signals: 0 });
    expect(f.clock.pending()).toBe(0);
    lifecycle.start();
    lifecycle.start();
    expect(f.listeners()).toEqual({ stdin: 2, stdout: 1, signals: 3 });
    expect(f.clock.pending('unref')).toBe(1);
    f.signals.emit('SIGTERM');
    await lifecycle.done;
    expect(f.lines.filter((l) => l.startsWith('Shutting down'))).toEqual(['Shutting down (SIGTERM)...']);
  });

  it('in HTTP mode (no stdin) the HTTP server stopping is the trigger', async () => {
    const f = fakes({ stdin: null });
    const lifecycle = startLifecycle(f.options);
    expect(f.listeners().stdin).toBe(0);
    lifecycle.trigger({ type: 'http.stop' });
    const output = await lifecycle.done;
    expect(f.lines[0]).toBe('Shutting down (HTTP server stopped)...');
    expect(output.reason).toBe('HTTP server stopped');
  });

  it('trigger() stamps the exit code already set', async () => {
    const f = fakes({ exitCode: { get: () => '5', set: () => {} } });
    const lifecycle = startLifecycle(f.options);
    lifecycle.trigger({ type: 'parent.gone' });
    expect((await lifecycle.done).exitCode).toBe(5);
  });
});

describe('inspection observers', () => {
  it('each one sees the events; one that throws breaks neither the others nor teardown', async () => {
    const seen: string[] = [];
    const h = createHarness({
      inspect: [
        () => {
          throw new Error('observer bug');
        },
        (event: InspectionEvent) => {
          if (event.type === '@xstate.microstep')
            seen.push(String((event.snapshot as unknown as { value: unknown }).value));
        },
      ],
    });
    h.stdin.end();
    const output = await h.lifecycle.done;
    expect(output.exitCode).toBe(0);
    expect(seen).toEqual(['closingTransport', 'draining', 'disposingStore', 'done']);
  });
});

describe('a lifecycle whose own effects throw', () => {
  it.each([
    [new Error('stderr exploded'), 'stderr exploded'],
    ['plain words', 'plain words'],
  ])('still finishes (exit 1) when the log throws %j', async (thrown, message) => {
    const f = fakes();
    const lines: string[] = [];
    const log: Log = {
      line: (t) => {
        if (t.startsWith('Shutting down')) throw thrown;
        lines.push(t);
      },
      warn: (t) => lines.push(`QMD Warning: ${t}`),
    };
    const lifecycle = startLifecycle({ ...f.options, log });
    f.stdin.end();
    const output = await lifecycle.done;
    expect(output).toEqual({
      exitCode: 1,
      reason: 'unknown',
      failedSteps: [],
      drain: 'idle',
      escalatedBy: null,
      summary: 'lifecycle error, exit 1',
    });
    expect(lines).toEqual([
      `QMD Warning: the lifecycle machine failed: ${message}`,
      'Shutdown complete in 0 ms: lifecycle error, exit 1',
    ]);
    expect(f.exitCode()).toBe(1);
    // The actor failed before detaching its sources: finishing lets go of them.
    expect(f.listeners().stdin).toBe(0);
    expect(f.clock.pending()).toBe(1); // the watchdog, not the parent poll
    await f.clock.advance(1000);
    expect(f.exits).toEqual([1]);
  });
});

describe('after done', () => {
  it('a late handler settling or a late trigger is dropped quietly (XState would warn on the console)', async () => {
    const warned: unknown[][] = [];
    const original = console.warn;
    console.warn = (...args: unknown[]) => {
      warned.push(args);
    };
    try {
      const h = createHarness({ drainTimeoutMs: 10 });
      const handler = h.startHandler();
      h.stdin.end();
      await h.clock.advance(10);
      await h.lifecycle.done;
      handler.settle();
      await flush();
      h.lifecycle.trigger({ type: 'http.stop' });
      expect(h.state()).toBe('done');
    } finally {
      console.warn = original;
    }
    expect(warned).toEqual([]);
  });
});

describe('the keep-alive timer, on the real clock', () => {
  it('holds the loop while teardown runs with a delay Node accepts (no TimeoutOverflowWarning)', async () => {
    const timeouts = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    const warnings: Error[] = [];
    const onWarning = (warning: Error): void => {
      warnings.push(warning);
    };
    process.on('warning', onWarning);
    try {
      const closing = deferred();
      const log = recordingLog();
      const lifecycle = startLifecycle({
        closeTransport: () => closing.promise,
        disposeStore: () => {},
        stdin: null,
        stdout: null,
        signals: null,
        parent: null,
        log,
        exitCode: { get: () => undefined, set: () => {} },
        exit: () => {},
        activeResources: () => [],
      });
      const before = timeouts();
      void lifecycle.shutdown();
      await flush();
      // The keep-alive and the step's bound: both ref'd.
      expect(timeouts()).toBe(before + 2);
      expect(warnings.map((w) => w.name)).toEqual([]);
      closing.resolve();
      await lifecycle.done;
      // Both cleared; the watchdog is armed but unref'd, so it is not listed.
      expect(timeouts()).toBe(before);
    } finally {
      process.off('warning', onWarning);
    }
  });
});
