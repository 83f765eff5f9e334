import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import {
  barLine,
  count,
  createProgress,
  DEFAULT_PROGRESS_INTERVAL_MS,
  duration,
  plainLine,
} from '../../../src/cli/terminal/progress.js';
import { visibleLength } from '../../../src/cli/terminal/terminal.js';
import { FakeClock } from '../../support/fake-clock.js';

/** A stream that records what is written; `isTTY` and `columns` as a terminal would have them. */
function fakeStream(tty: { columns: number } | undefined) {
  const stream = new PassThrough() as PassThrough & { isTTY?: boolean; columns?: number };
  if (tty) {
    stream.isTTY = true;
    stream.columns = tty.columns;
  }
  let written = '';
  stream.on('data', (chunk: Buffer) => {
    written += chunk.toString();
  });
  return { stream, written: () => written };
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: escape sequences are what is checked.
const ESCAPE = /\x1b\[/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: as above.
const SGR = /\x1b\[[0-9;]*m/;

describe('piped (not a terminal): plain lines, at least one per interval, nothing else', () => {
  it('prints the current state every interval while a stage runs, and nothing once stopped', async () => {
    const clock = new FakeClock();
    const out = fakeStream(undefined);
    const progress = createProgress({ stream: out.stream, clock, env: {} });
    progress.stage('Embedding', { unit: 'chunks', total: 1000 });
    // The model loads for 9 s before the first chunk: that wait is no rate (read as one, the
    // mean since the stage began, 2.5 chunks/s, promised 6m 30s where 1m 05s was true).
    await clock.advance(9_000);
    progress.update(10);
    for (const done of [15, 20, 25]) {
      await clock.advance(250);
      progress.update(done);
    }
    await clock.advance(DEFAULT_PROGRESS_INTERVAL_MS - 9_750 - 1);
    expect(out.written()).toBe(''); // work shorter than the interval prints nothing
    await clock.advance(1);
    expect(out.written()).toBe('Embedding: 25/1,000 chunks (2%), 15.0 chunks/s, about 1m 05s left\n');
    await clock.advance(5_000);
    progress.update(600);
    await clock.advance(DEFAULT_PROGRESS_INTERVAL_MS - 5_000);
    expect(out.written().split('\n').at(-2)).toBe('Embedding: 600/1,000 chunks (60%), 53.6 chunks/s, about 7s left');
    // A line at least every interval, even when nothing moved (one slow chunk).
    await clock.advance(DEFAULT_PROGRESS_INTERVAL_MS * 3);
    expect(out.written().split('\n')).toHaveLength(6);
    progress.stop();
    await clock.advance(DEFAULT_PROGRESS_INTERVAL_MS * 5);
    expect(out.written().split('\n')).toHaveLength(6);
    expect(out.written()).not.toMatch(ESCAPE);
    expect(clock.pending()).toBe(0);
  });

  it('its timer never keeps the process alive, and the interval is the option given', async () => {
    const clock = new FakeClock();
    const out = fakeStream(undefined);
    const progress = createProgress({ stream: out.stream, clock, env: {}, intervalMs: 50 });
    progress.stage('Listing notes');
    expect(clock.pending('ref')).toBe(0);
    expect(clock.pending('unref')).toBe(1);
    await clock.advance(50);
    expect(out.written()).toBe('Listing notes…\n');
    progress.stop();
  });

  it('log lines pass through as they are', () => {
    const out = fakeStream(undefined);
    const progress = createProgress({ stream: out.stream, clock: new FakeClock(), env: {} });
    progress.stage('Embedding', { unit: 'chunks', total: 3 });
    progress.log.line('Stopping after the current chunk');
    progress.log.warn('careful');
    expect(out.written()).toBe('Stopping after the current chunk\nQMD Warning: careful\n');
    progress.stop();
  });
});

describe('a terminal: one bar redrawn in place, fitted to the width, cleared at the end', () => {
  it('draws at once, at most every 100 ms, and clears its line when stopped', async () => {
    const clock = new FakeClock();
    const out = fakeStream({ columns: 80 });
    const progress = createProgress({ stream: out.stream, clock, env: {} });
    progress.stage('Embedding', { unit: 'chunks', total: 200 });
    const first = out.written();
    expect(first.startsWith('\r')).toBe(true);
    expect(first.endsWith('\x1b[K')).toBe(true);
    progress.update(1);
    expect(out.written()).toBe(first); // within 100 ms: not redrawn
    await clock.advance(500);
    progress.update(40);
    await clock.advance(500);
    progress.update(70);
    const frames = () => out.written().split('\r').filter(Boolean);
    expect(frames()).toHaveLength(3);
    // Two updates since the first: too few to be a rate, so neither a rate nor a time left.
    expect(frames().at(-1)).toContain('70/200 chunks');
    expect(frames().at(-1)).not.toMatch(/\/s|left/);
    await clock.advance(1000);
    progress.update(101);
    expect(frames()).toHaveLength(4);
    const last = frames().at(-1) as string;
    expect(last).toContain('101/200 chunks');
    expect(last).toContain('50.0/s');
    expect(last).toContain('2s left');
    expect(last).toMatch(ESCAPE); // colour: a terminal with NO_COLOR unset
    progress.stop();
    expect(out.written().endsWith('\r\x1b[K')).toBe(true);
  });

  it('NO_COLOR: the same bar, without a colour', () => {
    const out = fakeStream({ columns: 80 });
    const progress = createProgress({ stream: out.stream, clock: new FakeClock(), env: { NO_COLOR: '1' } });
    progress.stage('Embedding', { unit: 'chunks', total: 10 });
    // Only the bar's own cursor moves: \r and erase-to-end-of-line, no SGR (m).
    expect(out.written()).not.toMatch(SGR);
    expect(out.written()).toContain('[░░');
    progress.stop();
  });

  it('a log line clears the bar first, then the bar is drawn again under it', () => {
    const out = fakeStream({ columns: 80 });
    const progress = createProgress({ stream: out.stream, clock: new FakeClock(), env: {} });
    progress.stage('Reading notes', { unit: 'files', total: 10 });
    const before = out.written().length;
    progress.log.line('Stopping after the current batch of files');
    const after = out.written().slice(before);
    expect(after.startsWith('\r\x1b[KStopping after the current batch of files\n\r')).toBe(true);
    progress.stop();
  });

  it.each([20, 40, 60, 80, 200])('never wider than the terminal less one column (%i columns)', (columns) => {
    const stage = {
      label: 'Reading a-collection-with-a-long-name',
      unit: 'files',
      total: 123_456,
      done: 61_000,
      startedAt: 0,
      measured: { at: 0, done: 0, samples: 20 },
    };
    const line = barLine(stage, 30_000, columns);
    expect(visibleLength(line)).toBeLessThanOrEqual(columns - 1);
    // The numbers first, then a bar, then as much of the label as fits.
    if (columns >= 60) expect(line).toContain('61,000/123,456 files  2,033/s  31s left');
    if (columns >= 80) expect(line).toMatch(/^Reading a-.*…? {2}\[█+░+\] {2}61,000/);
    if (columns >= 200) expect(line).toContain('Reading a-collection-with-a-long-name  [');
  });
});

describe('the words', () => {
  it('plain lines: unknown totals, counts, rates and time left', () => {
    const stage = { label: 'Chunking notes', unit: 'notes', total: undefined, done: 0, startedAt: 0 };
    expect(plainLine(stage, 5000)).toBe('Chunking notes…');
    expect(plainLine({ ...stage, done: 1200 }, 5000)).toBe('Chunking notes… 1,200 notes');
    const measured = { at: 0, done: 0, samples: 3 };
    const known = { label: 'Indexing notes', unit: 'files', total: 2000, done: 500, startedAt: 0, measured };
    expect(plainLine(known, 500)).toBe('Indexing notes: 500/2,000 files (25%)'); // no rate in the first second
    expect(plainLine(known, 2000)).toBe('Indexing notes: 500/2,000 files (25%), 250 files/s, about 6s left');
    expect(plainLine({ ...known, done: 2000 }, 4000)).toBe('Indexing notes: 2,000/2,000 files (100%), 500 files/s');
    // Measured from the first work done, over at least three updates; never before.
    expect(plainLine({ ...known, measured: undefined }, 60_000)).toBe('Indexing notes: 500/2,000 files (25%)');
    expect(plainLine({ ...known, measured: { ...measured, samples: 2 } }, 60_000)).toBe(
      'Indexing notes: 500/2,000 files (25%)',
    );
    expect(plainLine({ ...known, measured: { at: 1000, done: 100, samples: 3 } }, 3000)).toBe(
      'Indexing notes: 500/2,000 files (25%), 200 files/s, about 8s left',
    );
  });

  it('counts and durations read the same everywhere', () => {
    expect([0, 999, 1000, 1_234_567].map(count)).toEqual(['0', '999', '1,000', '1,234,567']);
    expect([0.4, 48, 192, 7500].map(duration)).toEqual(['0s', '48s', '3m 12s', '2h 05m']);
  });
});
