import { describe, expect, it } from 'vitest';
import { processExists, watchParent } from '../../src/lifecycle/parent.js';
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

  it('every poll is unref, one at a time, at the given interval (100 ms by default)', async () => {
    const clock = new FakeClock();
    const sent: string[] = [];
    watchParent({ ppid: () => 900, clock }, (e) => sent.push(e.type));
    for (let i = 0; i < 3; i++) {
      await clock.advance(100);
      expect([clock.pending('unref'), clock.pending('ref')]).toEqual([1, 0]);
    }
    const fast = new FakeClock();
    let ppid = 900;
    watchParent({ ppid: () => ppid, clock: fast, intervalMs: 100 }, (e) => sent.push(e.type));
    ppid = 1;
    await fast.advance(99);
    expect(sent).toEqual([]);
    await fast.advance(1);
    expect(sent).toEqual(['parent.gone']);
  });

  it('by default reads the PPID 10 times a second and notices a death within 100 ms, whatever its phase', async () => {
    // 500 ms made parent death the slowest trigger (p50 493 ms to exit in
    // bench/triggers.ts). The cost of 100 ms is in src/lifecycle/parent.ts.
    for (const diesAt of [0, 1, 37, 99, 100, 101, 250, 999]) {
      const clock = new FakeClock();
      let ppid = 700;
      let reads = 0;
      let goneAt: number | undefined;
      watchParent(
        {
          ppid: () => {
            reads++;
            return ppid;
          },
          original: 700,
          clock,
        },
        () => {
          goneAt = clock.now();
        },
      );
      await clock.advance(diesAt);
      ppid = 1;
      while (goneAt === undefined && clock.now() < diesAt + 1000) await clock.advance(1);
      expect(goneAt, `died at ${diesAt} ms`).toBeDefined();
      const delay = (goneAt as number) - diesAt;
      expect(delay, `died at ${diesAt} ms`).toBeGreaterThan(0);
      expect(delay, `died at ${diesAt} ms`).toBeLessThanOrEqual(100);
      expect(reads).toBe(Math.floor((goneAt as number) / 100));
    }
    const idle = new FakeClock();
    let reads = 0;
    watchParent(
      {
        ppid: () => {
          reads++;
          return 700;
        },
        original: 700,
        clock: idle,
      },
      () => {},
    );
    await idle.advance(60_000);
    expect(reads).toBe(600);
  });

  it('a parent with PID 2 is still watched (only PID 1 means already orphaned)', () => {
    const clock = new FakeClock();
    watchParent({ ppid: () => 2, clock }, () => {});
    expect(clock.pending()).toBe(1);
  });

  it('detached after a few polls, it never looks again', async () => {
    const clock = new FakeClock();
    let reads = 0;
    const stop = watchParent(
      {
        ppid: () => {
          reads++;
          return 600;
        },
        clock,
        intervalMs: 100,
      },
      () => {},
    );
    await clock.advance(250);
    stop();
    const seen = reads;
    await clock.advance(1000);
    expect(reads).toBe(seen);
    expect(clock.pending()).toBe(0);
  });

  it('the Windows rule: the PPID never changes there, so it asks whether the original parent exists', async () => {
    const clock = new FakeClock();
    let parentAlive = true;
    const asked: number[] = [];
    const sent: string[] = [];
    watchParent(
      {
        ppid: () => 4242,
        clock,
        intervalMs: 100,
        rule: 'parent-alive',
        alive: (pid) => {
          asked.push(pid);
          return parentAlive;
        },
      },
      (e) => sent.push(e.type),
    );
    await clock.advance(300);
    expect(sent).toEqual([]);
    expect(asked).toEqual([4242, 4242, 4242]);
    parentAlive = false;
    await clock.advance(100);
    expect(sent).toEqual(['parent.gone']);
    expect(clock.pending()).toBe(0);
  });

  it('the Unix rule ignores whether the parent exists: only reparenting counts', async () => {
    const clock = new FakeClock();
    const sent: string[] = [];
    watchParent({ ppid: () => 4242, clock, intervalMs: 100, rule: 'reparented', alive: () => false }, (e) =>
      sent.push(e.type),
    );
    await clock.advance(500);
    expect(sent).toEqual([]);
  });

  it('processExists: this process exists; a PID no process has does not', () => {
    expect(processExists(process.pid)).toBe(true);
    expect(processExists(2147483646)).toBe(false);
  });
});
