/**
 * The idle collector of `qmd mcp --http` (`src/serve/heap.ts`), on a fake clock with a counted
 * collection: it runs once the server has been quiet, never while a request is being answered,
 * at most once per gap; and V8's last-resort collection is reachable on this Node. What it does
 * to RSS is `bench/http-sessions.ts`'s to measure.
 */
import { describe, expect, it } from 'vitest';
import { createIdleCollector, lastResortGc } from '../../src/serve/heap.js';
import { FakeClock } from '../support/fake-clock.js';
import { recordingLog } from '../support/recording-log.js';

function collector(busy: () => boolean = () => false) {
  const clock = new FakeClock();
  let runs = 0;
  const c = createIdleCollector({
    quietMs: 1000,
    minGapMs: 10_000,
    busy,
    log: recordingLog(),
    clock,
    collect: () => {
      runs++;
    },
  });
  return { clock, c, runs: () => runs };
}

describe('the idle collector', () => {
  it('collects once things have been quiet after a poke, on an unref timer; a later poke restarts the wait', async () => {
    const t = collector();
    t.c.poke();
    expect(t.clock.pending('unref')).toBe(1);
    expect(t.clock.pending('ref')).toBe(0);
    await t.clock.advance(900);
    t.c.poke();
    await t.clock.advance(900);
    expect(t.runs()).toBe(0);
    await t.clock.advance(100);
    expect(t.runs()).toBe(1);
  });

  it('never while a request is being answered: it waits for a quiet moment', async () => {
    let busy = true;
    const t = collector(() => busy);
    t.c.poke();
    await t.clock.advance(5000);
    expect(t.runs()).toBe(0);
    busy = false;
    await t.clock.advance(1000);
    expect(t.runs()).toBe(1);
  });

  it('at most once per gap, however often it is poked; nothing after stop()', async () => {
    const t = collector();
    t.c.poke();
    await t.clock.advance(1000);
    expect(t.runs()).toBe(1);
    for (let i = 0; i < 5; i++) {
      t.c.poke();
      await t.clock.advance(1000);
    }
    expect(t.runs()).toBe(1);
    // 10 s after the first, not before.
    await t.clock.advance(4999);
    expect(t.runs()).toBe(1);
    await t.clock.advance(1);
    expect(t.runs()).toBe(2);
    t.c.poke();
    t.c.stop();
    await t.clock.advance(60_000);
    expect(t.runs()).toBe(2);
    expect(t.clock.pending('unref')).toBe(0);
  });
});

describe("V8's last-resort collection", () => {
  it('is reachable on this Node without --expose-gc, and gives freed memory back', () => {
    const gc = lastResortGc();
    expect(gc).toBeTypeOf('function');
    // Garbage enough to grow the heap, then dropped.
    let junk: unknown[] | null = Array.from({ length: 300_000 }, (_, i) => ({ i, s: `x${i}` }));
    const grown = process.memoryUsage().heapTotal;
    junk = null;
    gc!();
    expect(junk).toBeNull();
    expect(process.memoryUsage().heapTotal).toBeLessThan(grown);
    // Our global is untouched: only a fresh context saw `gc`.
    expect('gc' in globalThis).toBe(false);
  });
});
