/** Bursts coalesce per collection, debounced and bounded, on a clock the test moves. */
import { describe, expect, it } from 'vitest';
import { Coalescer } from '../../src/watch/coalescer.js';
import { FakeClock } from '../support/fake-clock.js';

function setup() {
  const clock = new FakeClock();
  const due: string[] = [];
  const coalescer = new Coalescer(clock, { debounceMs: 200, maxWaitMs: 2000 }, (c) => due.push(c));
  return { clock, due, coalescer };
}

describe('Coalescer', () => {
  it('is due once, debounceMs after the last event, each path once', async () => {
    const { clock, due, coalescer } = setup();
    coalescer.add('notes', 'a.md');
    await clock.advance(150);
    coalescer.add('notes', 'a.md');
    coalescer.add('notes', 'b.md');
    await clock.advance(150);
    expect(due).toEqual([]);
    expect(coalescer.size).toBe(2);
    await clock.advance(50);
    expect(due).toEqual(['notes']);
    expect(coalescer.take('notes')).toEqual({ paths: ['a.md', 'b.md'], rescan: false });
    expect(coalescer.size).toBe(0);
  });

  it('never waits past maxWaitMs after the first event, however long the burst', async () => {
    const { clock, due, coalescer } = setup();
    for (let t = 0; t < 2100; t += 100) {
      coalescer.add('notes', `n${t}.md`);
      await clock.advance(100);
      if (due.length > 0) break;
    }
    expect(due).toEqual(['notes']);
    expect(clock.now()).toBe(2000);
  });

  it('keeps collections apart, and a rescan with its paths', async () => {
    const { clock, due, coalescer } = setup();
    coalescer.add('a', 'x.md');
    await clock.advance(100);
    coalescer.rescan('b');
    await clock.advance(100);
    expect(due).toEqual(['a']);
    await clock.advance(100);
    expect(due).toEqual(['a', 'b']);
    expect(coalescer.take('b')).toEqual({ paths: [], rescan: true });
  });

  it('holds only unref timers, and none once closed', () => {
    const { clock, coalescer } = setup();
    coalescer.add('a', 'x.md');
    coalescer.add('b', 'y.md');
    expect(clock.pending('ref')).toBe(0);
    expect(clock.pending('unref')).toBe(2);
    coalescer.close();
    expect(clock.pending('all')).toBe(0);
  });
});
