/**
 * The index's watcher as a resource of the lifecycle's teardown (docs/design.md §2.1, "The
 * watcher"), named scenarios with the real host and a hand-written watcher on a fake clock:
 * closed on every way out and before the store, its write drained within the drain deadline,
 * rolled back by an escalation or the deadline, a failing close reported without skipping the
 * store. The generated tests (test/model/) offer its writes in every state; a watcher that
 * really holds the loop is in test/lifecycle/process.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { flush } from '../support/fake-clock.js';
import { FakeWatcher } from '../support/fake-watcher.js';
import { createHarness, type Harness } from '../support/host-harness.js';

type Way = [string, (h: Harness) => unknown | Promise<unknown>, Partial<Parameters<typeof createHarness>[0]>?];

/** Every way out of `connected`, and the failures on the way to `done`. */
const WAYS_OUT: Way[] = [
  ['stdin end', (h) => h.stdin.end()],
  ['stdin close', (h) => h.stdin.close()],
  ['a stdout error', (h) => h.stdout.fail()],
  ['the transport closing', (h) => h.transportCloses()],
  ['SIGTERM', (h) => h.signal('SIGTERM')],
  ['SIGINT', (h) => h.signal('SIGINT')],
  ['SIGHUP', (h) => h.signal('SIGHUP')],
  ['the parent going', (h) => h.parentDies()],
  ['the HTTP listener closing', (h) => h.lifecycle.trigger({ type: 'http.closed' })],
  ['shutdown()', (h) => h.lifecycle.shutdown('test')],
  ['closeTransport failing', (h) => h.stdin.end(), { closeTransport: 'throw' }],
  ['disposeStore failing', (h) => h.stdin.end(), { disposeStore: 'throw' }],
  ['closeTransport hanging past its bound', (h) => h.stdin.end(), { closeTransport: 'hang' }],
  [
    'an escalation',
    async (h) => {
      h.startHandler();
      h.signal('SIGTERM');
      await flush();
      h.signal('SIGTERM');
    },
  ],
];

/** Runs the fake clock until teardown is done (every bound passes). */
async function untilDone(h: Harness): Promise<void> {
  for (let i = 0; i < 20 && h.output() === undefined; i++) await h.clock.advance(1000);
  expect(h.output(), 'teardown completed').toBeDefined();
}

describe('the watcher is closed on every way out, before the store', () => {
  it.each(WAYS_OUT)('%s', async (_, leave, options) => {
    const h = createHarness({ watcher: true, ...options });
    const watcher = h.watcher!;
    expect(watcher.holding).toBe(true);
    await leave(h);
    await flush();
    await untilDone(h);
    expect(watcher.closeCalls).toBe(1);
    expect(watcher.holding).toBe(false);
    const calls = h.calls.filter((c) => c.startsWith('watcher.') || c === 'closeTransport' || c === 'disposeStore');
    // Stops hearing as closeTransport begins; closed before the store.
    expect(calls.slice(0, 2)).toEqual(['watcher.close', 'closeTransport']);
    expect(calls.indexOf('watcher.closed')).toBeLessThan(calls.indexOf('disposeStore'));
    // Nothing of the watcher is heard once the machine is done.
    expect(watcher.listeners.write).toBe(0);
    expect(h.clock.pending('ref')).toBe(0);
  });
});

describe('its writes are work in flight', () => {
  it('a write begun before the client left holds the drain until it commits', async () => {
    const h = createHarness({ watcher: true, drainTimeoutMs: 5000 });
    const watcher = h.watcher!;
    watcher.startWrite();
    h.stdin.end();
    await flush();
    expect(h.state()).toBe('draining');
    await h.clock.advance(4000);
    expect(h.state()).toBe('draining');
    watcher.settleWrite();
    await flush();
    expect(h.state()).toBe('done');
    expect(watcher.closeSignal?.aborted).toBe(false);
    expect(h.output()).toMatchObject({ drain: 'idle', exitCode: 0 });
  });

  it('one still running at the drain deadline is rolled back, and the store disposed then', async () => {
    const h = createHarness({ watcher: true, drainTimeoutMs: 5000 });
    const watcher = h.watcher!;
    const write = watcher.startWrite();
    h.stdin.end();
    await flush();
    await h.clock.advance(5000);
    expect(write.rolledBack).toBe(true);
    expect(String(watcher.closeSignal?.reason)).toBe('Error: rolled back: the drain deadline passed');
    expect(h.lines).toContain(
      'QMD Warning: drain deadline of 5000 ms passed with 0 handler(s) and 1 index write(s) in flight; disposing the store',
    );
    expect(h.steps()).toEqual(['closeTransport', 'disposeStore']);
    expect(h.output()).toMatchObject({ drain: 'deadline', exitCode: 0 });
  });

  it('an escalation rolls it back at once and cuts the drain short', async () => {
    const h = createHarness({ watcher: true });
    const watcher = h.watcher!;
    const write = watcher.startWrite();
    h.signal('SIGTERM');
    await flush();
    h.signal('SIGINT');
    await flush();
    expect(write.rolledBack).toBe(true);
    expect(String(watcher.closeSignal?.reason)).toBe('Error: rolled back: SIGINT escalated the shutdown');
    expect(h.lines).toContain(
      'QMD Warning: SIGINT during teardown (SIGTERM): aborting 0 in-flight handler(s) and 1 index write(s)',
    );
    expect(h.output()).toMatchObject({ drain: 'cutShort', escalatedBy: 'SIGINT' });
  });

  it('the trace counts its writes apart from handlers', async () => {
    const { mkdtempSync, readFileSync, rmSync } = await import('node:fs');
    const { join } = await import('node:path');
    const { tmpdir } = await import('node:os');
    const dir = mkdtempSync(join(tmpdir(), 'qmd-watch-trace-'));
    try {
      const h = createHarness({ watcher: true, traceFile: join(dir, 'trace.jsonl') });
      h.watcher!.startWrite();
      h.stdin.end();
      await flush();
      h.watcher!.settleWrite();
      await h.lifecycle.done;
      const lines = readFileSync(join(dir, 'trace.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      expect(lines.find((l) => l.state === 'draining')).toMatchObject({ inflight: 0, writes: 1 });
      expect(lines.at(-1)).not.toHaveProperty('writes');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('a watcher that comes late, or closes badly', () => {
  it('given once teardown has begun (it was still loading), it is closed at once', async () => {
    const h = createHarness({ closeTransport: 'manual' });
    h.stdin.end();
    await flush();
    const late = new FakeWatcher();
    h.lifecycle.ownWatcher(late);
    expect(late.closeCalls).toBe(1);
  });

  it('a close that fails is reported, and the store is still disposed: exit 1', async () => {
    const h = createHarness({ start: false });
    const watcher = new FakeWatcher({ closeFails: new Error('EBUSY: index locked'), record: (c) => h.calls.push(c) });
    h.lifecycle.ownWatcher(watcher);
    h.start();
    h.stdin.end();
    const output = await h.lifecycle.done;
    expect(h.steps()).toEqual(['closeTransport', 'disposeStore']);
    expect(output.failedSteps).toEqual([
      { step: 'disposeStore', error: 'closing the index watcher: EBUSY: index locked' },
    ]);
    expect(output.exitCode).toBe(1);
  });

  it('a close that never ends is bounded by the step: the store is left to its WAL, exit 1', async () => {
    const h = createHarness({ start: false, stepTimeoutMs: 2000 });
    const stuck = new FakeWatcher();
    stuck.close = () => new Promise(() => {});
    h.lifecycle.ownWatcher(stuck);
    h.start();
    stuck.startWrite();
    h.stdin.end();
    await flush();
    await untilDone(h);
    expect(h.output()).toMatchObject({
      exitCode: 1,
      failedSteps: [{ step: 'disposeStore', error: 'timed out after 2000 ms' }],
    });
  });
});
