/**
 * `close(signal)` (the contract, `src/watch/types.ts`): a write in progress completes, or rolls
 * back once `signal` fires; a write still waiting for a busy index is dropped at once; the place
 * is given up; closing twice is one close.
 */
import * as fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { parseFailpoints } from '../../src/failpoints.js';
import { Sqlite } from '../../src/store/sqlite.js';
import { placeFile } from '../../src/watch/place.js';
import { type Served, served } from './helpers.js';

let s: Served | undefined;
afterEach(async () => {
  await s?.close();
  s = undefined;
});

/** Resolves at the watcher's next `onWrite(event)`. */
function nextWrite(x: Served, event: 'started' | 'settled'): Promise<void> {
  return new Promise((resolve) => {
    const off = x.watcher.onWrite((e) => {
      if (e !== event) return;
      off();
      resolve();
    });
  });
}

describe('closing the watcher', () => {
  it('lets the write in progress complete', async () => {
    const hits: string[] = [];
    const failpoints = parseFailpoints('watch.write=delay(300)', (name) => hits.push(name));
    s = await served({ 'a.md': '# A\n\nalpha\n' }, { failpoints });
    const x = s;
    await x.watcher.start();
    const started = nextWrite(x, 'started');
    x.write('b.md', '# B\n\nbandicoot\n');
    await started;
    await x.watcher.close();
    expect(hits).toContain('watch.write');
    expect(x.reader.search('bandicoot')).toHaveLength(1);
    expect(fs.existsSync(placeFile(x.reader.path))).toBe(false);
  });

  it('rolls the write in progress back once the signal fires', async () => {
    const failpoints = parseFailpoints('watch.write=delay(60000)');
    s = await served({ 'a.md': '# A\n\nalpha\n' }, { failpoints });
    const x = s;
    await x.watcher.start();
    const started = nextWrite(x, 'started');
    x.write('b.md', '# B\n\nbandicoot\n');
    await started;
    const settled = nextWrite(x, 'settled');
    const controller = new AbortController();
    const closing = x.watcher.close(controller.signal);
    controller.abort();
    await settled;
    await closing;
    expect(x.reader.search('bandicoot')).toEqual([]);
    // Idempotent.
    await x.watcher.close();
  });

  it('drops a write still waiting for a busy index, at once', async () => {
    s = await served({ 'a.md': '# A\n\nalpha\n' });
    const x = s;
    await x.watcher.start();
    const other = new Sqlite(x.reader.path);
    other.exec('BEGIN IMMEDIATE');
    try {
      const started = nextWrite(x, 'started');
      x.write('b.md', '# B\n\nbandicoot\n');
      await started;
      await x.watcher.close();
      expect(x.watcher.report().pending).toBe(0);
    } finally {
      other.exec('COMMIT');
      other.close();
    }
    expect(x.reader.search('bandicoot')).toEqual([]);
  });
});
