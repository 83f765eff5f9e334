/**
 * The failpoint actions a test cannot see from outside: `until(SIGUSR2)` holds a handler until
 * the process gets SIGUSR2 (or its signal aborts), and listens only while something waits.
 * SIGUSR2 is emitted in process, so no real signal reaches the test worker.
 */
import { describe, expect, it } from 'vitest';
import { parseFailpoints } from '../src/failpoints.js';
import { settled } from './llm/helpers.js';
import { flush } from './support/fake-clock.js';

const listeners = (): number => process.listenerCount('SIGUSR2');

describe('until(SIGUSR2)', () => {
  it('holds until the process gets SIGUSR2, every waiter at once, then stops listening', async () => {
    const before = listeners();
    const failpoints = parseFailpoints('tool.query=until(SIGUSR2)');
    const first = settled(failpoints.hit('tool.query')!);
    const second = settled(failpoints.hit('tool.query')!);
    let done = false;
    void Promise.all([first, second]).then(() => {
      done = true;
    });
    await flush();
    expect([done, listeners()]).toEqual([false, before + 2]);
    process.emit('SIGUSR2');
    expect(await Promise.all([first, second])).toEqual([{ value: undefined }, { value: undefined }]);
    expect(listeners()).toBe(before);
  });

  it('rejects at once with the reason when its signal aborts, and stops listening', async () => {
    const before = listeners();
    const failpoints = parseFailpoints('tool.query=until(SIGUSR2)');
    const controller = new AbortController();
    const held = failpoints.hit('tool.query', controller.signal)!;
    controller.abort(new Error('server closing'));
    await expect(held).rejects.toThrow('server closing');
    expect(listeners()).toBe(before);
    const aborted = failpoints.hit('tool.query', controller.signal)!;
    await expect(aborted).rejects.toThrow('server closing');
    expect(listeners()).toBe(before);
  });

  it('is said on the log like any other action, and only SIGUSR2 is accepted', () => {
    const heard: string[] = [];
    const failpoints = parseFailpoints('tool.get=until(SIGUSR2)', (name, action) => heard.push(`${name} ${action}`));
    const controller = new AbortController();
    controller.abort();
    failpoints.hit('tool.get', controller.signal)?.catch(() => {});
    expect(heard).toEqual(['tool.get until']);
    expect(() => parseFailpoints('tool.get=until(SIGTERM)')).toThrow(
      'QMD_FAILPOINTS: unknown action "until(SIGTERM)" for tool.get (use delay(MS), until(SIGUSR2), hang or throw)',
    );
  });

  it('reports an action its signal cuts short, and nothing else', async () => {
    const aborted: string[] = [];
    const failpoints = parseFailpoints(
      'tool.query=delay(60000);tool.get=delay(0);tool.status=throw',
      undefined,
      (name, reason) => aborted.push(`${name}: ${(reason as Error).message}`),
    );
    const controller = new AbortController();
    const held = failpoints.hit('tool.query', controller.signal)!;
    await failpoints.hit('tool.get', new AbortController().signal);
    await expect(failpoints.hit('tool.status', new AbortController().signal)).rejects.toThrow('failpoint tool.status');
    expect(aborted).toEqual([]);
    controller.abort(new Error('escalated'));
    await expect(held).rejects.toThrow('escalated');
    expect(aborted).toEqual(['tool.query: escalated']);
  });
});
