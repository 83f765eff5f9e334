/**
 * The host's options and corner cases: when it starts listening, HTTP mode (no stdin),
 * inspection observers, a log that throws, what happens after `done`, and the keep-alive
 * timer on the real clock. Hand-written fakes throughout; the real clock only where the
 * point is what Node does with a real timer, and then no test waits for it to fire.
 */
import { describe, expect, it } from 'vitest';
import type { InspectionEvent } from 'xstate';
import { createLifecycle } from '../../src/lifecycle/host.js';
import { type Log, silentLog } from '../../src/log.js';
import { deferred } from '../support/deferred.js';
import { flush } from '../support/fake-clock.js';
import { createHarness, DETACHED } from '../support/host-harness.js';

describe('starting', () => {
  it('nothing listens until start(), and a second start() changes nothing', async () => {
    const h = createHarness({ start: false });
    expect(h.listeners()).toEqual({ stdin: 0, stdout: 0, signals: 0 });
    expect(h.clock.pending()).toBe(0);
    h.start();
    h.start();
    expect(h.listeners()).toEqual({ stdin: 2, stdout: 1, signals: 3 });
    expect(h.clock.pending('unref')).toBe(1);
    h.signal('SIGTERM');
    await h.lifecycle.done;
    expect(h.lines.filter((l) => l.startsWith('Shutting down'))).toEqual(['Shutting down (SIGTERM)...']);
  });

  it('in HTTP mode (no stdin) the HTTP server stopping is the trigger', async () => {
    const h = createHarness({ stdin: null });
    expect(h.listeners().stdin).toBe(0);
    h.lifecycle.trigger({ type: 'http.closed' });
    const output = await h.lifecycle.done;
    expect(h.lines[0]).toBe('Shutting down (HTTP server stopped)...');
    expect(output.reason).toBe('HTTP server stopped');
  });

  it('trigger() stamps the exit code already set', async () => {
    const h = createHarness({ priorExitCode: '5' });
    h.lifecycle.trigger({ type: 'parent.gone' });
    expect((await h.lifecycle.done).exitCode).toBe(5);
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
    const lines: string[] = [];
    const log: Log = {
      line: (t) => {
        if (t.startsWith('Shutting down')) throw thrown;
        lines.push(t);
      },
      warn: (t) => lines.push(`QMD Warning: ${t}`),
    };
    const h = createHarness({ log });
    h.stdin.end();
    const output = await h.lifecycle.done;
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
    expect(h.exitCode).toBe(1);
    // The actor failed before detaching its sources: finishing lets go of them.
    expect(h.listeners().stdin).toBe(0);
    expect(h.clock.pending()).toBe(1); // the watchdog, not the parent poll
    await h.clock.advance(1000);
    expect(h.exits).toEqual([1]);
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
      h.lifecycle.trigger({ type: 'http.closed' });
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
      // The clock is the one default here: Node's own timers.
      const lifecycle = createLifecycle({ ...DETACHED, log: silentLog, activeResources: () => [] });
      lifecycle.start({ closeTransport: () => closing.promise, disposeStore: () => {} });
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
