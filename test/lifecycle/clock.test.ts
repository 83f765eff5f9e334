/**
 * The real clock, checked with what Node itself reports: a ref'd timer is listed by
 * `process.getActiveResourcesInfo()` (it keeps the loop alive), an unref'd or cleared one is
 * not. Only a 0 ms timer is ever waited for.
 */
import { describe, expect, it } from 'vitest';
import { realClock } from '../../src/lifecycle/clock.js';

const timeouts = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;

describe('the real clock', () => {
  it('reads performance.now()', () => {
    const before = performance.now();
    const now = realClock.now();
    expect(now).toBeGreaterThanOrEqual(before);
    expect(now).toBeLessThanOrEqual(performance.now());
  });

  it('a timer holds the loop until cleared, and a cleared timer never fires', async () => {
    const before = timeouts();
    let fired = false;
    const handle = realClock.setTimeout(() => {
      fired = true;
    }, 0);
    expect((handle as NodeJS.Timeout).hasRef()).toBe(true);
    expect(timeouts()).toBe(before + 1);
    realClock.clearTimeout(handle);
    expect(timeouts()).toBe(before);
    // Had it not been cleared, that earlier 0 ms timer would fire before this one.
    await new Promise((resolve) => realClock.setTimeout(() => resolve(undefined), 0));
    expect(fired).toBe(false);
  });

  it('an unref timer does not hold the loop, and still fires', async () => {
    const before = timeouts();
    let fire!: () => void;
    const fired = new Promise<void>((resolve) => {
      fire = resolve;
    });
    const handle = realClock.setTimeout(() => fire(), 0, { unref: true });
    expect((handle as NodeJS.Timeout).hasRef()).toBe(false);
    expect(timeouts()).toBe(before);
    await fired;
  });

  it("a timer without options is ref'd", () => {
    const handle = realClock.setTimeout(() => {}, 60_000, {});
    expect((handle as NodeJS.Timeout).hasRef()).toBe(true);
    realClock.clearTimeout(handle);
  });
});
