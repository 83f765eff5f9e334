import { describe, expect, it } from 'vitest';
import { watchParent } from '../../src/lifecycle/parent.js';
import { FakeClock } from '../support/fake-clock.js';

describe('the parent watch', () => {
  it('fires once when the PPID changes, on an unref timer', async () => {
    const clock = new FakeClock();
    let ppid = 500;
    const sent: string[] = [];
    watchParent({ ppid: () => ppid, clock, intervalMs: 100 }, (e) => sent.push(e.type));
    expect(clock.pending('unref')).toBe(1);
    expect(clock.pending('ref')).toBe(0);
    await clock.advance(300);
    expect(sent).toEqual([]);
    ppid = 1;
    await clock.advance(100);
    expect(sent).toEqual(['parent.gone']);
    await clock.advance(1000);
    expect(sent).toEqual(['parent.gone']);
    expect(clock.pending()).toBe(0);
  });

  it('notices a parent that died before the watch started (the PPID read at start-up)', async () => {
    const clock = new FakeClock();
    const sent: string[] = [];
    watchParent({ ppid: () => 1, original: 500, clock, intervalMs: 100 }, (e) => sent.push(e.type));
    await clock.advance(100);
    expect(sent).toEqual(['parent.gone']);
  });

  it('watches nothing when the parent is already PID 1, and stops when detached', async () => {
    const clock = new FakeClock();
    watchParent({ ppid: () => 1, clock }, () => {});
    expect(clock.pending()).toBe(0);
    const stop = watchParent({ ppid: () => 77, clock, intervalMs: 100 }, () => {});
    expect(clock.pending()).toBe(1);
    stop();
    expect(clock.pending()).toBe(0);
  });
});
