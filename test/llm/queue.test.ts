import { describe, expect, it } from 'vitest';
import { SerialQueue } from '../../src/llm/queue.js';
import { deferred } from '../support/deferred.js';
import { flush } from '../support/fake-clock.js';
import { settled } from './helpers.js';

describe('SerialQueue', () => {
  it('runs one task at a time, in order', async () => {
    const queue = new SerialQueue();
    const gates = [deferred<string>(), deferred<string>()];
    const order: string[] = [];
    const a = queue.add(() => {
      order.push('a');
      return gates[0]!.promise;
    });
    const b = queue.add(() => {
      order.push('b');
      return gates[1]!.promise;
    });
    expect([queue.running, queue.pending, order]).toEqual([1, 1, ['a']]);
    gates[0]!.resolve('A');
    expect(await a).toBe('A');
    await flush();
    expect([queue.running, queue.pending, order]).toEqual([1, 0, ['a', 'b']]);
    gates[1]!.resolve('B');
    expect(await b).toBe('B');
    expect(queue.running).toBe(0);
  });

  it('close() rejects waiting tasks at once and settles only after the running one', async () => {
    const queue = new SerialQueue();
    const gate = deferred();
    const running = settled(queue.add(() => gate.promise));
    const waiting = settled(queue.add(async () => 'never'));
    let closed = false;
    const close = queue
      .close(() => new Error('closed'))
      .then(() => {
        closed = true;
      });
    expect((await waiting).error).toEqual(new Error('closed'));
    await flush();
    expect(closed).toBe(false);
    gate.resolve();
    await close;
    expect(await running).toEqual({ value: undefined });
    await expect(queue.add(async () => 1)).rejects.toThrow('closed');
  });

  it('an aborted signal takes a waiting task out of the queue', async () => {
    const queue = new SerialQueue();
    const gate = deferred();
    void queue.add(() => gate.promise);
    const controller = new AbortController();
    let ran = false;
    const waiting = settled(
      queue.add(
        async () => {
          ran = true;
        },
        controller.signal,
        () => new Error('aborted'),
      ),
    );
    controller.abort();
    expect((await waiting).error).toEqual(new Error('aborted'));
    expect(queue.pending).toBe(0);
    gate.resolve();
    await queue.close(() => new Error('closed'));
    expect(ran).toBe(false);
  });
});
