/** `--interval` and `QMD_WATCH_INTERVAL`: a duration as a person writes one, or nothing. */
import { describe, expect, it } from 'vitest';
import { parseDuration } from '../../src/env.js';

describe('parseDuration', () => {
  it('reads milliseconds, seconds, minutes and hours', () => {
    expect(parseDuration('250')).toBe(250);
    expect(parseDuration('250ms')).toBe(250);
    expect(parseDuration('30s')).toBe(30_000);
    expect(parseDuration(' 5m ')).toBe(300_000);
    expect(parseDuration('1h')).toBe(3_600_000);
  });

  it('refuses what is not one, too short, or past the longest timer', () => {
    for (const text of ['', 'fast', '1.5s', '-1s', '5 m', '1e3', '99ms', '1000h'])
      expect(parseDuration(text), text).toBe(undefined);
  });
});
