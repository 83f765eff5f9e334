import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { createInflightGate } from '../../src/lifecycle/gate.js';
import { deferred } from '../support/deferred.js';
import { FakeClock, flush } from '../support/fake-clock.js';

describe('the in-flight gate', () => {
  it('is idle at once when nothing runs', async () => {
    const gate = createInflightGate({ clock: new FakeClock() });
    expect(gate.size).toBe(0);
    await expect(gate.onIdle()).resolves.toBe(true);
  });

  it('waits for a settle, and reports started/settled', async () => {
    const events: string[] = [];
    const gate = createInflightGate({
      clock: new FakeClock(),
      onStarted: () => events.push('started'),
      onSettled: () => events.push('settled'),
    });
    const d = deferred<string>();
    const run = gate.run(() => d.promise);
    expect(gate.size).toBe(1);
    let idle = false;
    void gate.onIdle().then(() => {
      idle = true;
    });
    await flush();
    expect(idle).toBe(false);
    d.resolve('result');
    await expect(run).resolves.toBe('result');
    await flush();
    expect(idle).toBe(true);
    expect(events).toEqual(['started', 'settled']);
  });

  it('reports a missed deadline', async () => {
    const clock = new FakeClock();
    const gate = createInflightGate({ clock });
    const d = deferred();
    void gate.run(() => d.promise);
    const idle = gate.onIdle({ timeoutMs: 100 });
    await clock.advance(100);
    await expect(idle).resolves.toBe(false);
    expect(gate.size).toBe(1);
    d.resolve();
    await flush();
    expect(clock.pending()).toBe(0);
  });

  it('clears its deadline timer when idle comes first', async () => {
    const clock = new FakeClock();
    const gate = createInflightGate({ clock });
    const d = deferred();
    void gate.run(() => d.promise);
    const idle = gate.onIdle({ timeoutMs: 100 });
    d.resolve();
    await expect(idle).resolves.toBe(true);
    expect(clock.pending()).toBe(0);
  });

  it('a rejecting handler still releases it, and the rejection reaches the caller', async () => {
    const settled: string[] = [];
    const gate = createInflightGate({ clock: new FakeClock(), onSettled: () => settled.push('settled') });
    await expect(gate.run(() => Promise.reject(new Error('nope')))).rejects.toThrow('nope');
    await expect(
      gate.run(() => {
        throw new Error('sync nope');
      }),
    ).rejects.toThrow('sync nope');
    expect(gate.size).toBe(0);
    expect(settled).toEqual(['settled', 'settled']);
  });

  it("forwards the caller's abort signal to the handler", async () => {
    const gate = createInflightGate({ clock: new FakeClock() });
    const outer = new AbortController();
    let inner!: AbortSignal;
    const d = deferred();
    void gate.run(
      (signal) => {
        inner = signal;
        return d.promise;
      },
      { signal: outer.signal },
    );
    expect(inner.aborted).toBe(false);
    outer.abort(new Error('request cancelled'));
    expect(inner.aborted).toBe(true);
    expect((inner.reason as Error).message).toBe('request cancelled');
    d.resolve();
  });

  it('abortAll aborts running handlers and any started later', async () => {
    const gate = createInflightGate({ clock: new FakeClock() });
    let first!: AbortSignal;
    const d = deferred();
    void gate.run((signal) => {
      first = signal;
      return d.promise;
    });
    gate.abortAll(new Error('escalated'));
    expect(first.aborted).toBe(true);
    let late!: AbortSignal;
    await gate.run((signal) => {
      late = signal;
    });
    expect(late.aborted).toBe(true);
    d.resolve();
  });

  it('is idle only once the last handler settles', async () => {
    const gate = createInflightGate({ clock: new FakeClock() });
    const a = deferred();
    const b = deferred();
    void gate.run(() => a.promise);
    void gate.run(() => b.promise);
    let idle = false;
    void gate.onIdle().then(() => {
      idle = true;
    });
    a.resolve();
    await flush();
    expect([idle, gate.size]).toEqual([false, 1]);
    b.resolve();
    await flush();
    expect([idle, gate.size]).toEqual([true, 0]);
  });

  it('is idle at once, with no timer, when nothing runs and a deadline is given', async () => {
    const clock = new FakeClock();
    const gate = createInflightGate({ clock });
    await expect(gate.onIdle({ timeoutMs: 100 })).resolves.toBe(true);
    expect(clock.pending()).toBe(0);
  });

  it('on the real clock by default: a deadline that idle beats leaves no timer behind', async () => {
    const timeouts = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    const gate = createInflightGate();
    const d = deferred();
    void gate.run(() => d.promise);
    const before = timeouts();
    const idle = gate.onIdle({ timeoutMs: 60_000 });
    expect(timeouts()).toBe(before + 1);
    d.resolve();
    await expect(idle).resolves.toBe(true);
    expect(timeouts()).toBe(before);
  });

  it("a caller's signal that is already aborted aborts the handler at once, with its reason", async () => {
    const gate = createInflightGate({ clock: new FakeClock() });
    const outer = new AbortController();
    outer.abort(new Error('client went away'));
    let inner!: AbortSignal;
    await gate.run(
      (signal) => {
        inner = signal;
      },
      { signal: outer.signal },
    );
    expect(inner.aborted).toBe(true);
    expect((inner.reason as Error).message).toBe('client went away');
  });

  it("stops listening to the caller's signal once the handler settles", async () => {
    const gate = createInflightGate({ clock: new FakeClock() });
    const outer = new AbortController();
    const d = deferred();
    const run = gate.run(() => d.promise, { signal: outer.signal });
    expect(getEventListeners(outer.signal, 'abort')).toHaveLength(1);
    d.resolve();
    await run;
    expect(getEventListeners(outer.signal, 'abort')).toHaveLength(0);
  });

  it('abortAll without a reason says the server is shutting down', async () => {
    const gate = createInflightGate({ clock: new FakeClock() });
    let signal!: AbortSignal;
    const d = deferred();
    void gate.run((s) => {
      signal = s;
      return d.promise;
    });
    gate.abortAll();
    expect((signal.reason as Error).message).toBe('aborted: the server is shutting down');
    d.resolve();
  });
});
