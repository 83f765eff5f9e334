/**
 * Escalation in each state that listens for it (docs/design.md §2.1): a later trigger of another
 * kind, or a repeated signal, means "hurry up" — in-flight handlers are aborted, a drain not
 * yet over is cut short, and the output names what escalated. stdin `close` after `end`,
 * stdout errors after either, the same HTTP stop again, and a programmatic `shutdown()` are
 * the same departure and change nothing. What is checked is what a user sees: warnings, the
 * handlers' abort signals, when the store is disposed, and the summary line.
 */
import { describe, expect, it } from 'vitest';
import { flush } from '../support/fake-clock.js';
import { createHarness, type Harness } from '../support/host-harness.js';

const manual = { closeTransport: 'manual', disposeStore: 'manual' } as const;
const warnings = (h: Harness) => h.lines.filter((l) => l.startsWith('QMD Warning:'));
const summary = (h: Harness) => h.lines.find((l) => l.startsWith('Shutdown complete'))?.replace(/^.* ms: /, '');

async function closeTransport(h: Harness): Promise<void> {
  h.pending.closeTransport[0]!.resolve();
  await flush();
}
async function disposeStore(h: Harness) {
  h.pending.disposeStore[0]!.resolve();
  return h.lifecycle.done;
}

describe('escalation while closing the transport', () => {
  it('a stdout error after SIGTERM aborts the handlers, and the drain that follows is cut short', async () => {
    const h = createHarness(manual);
    const handler = h.startHandler();
    h.signal('SIGTERM');
    await flush();
    h.stdout.fail();
    await flush();
    expect(h.state()).toBe('closingTransport');
    expect(handler.signal.aborted).toBe(true);
    expect(String(handler.signal.reason)).toBe('Error: aborted: stdout closed escalated the shutdown');
    expect(warnings(h)).toEqual([
      'QMD Warning: stdout closed during teardown (SIGTERM): aborting 1 in-flight handler(s)',
    ]);
    await closeTransport(h);
    // The handler ignores its abort and is still running, yet the store is disposed at once.
    expect(h.state()).toBe('disposingStore');
    expect(h.stepLog.map(({ name, inflight }) => [name, inflight])).toEqual([
      ['closeTransport', 1],
      ['disposeStore', 1],
    ]);
    const output = await disposeStore(h);
    expect(output).toMatchObject({ reason: 'SIGTERM', escalatedBy: 'stdout closed', drain: 'cutShort', exitCode: 0 });
    expect(summary(h)).toBe('SIGTERM: drain cut short, all steps ok, exit 0');
  });

  it('the HTTP server stopping after stdin EOF escalates', async () => {
    const h = createHarness(manual);
    const handler = h.startHandler();
    h.stdin.end();
    await flush();
    h.lifecycle.trigger({ type: 'http.closed' });
    expect(handler.signal.aborted).toBe(true);
    expect(warnings(h)).toEqual([
      'QMD Warning: HTTP server stopped during teardown (stdin closed): aborting 1 in-flight handler(s)',
    ]);
    await closeTransport(h);
    expect(h.state()).toBe('disposingStore');
    expect((await disposeStore(h)).escalatedBy).toBe('HTTP server stopped');
  });

  it('a repeated signal escalates, and the first escalation is the one the output names', async () => {
    const h = createHarness(manual);
    const handler = h.startHandler();
    h.signal('SIGINT');
    await flush();
    h.signal('SIGINT');
    h.signal('SIGTERM');
    h.lifecycle.trigger({ type: 'http.closed' });
    expect(String(handler.signal.reason)).toBe('Error: aborted: SIGINT escalated the shutdown');
    expect(warnings(h)).toEqual([
      'QMD Warning: SIGINT during teardown (SIGINT): aborting 1 in-flight handler(s)',
      'QMD Warning: SIGTERM during teardown (SIGINT): aborting 1 in-flight handler(s)',
      'QMD Warning: HTTP server stopped during teardown (SIGINT): aborting 1 in-flight handler(s)',
    ]);
    await closeTransport(h);
    const output = await disposeStore(h);
    expect(output).toMatchObject({ reason: 'SIGINT', escalatedBy: 'SIGINT', drain: 'cutShort' });
  });

  it('a stdout error after stdin EOF is the same departure: nothing is aborted, the drain waits', async () => {
    const h = createHarness(manual);
    const handler = h.startHandler();
    h.stdin.end();
    await flush();
    h.stdout.fail();
    await closeTransport(h);
    expect(h.state()).toBe('draining');
    expect(handler.signal.aborted).toBe(false);
    expect(warnings(h)).toEqual([]);
    handler.settle();
    await flush();
    expect(h.state()).toBe('disposingStore');
    const output = await disposeStore(h);
    expect(output).toMatchObject({ escalatedBy: null, drain: 'idle' });
    expect(summary(h)).toBe('stdin closed: drained, all steps ok, exit 0');
  });

  it('the HTTP server stopping twice is one departure', async () => {
    const h = createHarness(manual);
    const handler = h.startHandler();
    h.lifecycle.trigger({ type: 'http.closed' });
    await flush();
    h.lifecycle.trigger({ type: 'http.closed' });
    await closeTransport(h);
    expect(h.state()).toBe('draining');
    expect(handler.signal.aborted).toBe(false);
    expect(warnings(h)).toEqual([]);
  });

  it('a programmatic shutdown() after a trigger never escalates; a signal after shutdown() does', async () => {
    const h = createHarness(manual);
    const handler = h.startHandler();
    h.signal('SIGTERM');
    await flush();
    const first = h.lifecycle.shutdown('operator');
    expect(handler.signal.aborted).toBe(false);
    expect(warnings(h)).toEqual([]);
    await closeTransport(h);
    expect(h.state()).toBe('draining');
    handler.settle();
    await flush();
    const output = await disposeStore(h);
    expect(await first).toBe(output);
    expect(output).toMatchObject({ reason: 'SIGTERM', escalatedBy: null });

    const g = createHarness(manual);
    g.startHandler();
    void g.lifecycle.shutdown('operator');
    await flush();
    g.signal('SIGTERM');
    expect(warnings(g)).toEqual(['QMD Warning: SIGTERM during teardown (operator): aborting 1 in-flight handler(s)']);
  });
});

describe('escalation while draining', () => {
  async function draining(first: (h: Harness) => unknown) {
    const h = createHarness(manual);
    const handler = h.startHandler();
    await first(h);
    await flush();
    await closeTransport(h);
    expect(h.state()).toBe('draining');
    return { h, handler };
  }

  it('a stdout error after SIGTERM cuts the drain short at once', async () => {
    const { h, handler } = await draining((x) => x.signal('SIGTERM'));
    h.stdout.fail();
    expect(h.state()).toBe('disposingStore');
    expect(handler.signal.aborted).toBe(true);
    expect(warnings(h)).toEqual([
      'QMD Warning: stdout closed during teardown (SIGTERM): aborting 1 in-flight handler(s)',
    ]);
    const output = await disposeStore(h);
    expect(output).toMatchObject({ escalatedBy: 'stdout closed', drain: 'cutShort', exitCode: 0 });
  });

  it('the HTTP server stopping after the parent left cuts it short', async () => {
    const { h, handler } = await draining((x) => x.parentDies());
    h.lifecycle.trigger({ type: 'http.closed' });
    expect(h.state()).toBe('disposingStore');
    expect(String(handler.signal.reason)).toBe('Error: aborted: HTTP server stopped escalated the shutdown');
    expect((await disposeStore(h)).escalatedBy).toBe('HTTP server stopped');
    expect(summary(h)).toBe('parent exited: drain cut short, all steps ok, exit 0');
  });

  it('a signal after the HTTP server stopped cuts it short', async () => {
    const { h } = await draining((x) => x.lifecycle.trigger({ type: 'http.closed' }));
    h.signal('SIGHUP');
    expect(h.state()).toBe('disposingStore');
    expect((await disposeStore(h)).escalatedBy).toBe('SIGHUP');
  });

  it('the same departure again leaves the drain alone', async () => {
    const { h, handler } = await draining((x) => x.lifecycle.trigger({ type: 'http.closed' }));
    h.lifecycle.trigger({ type: 'http.closed' });
    expect(h.state()).toBe('draining');
    const g = await draining((x) => x.stdin.close());
    g.h.stdout.fail();
    expect(g.h.state()).toBe('draining');
    expect([handler.signal.aborted, g.handler.signal.aborted]).toEqual([false, false]);
    expect([...warnings(h), ...warnings(g.h)]).toEqual([]);
  });
});

describe('escalation while disposing the store', () => {
  /** Teardown past a drain deadline, with one handler still running, the store step pending. */
  async function disposing(first: (h: Harness) => unknown) {
    const h = createHarness({ ...manual, drainTimeoutMs: 300 });
    const handler = h.startHandler();
    await first(h);
    await flush();
    await closeTransport(h);
    await h.clock.advance(300);
    expect(h.state()).toBe('disposingStore');
    return { h, handler };
  }

  it('a second signal aborts the handlers and is recorded; the drain outcome stays', async () => {
    const { h, handler } = await disposing((x) => x.signal('SIGTERM'));
    h.signal('SIGINT');
    expect(h.state()).toBe('disposingStore');
    expect(String(handler.signal.reason)).toBe('Error: aborted: SIGINT escalated the shutdown');
    expect(warnings(h).at(-1)).toBe('QMD Warning: SIGINT during teardown (SIGTERM): aborting 1 in-flight handler(s)');
    const output = await disposeStore(h);
    expect(output).toMatchObject({ escalatedBy: 'SIGINT', drain: 'deadline', exitCode: 0, failedSteps: [] });
    expect(summary(h)).toBe('SIGTERM: drain deadline passed, all steps ok, exit 0');
  });

  it('a stdout error after SIGTERM, and the HTTP server stopping after stdin EOF, escalate', async () => {
    const a = await disposing((x) => x.signal('SIGTERM'));
    a.h.stdout.fail();
    expect(a.handler.signal.aborted).toBe(true);
    expect((await disposeStore(a.h)).escalatedBy).toBe('stdout closed');

    const b = await disposing((x) => x.stdin.end());
    b.h.lifecycle.trigger({ type: 'http.closed' });
    expect(b.handler.signal.aborted).toBe(true);
    expect((await disposeStore(b.h)).escalatedBy).toBe('HTTP server stopped');
  });

  it('a stdout error after stdin EOF changes nothing', async () => {
    const { h, handler } = await disposing((x) => x.stdin.end());
    h.stdout.fail();
    expect(handler.signal.aborted).toBe(false);
    const output = await disposeStore(h);
    expect(output).toMatchObject({ escalatedBy: null, drain: 'deadline' });
    expect(warnings(h)).toEqual([
      'QMD Warning: drain deadline of 300 ms passed with 1 handler(s) in flight; disposing the store',
    ]);
  });
});
