/**
 * Named scenarios for the lifecycle host, each with hand-written fakes and
 * a fake clock: what a user could observe — the order of teardown calls, the exit code, the
 * stderr lines.
 */
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLog } from '../../src/log.js';
import { flush } from '../support/fake-clock.js';
import { createHarness, FakeStdin } from '../support/host-harness.js';

describe('the host, by scenario', () => {
  it('stdin end tears down in order and exits 0', async () => {
    const h = createHarness();
    h.stdin.end();
    const output = await h.lifecycle.done;
    expect(h.calls).toEqual([
      'log:Shutting down (stdin closed)...',
      'closeTransport',
      'disposeStore',
      'exitCode=0',
      expect.stringMatching(/^log:Shutdown complete in [\d.]+ ms: stdin closed: drained, all steps ok, exit 0$/),
    ]);
    expect(output).toMatchObject({ exitCode: 0, reason: 'stdin closed', drain: 'idle', failedSteps: [] });
    expect(h.exitCode).toBe(0);
    expect(h.exits).toEqual([]);
  });

  it('stdin close does the same', async () => {
    const h = createHarness();
    h.stdin.close();
    await h.lifecycle.done;
    expect(h.steps()).toEqual(['closeTransport', 'disposeStore']);
    expect(h.lines[0]).toBe('Shutting down (stdin closed)...');
    expect(h.exitCode).toBe(0);
  });

  it('end, close and a manual shutdown share one run', async () => {
    const h = createHarness({ closeTransport: 'manual' });
    h.stdin.end();
    h.stdin.close();
    const first = h.lifecycle.shutdown('manual');
    const second = h.lifecycle.shutdown('again');
    expect(first).toBe(second);
    await flush();
    h.pending.closeTransport[0]!.resolve();
    const output = await first;
    expect(h.steps()).toEqual(['closeTransport', 'disposeStore']);
    expect(h.lines.filter((l) => l.startsWith('Shutting down'))).toEqual(['Shutting down (stdin closed)...']);
    expect(h.lines.filter((l) => l.startsWith('QMD Warning'))).toEqual([]);
    expect(output.escalatedBy).toBeNull();
  });

  it('a failing step is logged, later steps still run, exit 1', async () => {
    const h = createHarness({ closeTransport: 'throw' });
    h.stdin.end();
    const output = await h.lifecycle.done;
    expect(h.steps()).toEqual(['closeTransport', 'disposeStore']);
    expect(h.lines).toContain('QMD Warning: teardown step closeTransport failed: closeTransport exploded; continuing');
    expect(output.failedSteps).toEqual([{ step: 'closeTransport', error: 'closeTransport exploded' }]);
    expect(h.exitCode).toBe(1);
  });

  it('all steps failing still finishes the chain', async () => {
    const h = createHarness({ closeTransport: 'throw', disposeStore: 'throw' });
    h.signal('SIGTERM');
    const output = await h.lifecycle.done;
    expect(output.failedSteps.map((f) => f.step)).toEqual(['closeTransport', 'disposeStore']);
    expect(h.lines.filter((l) => l.startsWith('QMD Warning: teardown step'))).toHaveLength(2);
    expect(h.exitCode).toBe(1);
    expect(h.state()).toBe('done');
  });

  // A stdin that ended or was destroyed before anyone listened never emits again; the host
  // asks it at start (real streams in that state: adapters.test.ts).
  it.each([
    ['had already ended', (stdin: FakeStdin) => stdin.end()],
    ['was already destroyed', (stdin: FakeStdin) => stdin.close()],
  ])('a stdin that %s starts teardown at once', async (_, gone) => {
    const stdin = new FakeStdin();
    gone(stdin);
    const h = createHarness({ stdin });
    const output = await h.lifecycle.done;
    expect(h.lines[0]).toBe('Shutting down (stdin closed)...');
    expect([output.reason, output.exitCode]).toEqual(['stdin closed', 0]);
    expect(h.listeners().stdin).toBe(0);
  });

  it('a drain-deadline miss is logged but is not a failure', async () => {
    const h = createHarness({ drainTimeoutMs: 300 });
    const handler = h.startHandler();
    h.stdin.end();
    await flush();
    expect(h.state()).toBe('draining');
    await h.clock.advance(299);
    expect(h.state()).toBe('draining');
    await h.clock.advance(1);
    const output = await h.lifecycle.done;
    expect(h.lines).toContain(
      'QMD Warning: drain deadline of 300 ms passed with 1 handler(s) in flight; disposing the store',
    );
    expect(output).toMatchObject({ drain: 'deadline', failedSteps: [], exitCode: 0 });
    expect(handler.signal.aborted).toBe(false);
  });

  it('waits for in-flight handlers before disposing the store', async () => {
    const h = createHarness();
    const a = h.startHandler();
    const b = h.startHandler();
    h.stdin.end();
    await flush();
    expect(h.state()).toBe('draining');
    a.settle();
    await flush();
    expect(h.steps()).toEqual(['closeTransport']);
    b.fail(new Error('handler failed'));
    await h.lifecycle.done;
    expect(h.steps()).toEqual(['closeTransport', 'disposeStore']);
    expect(h.lifecycle.gate.size).toBe(0);
  });

  it('success keeps an earlier non-zero exit code', async () => {
    const h = createHarness({ priorExitCode: 2 });
    h.stdin.end();
    const output = await h.lifecycle.done;
    expect(output.exitCode).toBe(2);
    expect(h.exitCode).toBe(2);
  });

  it('failure sets 1 over an earlier 0', async () => {
    const h = createHarness({ priorExitCode: 0, disposeStore: 'throw' });
    h.stdin.end();
    await h.lifecycle.done;
    expect(h.exitCode).toBe(1);
  });

  it('a throwing stderr cannot break teardown', async () => {
    const throwing = new Writable({
      write() {
        throw new Error('stderr is broken');
      },
    });
    const erroring = new Writable({
      write(_chunk, _enc, callback) {
        callback(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }));
      },
    });
    for (const stream of [throwing, erroring]) {
      const h = createHarness({ log: createLog(stream), closeTransport: 'throw' });
      h.stdin.end();
      const output = await h.lifecycle.done;
      await flush();
      expect(output.exitCode).toBe(1);
      expect(h.steps()).toEqual(['closeTransport', 'disposeStore']);
    }
  });

  it('a hung step is bounded: it fails, and the chain continues', async () => {
    const h = createHarness({ closeTransport: 'hang', stepTimeoutMs: 2000 });
    h.stdin.end();
    await flush();
    await h.clock.advance(1999);
    expect(h.state()).toBe('closingTransport');
    await h.clock.advance(1);
    const output = await h.lifecycle.done;
    expect(output.failedSteps).toEqual([{ step: 'closeTransport', error: 'timed out after 2000 ms' }]);
    expect(h.stepSignals[0]?.aborted).toBe(true);
    expect(h.steps()).toEqual(['closeTransport', 'disposeStore']);
    expect(h.exitCode).toBe(1);
  });

  it('escalation aborts in-flight handlers and cuts the drain short', async () => {
    const h = createHarness();
    const handler = h.startHandler();
    h.stdin.end();
    await flush();
    expect(h.state()).toBe('draining');
    h.signal('SIGTERM');
    const output = await h.lifecycle.done;
    expect(handler.signal.aborted).toBe(true);
    expect(String(handler.signal.reason)).toContain('SIGTERM escalated the shutdown');
    expect(h.lines).toContain('QMD Warning: SIGTERM during teardown (stdin closed): aborting 1 in-flight handler(s)');
    expect(output).toMatchObject({ drain: 'cutShort', escalatedBy: 'SIGTERM', exitCode: 0 });
  });

  it('a repeated signal escalates; a stdout error after EOF does not', async () => {
    const h = createHarness();
    h.startHandler();
    h.signal('SIGINT');
    await flush();
    expect(h.state()).toBe('draining');
    h.signal('SIGINT');
    expect((await h.lifecycle.done).escalatedBy).toBe('SIGINT');

    const g = createHarness();
    g.startHandler();
    g.stdin.end();
    await flush();
    g.stdout.fail();
    await flush();
    expect(g.state()).toBe('draining');
  });

  it('a stdout EPIPE is a trigger, not a crash', async () => {
    const h = createHarness();
    h.stdout.fail('EPIPE');
    const output = await h.lifecycle.done;
    expect(output.reason).toBe('stdout closed');
    expect(h.lines[0]).toBe('Shutting down (stdout closed)...');
    // The guard stays: a later EPIPE during or after teardown is swallowed too.
    expect(() => h.stdout.fail('EPIPE')).not.toThrow();
  });

  it('the parent going away is a trigger; the watch is unref and removed at teardown', async () => {
    const h = createHarness({ parentPollMs: 500 });
    expect(h.clock.pending('unref')).toBe(1);
    expect(h.clock.pending('ref')).toBe(0);
    await h.parentDies();
    await h.clock.advance(500);
    const output = await h.lifecycle.done;
    expect(output.reason).toBe('parent exited');
  });

  it('removes the stdin listeners when teardown starts, keeps signals and the stdout guard', async () => {
    const h = createHarness({ closeTransport: 'manual' });
    expect(h.listeners()).toEqual({ stdin: 2, stdout: 1, signals: 3 });
    h.stdin.end();
    await flush();
    expect(h.listeners()).toEqual({ stdin: 0, stdout: 1, signals: 3 });
  });

  it('the watchdog is armed only after done, unref, and names what holds the loop', async () => {
    const h = createHarness({ watchdogMs: 1000, activeResources: ['Timeout', 'Timeout', 'TCPSocketWrap'] });
    expect(h.clock.pending('unref')).toBe(1); // the parent poll only
    h.stdin.end();
    await h.lifecycle.done;
    expect(h.clock.pending('ref')).toBe(0);
    expect(h.clock.pending('unref')).toBe(1); // the watchdog
    await h.clock.advance(999);
    expect(h.exits).toEqual([]);
    await h.clock.advance(1);
    expect(h.exits).toEqual([0]);
    expect(h.lines.at(-1)).toBe(
      'QMD Warning: still running 1000 ms after teardown; held by: Timeout ×2, TCPSocketWrap. Exiting with code 0.',
    );
  });

  it('holds the loop with one ref timer while teardown runs', async () => {
    const h = createHarness({ closeTransport: 'manual' });
    expect(h.clock.pending('ref')).toBe(0);
    h.stdin.end();
    await flush();
    // The keep-alive and the step's bound.
    expect(h.clock.pending('ref')).toBe(2);
    h.pending.closeTransport[0]!.resolve();
    await h.lifecycle.done;
    expect(h.clock.pending('ref')).toBe(0);
  });

  it('a signal after done exits at once with the computed code', async () => {
    const h = createHarness({ priorExitCode: 3 });
    h.stdin.end();
    await h.lifecycle.done;
    h.signal('SIGTERM');
    expect(h.exits).toEqual([3]);
    await h.clock.advance(5000);
    expect(h.exits).toEqual([3]);
  });
});
