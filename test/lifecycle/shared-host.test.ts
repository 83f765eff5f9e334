/**
 * The shared server's host with its real machine and sessions, every piece of I/O faked, time
 * on a fake clock: named scenarios of what a user of `qmd mcp --shared` would see. The
 * generated paths and random interleavings live in test/model/.
 */
import { describe, expect, it } from 'vitest';
import type { Log } from '../../src/log.js';
import { flush } from '../support/fake-clock.js';
import { FakeWatcher } from '../support/fake-watcher.js';
import { createSharedHarness } from '../support/host-harness.js';

const IDLE = 60_000;

describe('the shared server host', () => {
  it('idle from the start: leaves after the idle bound, disposing the store once, exit 0', async () => {
    const h = createSharedHarness({ idleTimeoutMs: IDLE });
    await h.clock.advance(IDLE - 1);
    expect(h.lifecycle.state()).toBe('connected.idle');
    await h.clock.advance(1);
    await h.lifecycle.done;
    expect(h.steps()).toEqual(['closeListener', 'disposeStore', 'exitCode=0']);
    expect(h.lines[0]).toBe(`Shutting down (idle for ${IDLE} ms)...`);
    expect(h.lines.at(-1)).toMatch(
      /^Shutdown complete in [\d.]+ ms: idle for 60000 ms: 0 session\(s\) served, drained, all steps ok, exit 0$/,
    );
    expect(await h.lifecycle.done).toMatchObject({ exitCode: 0, sessions: 0 });
  });

  it('the idle timer starts afresh each time the last session leaves', async () => {
    const h = createSharedHarness({ idleTimeoutMs: IDLE });
    await h.clock.advance(IDLE / 2);
    const a = h.open()!;
    await h.clock.advance(IDLE);
    expect(h.lifecycle.state()).toBe('connected.serving');
    h.trigger(a, 'connection.ended');
    await flush();
    expect(h.lifecycle.sessions()).toBe(0);
    expect(h.steps()).toEqual([`closeServer:${a}`, `releaseSession:${a}`]);
    await h.clock.advance(IDLE - 1);
    expect(h.lifecycle.state()).toBe('connected.idle');
    await h.clock.advance(1);
    await flush();
    expect(h.lifecycle.state()).toBe('done');
  });

  it('retired (a newer qmd took over) with two sessions: they are served until they end, then it leaves at once, exit 0', async () => {
    const h = createSharedHarness({ idleTimeoutMs: IDLE });
    const a = h.open()!;
    const b = h.open()!;
    h.lifecycle.retire('replaced by qmd 9.0.0');
    h.lifecycle.retire('a second call changes nothing');
    expect(h.lifecycle.retired).toBe(true);
    await flush();
    expect(h.lifecycle.state()).toBe('connected.serving');
    const handler = h.startHandler(a);
    h.trigger(b, 'connection.ended');
    await flush();
    expect(h.lifecycle.state()).toBe('connected.serving');
    handler.settle();
    h.trigger(a, 'connection.ended');
    await flush();
    // No idle bound: the last session gone, it leaves.
    await h.lifecycle.done;
    expect(h.lines.filter((l) => l.startsWith('Shutting down'))).toEqual(['Shutting down (replaced by qmd 9.0.0)...']);
    expect(h.lines.at(-1)).toMatch(/: replaced by qmd 9\.0\.0: 2 session\(s\) served, drained, all steps ok, exit 0$/);
    expect(h.steps().filter((s) => s === 'disposeStore')).toHaveLength(1);
  });

  it('retired with no session: it leaves at once', async () => {
    const h = createSharedHarness({ idleTimeoutMs: IDLE });
    h.lifecycle.retire('replaced by qmd 9.0.0');
    await h.lifecycle.done;
    expect(h.lines[0]).toBe('Shutting down (replaced by qmd 9.0.0)...');
  });

  it('a session ends on its own: close its server, drain its handlers, release it; the server keeps serving', async () => {
    const h = createSharedHarness({ sessionDrainTimeoutMs: 5000 });
    const a = h.open()!;
    const b = h.open()!;
    const handler = h.startHandler(a);
    h.trigger(a, 'connection.ended');
    await flush();
    expect(h.steps()).toEqual([`closeServer:${a}`]);
    expect(h.lifecycle.sessions()).toBe(2);
    handler.settle();
    await flush();
    expect(h.steps()).toEqual([`closeServer:${a}`, `releaseSession:${a}`]);
    expect(h.lifecycle.sessions()).toBe(1);
    expect(h.lifecycle.state()).toBe('connected.serving');
    expect(h.inflight(b)).toBe(0);
  });

  it('SIGTERM with two sessions, one busy: stop accepting, every session ends, then the store, once', async () => {
    const h = createSharedHarness({ closeListener: 'ok', disposeStore: 'ok' });
    const a = h.open()!;
    const b = h.open()!;
    const busy = h.startHandler(b);
    h.signal('SIGTERM');
    await flush();
    expect(h.lines[0]).toBe('Shutting down (SIGTERM)...');
    expect(h.open()).toBeNull();
    expect(h.steps()).toContain('closeListener');
    expect(h.steps()).not.toContain('disposeStore');
    expect(h.lifecycle.state()).toBe('draining');
    busy.settle();
    await flush();
    const steps = h.steps();
    expect(steps.filter((s) => s === 'disposeStore')).toHaveLength(1);
    // The store after every session's release.
    expect(steps.indexOf('disposeStore')).toBeGreaterThan(steps.indexOf(`releaseSession:${a}`));
    expect(steps.indexOf('disposeStore')).toBeGreaterThan(steps.indexOf(`releaseSession:${b}`));
    expect(await h.lifecycle.done).toMatchObject({ exitCode: 0, sessions: 2, drain: 'idle' });
  });

  it('a second signal hurries the sessions: their handlers are aborted, their drains cut short', async () => {
    const h = createSharedHarness({ sessionDrainTimeoutMs: 5000 });
    const a = h.open()!;
    const stuck = h.startHandler(a);
    h.signal('SIGTERM');
    await flush();
    expect(h.lifecycle.state()).toBe('draining');
    h.signal('SIGINT');
    await flush();
    expect(stuck.signal.aborted).toBe(true);
    expect(h.lines).toContain('QMD Warning: SIGINT during teardown (SIGTERM): hurrying 1 session(s)');
    expect(h.steps()).toContain(`releaseSession:${a}`);
    expect(await h.lifecycle.done).toMatchObject({ exitCode: 0, drain: 'cutShort', escalatedBy: 'SIGINT' });
  });

  it('a second signal aborts a handler that outlived its session’s drain deadline while the session releases', async () => {
    const h = createSharedHarness({ sessionDrainTimeoutMs: 1000, releaseSession: 'manual' });
    const a = h.open()!;
    const stuck = h.startHandler(a);
    h.signal('SIGTERM');
    await flush();
    await h.clock.advance(1000);
    expect(h.steps()).toContain(`releaseSession:${a}`);
    expect(stuck.signal.aborted).toBe(false);
    h.signal('SIGINT');
    await flush();
    expect(stuck.signal.aborted).toBe(true);
    h.settleStep(`releaseSession:${a}`);
    expect(await h.lifecycle.done).toMatchObject({ exitCode: 0, escalatedBy: 'SIGINT' });
  });

  it('the server’s drain deadline hurries a session whose handler ignores its signal; still one store disposal', async () => {
    const h = createSharedHarness({ drainTimeoutMs: 1000, sessionDrainTimeoutMs: 60_000 });
    const a = h.open()!;
    h.startHandler(a);
    h.signal('SIGTERM');
    await flush();
    await h.clock.advance(1000);
    await flush();
    expect(h.lines).toContain(
      'QMD Warning: drain deadline of 1000 ms passed with 1 session(s) still ending; hurrying them',
    );
    expect(h.steps().filter((s) => s === 'disposeStore')).toHaveLength(1);
    expect(await h.lifecycle.done).toMatchObject({ exitCode: 0, drain: 'deadline' });
  });

  it('a failed store disposal is warned about and exits 1; a session’s failed step does not fail the server', async () => {
    const h = createSharedHarness({ disposeStore: 'throw', releaseSession: 'throw' });
    const a = h.open()!;
    h.signal('SIGTERM');
    await flush();
    expect(h.lines).toContain(
      `QMD Warning: session ${a}: teardown step releaseSession failed: releaseSession:${a} exploded; continuing`,
    );
    expect(h.lines).toContain('QMD Warning: teardown step disposeStore failed: disposeStore exploded; continuing');
    expect(await h.lifecycle.done).toMatchObject({ exitCode: 1 });
    expect(h.exitCode).toBe(1);
  });

  it('after done the watchdog exits with the computed code', async () => {
    const h = createSharedHarness({ watchdogMs: 1000 });
    void h.lifecycle.shutdown('test');
    await flush();
    await h.lifecycle.done;
    expect(h.exits).toEqual([]);
    await h.clock.advance(1000);
    expect(h.exits).toEqual([0]);
    expect(h.lines.at(-1)).toMatch(/still running 1000 ms after teardown; held by: TCPServerWrap/);
  });

  it('after done a signal means now: it exits at once with the computed code', async () => {
    const h = createSharedHarness({ watchdogMs: 1000, disposeStore: 'throw' });
    void h.lifecycle.shutdown('test');
    await h.lifecycle.done;
    h.signal('SIGTERM');
    expect(h.exits).toEqual([1]);
  });
});

describe('a shared server whose own effects throw', () => {
  it('still finishes (exit 1) with the fallback output, and the watchdog exits with it', async () => {
    const lines: string[] = [];
    const log: Log = {
      line: (t) => {
        if (t.startsWith('Shutting down')) throw new Error('stderr exploded');
        lines.push(t);
      },
      warn: (t) => lines.push(`QMD Warning: ${t}`),
    };
    const h = createSharedHarness({ log, watchdogMs: 1000 });
    h.open();
    h.signal('SIGTERM');
    const output = await h.lifecycle.done;
    expect(output).toEqual({
      exitCode: 1,
      reason: 'unknown',
      sessions: 1,
      drain: 'idle',
      failedSteps: [],
      escalatedBy: null,
      summary: 'machine error, exit 1',
    });
    expect(lines).toEqual([
      "QMD Warning: the shared server's machine failed: stderr exploded",
      'Shutdown complete in 0 ms: machine error, exit 1',
    ]);
    expect(h.exitCode).toBe(1);
    expect(h.lifecycle.shutdown()).toBe(h.lifecycle.shutdown());
    await h.clock.advance(1000);
    expect(h.exits).toEqual([1]);
  });
});

/**
 * The shared server's one watcher (docs/design.md §2.2): its teardown owns it. It stops hearing
 * changes as the listener closes, goes on writing while the sessions end, and is closed (a write
 * still running rolled back) before the store, whichever way the server leaves.
 */
describe('the shared server’s watcher', () => {
  const order = (h: ReturnType<typeof createSharedHarness>) =>
    h.calls.filter((c) => c.startsWith('watcher.') || c === 'closeListener' || c === 'disposeStore');

  it('idle exit: stopped with the listener, closed before the store', async () => {
    const h = createSharedHarness({ idleTimeoutMs: IDLE });
    const watcher = new FakeWatcher({ clock: h.clock, record: (c) => h.calls.push(c) });
    h.lifecycle.ownWatcher(watcher);
    await h.clock.advance(IDLE);
    await h.lifecycle.done;
    const seen = order(h);
    expect(seen.slice(0, 2)).toEqual(['watcher.close', 'closeListener']);
    expect(seen.indexOf('watcher.closed')).toBeLessThan(seen.indexOf('disposeStore'));
    expect(watcher.holding).toBe(false);
    expect(h.clock.pending('unref')).toBe(1); // the watchdog alone
  });

  it('a write goes on while the sessions end, and commits before the store closes', async () => {
    const h = createSharedHarness({ idleTimeoutMs: IDLE, closeServer: 'manual' });
    const watcher = new FakeWatcher({ record: (c) => h.calls.push(c) });
    h.lifecycle.ownWatcher(watcher);
    const id = h.open()!;
    const write = watcher.startWrite();
    h.signal('SIGTERM');
    await flush();
    expect(h.lifecycle.state()).toBe('draining');
    watcher.settleWrite();
    h.settleStep(`closeServer:${id}`);
    await h.lifecycle.done;
    expect(write).toEqual({ settled: true, rolledBack: false });
    expect(order(h).at(-1)).toBe('disposeStore');
    expect(order(h).indexOf('watcher.closed')).toBeLessThan(order(h).indexOf('disposeStore'));
  });

  it('a write still running when every session is done is rolled back, then the store closes', async () => {
    const h = createSharedHarness({ idleTimeoutMs: IDLE });
    const watcher = new FakeWatcher({ record: (c) => h.calls.push(c) });
    h.lifecycle.ownWatcher(watcher);
    const write = watcher.startWrite();
    void h.lifecycle.shutdown('qmd mcp stop');
    const output = await h.lifecycle.done;
    expect(write.rolledBack).toBe(true);
    expect(String(watcher.closeSignal?.reason)).toBe('Error: rolled back: the shared server is closing its store');
    expect(output).toMatchObject({ exitCode: 0, failedSteps: [] });
  });
});
