import { describe, expect, it } from 'vitest';
import { describe as describeProgress, downloadReporter } from '../../src/cli/download-progress.js';

/** A stderr stand-in: what was written, and whether it claims to be a terminal. */
function fakeStream(isTTY: boolean, columns = 100) {
  const writes: string[] = [];
  return { writes, stream: { isTTY, columns, write: (text: string) => writes.push(text) } };
}

const MB = 1e6;

describe('download progress without a terminal (piped, a script)', () => {
  it('one plain line at once, then one per 10 s however often progress comes, nothing when complete', () => {
    let now = 0;
    const { writes, stream } = fakeStream(false);
    const reporter = downloadReporter({ stream, now: () => now });
    reporter.onProgress({ downloadedBytes: 0.5 * MB, totalBytes: 100 * MB });
    for (let ms = 100; ms < 10_000; ms += 100) {
      now = ms;
      reporter.onProgress({ downloadedBytes: (ms / 100) * MB, totalBytes: 100 * MB });
    }
    now = 10_000;
    reporter.onProgress({ downloadedBytes: 50 * MB, totalBytes: 100 * MB });
    now = 12_000;
    reporter.onProgress({ downloadedBytes: 100 * MB, totalBytes: 100 * MB });
    reporter.stop();
    expect(writes).toEqual([
      'Downloading: 0% (0.5 of 100.0 MB)\n',
      'Downloading: 50% (50.0 of 100.0 MB, 5.0 MB/s, 10 s left)\n',
    ]);
  });
});

describe('download progress on a terminal', () => {
  it('a bar redrawn in place at most every 100 ms, cleared when the file is complete', () => {
    let now = 0;
    const { writes, stream } = fakeStream(true);
    const reporter = downloadReporter({ stream, now: () => now });
    reporter.onProgress({ downloadedBytes: 0, totalBytes: 10 * MB });
    now = 50;
    reporter.onProgress({ downloadedBytes: 1 * MB, totalBytes: 10 * MB }); // too soon: not drawn
    now = 2000;
    reporter.onProgress({ downloadedBytes: 5 * MB, totalBytes: 10 * MB });
    now = 3000;
    reporter.onProgress({ downloadedBytes: 10 * MB, totalBytes: 10 * MB });
    expect(writes).toEqual([
      `\rDownloading [${'-'.repeat(24)}] 0% (0.0 of 10.0 MB)\x1b[K`,
      `\rDownloading [${'#'.repeat(12)}${'-'.repeat(12)}] 50% (5.0 of 10.0 MB, 2.5 MB/s, 2 s left)\x1b[K`,
      '\r\x1b[K',
    ]);
    reporter.stop(); // nothing left to clear
    expect(writes).toHaveLength(3);
  });

  it('never wider than the terminal; stop() clears a bar left by a failed download', () => {
    const { writes, stream } = fakeStream(true, 40);
    const reporter = downloadReporter({ stream, now: () => 0 });
    reporter.onProgress({ downloadedBytes: 3 * MB, totalBytes: 10 * MB });
    const line = (writes[0] ?? '').replace('\r', '').replace('\x1b[K', '');
    expect(line.length).toBeLessThanOrEqual(39);
    reporter.stop();
    expect(writes.at(-1)).toBe('\r\x1b[K');
  });
});

describe('the facts of a line', () => {
  it('percent and megabytes; rate and time left once a second has passed; no total, no percent', () => {
    expect(describeProgress(0, 333.6 * MB, 0)).toBe('0% (0.0 of 333.6 MB)');
    expect(describeProgress(120.5 * MB, 333.6 * MB, 30_000)).toBe('36% (120.5 of 333.6 MB, 4.0 MB/s, 54 s left)');
    expect(describeProgress(2 * MB, 0, 2000)).toBe('(2.0 MB, 1.0 MB/s)');
  });
});
