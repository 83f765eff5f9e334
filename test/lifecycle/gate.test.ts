import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { createInflightGate } from '../../src/lifecycle/gate.js';
import { deferred } from '../support/deferred.js';
import { flush } from '../support/fake-clock.js';

describe('the in-flight gate', () => {
  it('counts a handler from start to settle, and reports started then settled', async () => {
    const events: string[] = [];
    const gate = createInflightGate({
      onStarted: () => events.push(`started:${gate.size}`),
      onSettled: () => events.push(`settled:${gate.size}`),
    });
    expect(gate.size).toBe(0);
    const d = deferred<string>();
    const run = gate.run(() => d.promise);
    expect([gate.size, events]).toEqual([1, ['started:1']]);
    await flush();
    expect(gate.size).toBe(1);
    d.resolve('result');
    await expect(run).resolves.toBe('result');
    expect([gate.size, events]).toEqual([0, ['started:1', 'settled:0']]);
  });

  it('counts each handler until it settles, the last one included', async () => {
    const settled: number[] = [];
    const gate = createInflightGate({ onSettled: () => settled.push(gate.size) });
    const a = deferred();
    const b = deferred();
    void gate.run(() => a.promise);
    void gate.run(() => b.promise);
    expect(gate.size).toBe(2);
    a.resolve();
    await flush();
    expect([gate.size, settled]).toEqual([1, [1]]);
    b.resolve();
    await flush();
    expect([gate.size, settled]).toEqual([0, [1, 0]]);
  });

  it('uncounted(): the same signals, aborted by abortAll, but neither counted nor reported', async () => {
    const events: string[] = [];
    const gate = createInflightGate({
      onStarted: () => events.push('started'),
      onSettled: () => events.push('settled'),
    });
    const outer = new AbortController();
    let inner!: AbortSignal;
    const d = deferred();
    const run = gate.uncounted().run(
      (signal) => {
        inner = signal;
        return d.promise;
      },
      { signal: outer.signal },
    );
    expect(gate.size).toBe(0);
    gate.abortAll(new Error('escalated'));
    expect((inner.reason as Error).message).toBe('escalated');
    let late!: AbortSignal;
    await gate.uncounted().run((signal) => {
      late = signal;
    });
    expect(late.aborted).toBe(true);
    d.resolve();
    await run;
    expect([gate.size, events, getEventListeners(outer.signal, 'abort')]).toEqual([0, [], []]);
  });

  it('a rejecting handler still releases it, and the rejection reaches the caller', async () => {
    const settled: string[] = [];
    const gate = createInflightGate({ onSettled: () => settled.push('settled') });
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
    const gate = createInflightGate();
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
    const gate = createInflightGate();
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

  it("a caller's signal that is already aborted aborts the handler at once, with its reason", async () => {
    const gate = createInflightGate();
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
    const gate = createInflightGate();
    const outer = new AbortController();
    const d = deferred();
    const run = gate.run(() => d.promise, { signal: outer.signal });
    expect(getEventListeners(outer.signal, 'abort')).toHaveLength(1);
    d.resolve();
    await run;
    expect(getEventListeners(outer.signal, 'abort')).toHaveLength(0);
  });

  it('abortAll without a reason says the server is shutting down', async () => {
    const gate = createInflightGate();
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
