/**
 * What the lifecycle reports when it is done: the output, its one-line summary (the end of
 * `Shutdown complete in N ms: …` on stderr), and the default bounds as a user meets them.
 * Time is the fake clock's; nothing here waits for real time.
 */
import { describe, expect, it } from 'vitest';
import { flush } from '../support/fake-clock.js';
import { createHarness, type Harness } from '../support/host-harness.js';

const summary = (h: Harness) => h.lines.find((l) => l.startsWith('Shutdown complete'));

describe('the summary line', () => {
  it('drained, every step ok', async () => {
    const h = createHarness();
    h.signal('SIGHUP');
    await h.lifecycle.done;
    expect(summary(h)).toBe('Shutdown complete in 0 ms: SIGHUP: drained, all steps ok, exit 0');
  });

  it('the drain deadline passed', async () => {
    const h = createHarness({ drainTimeoutMs: 50 });
    h.startHandler();
    h.lifecycle.trigger({ type: 'http.closed' });
    await h.clock.advance(50);
    const output = await h.lifecycle.done;
    expect(output.summary).toBe('HTTP server stopped: drain deadline passed, all steps ok, exit 0');
    expect(summary(h)).toBe(`Shutdown complete in 50 ms: ${output.summary}`);
  });

  it('failed steps, in order, each with why', async () => {
    const h = createHarness({ closeTransport: 'throw', disposeStore: 'hang', stepTimeoutMs: 300 });
    h.stdin.end();
    await flush();
    await h.clock.advance(300);
    const output = await h.lifecycle.done;
    expect(output.summary).toBe(
      'stdin closed: drained, failed: closeTransport (closeTransport exploded), disposeStore (timed out after 300 ms), exit 1',
    );
    expect(output.failedSteps).toEqual([
      { step: 'closeTransport', error: 'closeTransport exploded' },
      { step: 'disposeStore', error: 'timed out after 300 ms' },
    ]);
    expect(h.lines).toContain('QMD Warning: teardown step disposeStore failed: timed out after 300 ms; continuing');
  });

  it('an earlier exit code is kept, and shown', async () => {
    const h = createHarness({ priorExitCode: 4, disposeStore: 'throw' });
    void h.lifecycle.shutdown();
    const output = await h.lifecycle.done;
    expect(output.summary).toBe('shutdown requested: drained, failed: disposeStore (disposeStore exploded), exit 4');
    expect(h.lines[0]).toBe('Shutting down (shutdown requested)...');
  });

  it('a step that rejects with something other than an Error is described by its text', async () => {
    const h = createHarness({ closeTransport: { reject: 'socket gone' }, disposeStore: { reject: 42 } });
    const output = await h.lifecycle.shutdown('maintenance');
    expect(output.failedSteps).toEqual([
      { step: 'closeTransport', error: 'socket gone' },
      { step: 'disposeStore', error: '42' },
    ]);
    expect(h.lines[0]).toBe('Shutting down (maintenance)...');
    expect(output.summary).toBe(
      'maintenance: drained, failed: closeTransport (socket gone), disposeStore (42), exit 1',
    );
  });

  it('measures teardown from the breadcrumb on the injected clock, to a tenth of a millisecond', async () => {
    const h = createHarness({ closeTransport: 'manual' });
    await h.clock.advance(100);
    h.stdin.end();
    await flush();
    await h.clock.advance(12.34);
    h.pending.closeTransport[0]!.resolve();
    await h.lifecycle.done;
    expect(summary(h)).toBe('Shutdown complete in 12.3 ms: stdin closed: drained, all steps ok, exit 0');
  });
});

describe('the default bounds, as a user meets them', () => {
  it('the drain waits 5000 ms', async () => {
    const h = createHarness();
    h.startHandler();
    h.stdin.end();
    await h.clock.advance(4999);
    expect(h.state()).toBe('draining');
    await h.clock.advance(1);
    expect(h.state()).toBe('done');
    expect(h.lines).toContain(
      'QMD Warning: drain deadline of 5000 ms passed with 1 handler(s) in flight; disposing the store',
    );
  });

  it('each teardown step gets 2000 ms', async () => {
    const h = createHarness({ closeTransport: 'hang', disposeStore: 'hang' });
    h.signal('SIGTERM');
    await h.clock.advance(1999);
    expect(h.state()).toBe('closingTransport');
    await h.clock.advance(1);
    expect(h.state()).toBe('disposingStore');
    await h.clock.advance(1999);
    expect(h.state()).toBe('disposingStore');
    await h.clock.advance(1);
    const output = await h.lifecycle.done;
    expect(output.failedSteps).toEqual([
      { step: 'closeTransport', error: 'timed out after 2000 ms' },
      { step: 'disposeStore', error: 'timed out after 2000 ms' },
    ]);
  });

  it('the watchdog fires 1000 ms after done', async () => {
    const h = createHarness();
    h.stdin.end();
    await h.lifecycle.done;
    await h.clock.advance(999);
    expect(h.exits).toEqual([]);
    await h.clock.advance(1);
    expect(h.exits).toEqual([0]);
  });
});
