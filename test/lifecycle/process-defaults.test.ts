/**
 * Every source the host is not given defaults to `process.*` (the qmd convention
 * `options.stdin ?? process.stdin`). In process, without spawning: the test counts the
 * listeners the host adds to the real process streams and signals, drives teardown with
 * `shutdown()`, and removes what the host leaves for the life of the process (signal
 * listeners, the stdout guard) so the test worker is left as it was. `process.exit` is the
 * one default not exercised here: the spawned test (process.test.ts) sees it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createLifecycle } from '../../src/lifecycle/host.js';
import { silentLog } from '../../src/log.js';
import { FakeClock } from '../support/fake-clock.js';
import { DETACHED } from '../support/host-harness.js';
import { recordingLog } from '../support/recording-log.js';

const SIGNALS = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const;

function snapshotListeners() {
  return {
    signals: SIGNALS.map((s) => process.listeners(s)),
    stdoutError: process.stdout.listeners('error'),
    stdin: process.stdin.listenerCount('end') + process.stdin.listenerCount('close'),
  };
}

const restore: Array<() => void> = [];
afterEach(() => {
  for (const undo of restore.splice(0).reverse()) undo();
});

/** Removes, after the test, the listeners added since `before` (the host never removes them). */
function cleanUpAfter(before: ReturnType<typeof snapshotListeners>): void {
  restore.push(() => {
    SIGNALS.forEach((signal, i) => {
      for (const l of process.listeners(signal)) {
        if (!before.signals[i]!.includes(l)) process.off(signal, l as () => void);
      }
    });
    for (const l of process.stdout.listeners('error')) {
      if (!before.stdoutError.includes(l)) process.stdout.off('error', l as () => void);
    }
  });
}

describe('sources default to the process', () => {
  it('signals, stdout, stdin and the parent are watched; stdin is let go when teardown starts', async () => {
    const before = snapshotListeners();
    cleanUpAfter(before);
    const clock = new FakeClock();
    const log = recordingLog();
    const lifecycle = createLifecycle({
      clock,
      log,
      exitCode: { get: () => undefined, set: () => {} },
      exit: () => {},
    });
    lifecycle.start({ closeTransport: () => {}, disposeStore: () => {} });
    expect(SIGNALS.map((s) => process.listenerCount(s) - before.signals[SIGNALS.indexOf(s)]!.length)).toEqual([
      1, 1, 1,
    ]);
    expect(process.stdout.listenerCount('error')).toBe(before.stdoutError.length + 1);
    expect(process.stdin.listenerCount('end') + process.stdin.listenerCount('close')).toBe(before.stdin + 2);
    // The parent watch polls process.ppid on the injected clock, unref'd.
    expect(clock.pending('unref')).toBe(1);
    await clock.advance(500);
    expect(lifecycle.state()).toBe('connected');
    expect(clock.pending('unref')).toBe(1);

    await lifecycle.shutdown();
    expect(log.lines[0]).toBe('Shutting down (shutdown requested)...');
    expect(process.stdin.listenerCount('end') + process.stdin.listenerCount('close')).toBe(before.stdin);
  });

  it('the exit code lives in process.exitCode: an earlier one is kept, a failure sets 1', async () => {
    const saved = process.exitCode;
    restore.push(() => {
      process.exitCode = saved;
    });
    const run = async (prior: number | undefined, disposeStore: () => void) => {
      process.exitCode = prior;
      // The exit code slot is the one default here: process.exitCode.
      const lifecycle = createLifecycle({ ...DETACHED, exitCode: undefined, clock: new FakeClock(), log: silentLog });
      lifecycle.start({ closeTransport: () => {}, disposeStore });
      const output = await lifecycle.shutdown();
      return [output.exitCode, process.exitCode];
    };
    expect(await run(3, () => {})).toEqual([3, 3]);
    expect(
      await run(undefined, () => {
        throw new Error('disk gone');
      }),
    ).toEqual([1, 1]);
    expect(await run(0, () => {})).toEqual([0, 0]);
  });

  it('the watchdog names what process.getActiveResourcesInfo() reports', async () => {
    const clock = new FakeClock();
    const log = recordingLog();
    const exits: number[] = [];
    const lifecycle = createLifecycle({ ...DETACHED, clock, watchdogMs: 10, log, exit: (code) => exits.push(code) });
    lifecycle.start({ closeTransport: () => {}, disposeStore: () => {} });
    await lifecycle.shutdown();
    await clock.advance(10);
    expect(exits).toEqual([0]);
    expect(log.warnings).toHaveLength(1);
    expect(log.warnings[0]).toMatch(/^still running 10 ms after teardown; held by: (.+)\. Exiting with code 0\.$/);
    expect(log.warnings[0]).not.toContain('held by: unknown');
  });

  it('logs to process.stderr, guarding it against EPIPE once', async () => {
    const before = process.stderr.listeners('error');
    restore.push(() => {
      for (const l of process.stderr.listeners('error')) {
        if (!before.includes(l)) process.stderr.off('error', l as () => void);
      }
    });
    const start = () => {
      // The log is the one default here: a writer over process.stderr.
      const lifecycle = createLifecycle({ ...DETACHED, clock: new FakeClock() });
      lifecycle.start({ closeTransport: () => {}, disposeStore: () => {} });
      return lifecycle;
    };
    const lifecycles = [start(), start()];
    expect(process.stderr.listenerCount('error')).toBe(before.length + 1);
    // Two breadcrumbs and two summaries reach the test's stderr.
    const outputs = await Promise.all(lifecycles.map((l) => l.shutdown('process-defaults test: default log')));
    expect(outputs.map((o) => o.exitCode)).toEqual([0, 0]);
  });
});
