/**
 * The watcher's own loop is bounded (docs/design.md §9.2): a change set never grows while it
 * is written, and a watcher that keeps re-triggering itself at one instant stops, saying so,
 * instead of spinning. On a fake clock: nothing is written until the test moves time.
 */
import type * as fs from 'node:fs';
import { watch } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import type { WatchFn } from '../../src/watch/events.js';
import { watcherSettings } from '../../src/watch/index.js';
import { Watcher } from '../../src/watch/watcher.js';
import { FakeClock } from '../support/fake-clock.js';
import { linesLog, type Served, served } from './helpers.js';

let s: Served | undefined;
let w: Watcher | undefined;
afterEach(async () => {
  await w?.close();
  w = undefined;
  await s?.close();
  s = undefined;
});

/** Real `fs.watch`, telling the test each event's file name as it arrives. */
function tappedWatch(heard: (name: string) => void): WatchFn {
  return (folder, options, listener) =>
    watch(folder, options, (event, name) => {
      listener(event, name);
      if (name !== null) heard(name);
    }) as fs.FSWatcher;
}

function untilHeard(names: Set<string>, wanted: string[], ms = 10_000): Promise<void> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const look = (): void => {
      if (wanted.every((n) => names.has(n))) {
        resolve();
        return;
      }
      if (Date.now() - started > ms) {
        reject(new Error(`events for ${wanted.join(', ')} not heard`));
        return;
      }
      setImmediate(look);
    };
    look();
  });
}

function untilSettled(watcher: Watcher, count: number, ms = 10_000): Promise<void> {
  return new Promise((resolve, reject) => {
    let n = 0;
    const timer = setTimeout(() => reject(new Error(`${n} of ${count} writes settled`)), ms);
    const off = watcher.onWrite((event) => {
      if (event !== 'settled' || ++n < count) return;
      clearTimeout(timer);
      off();
      resolve();
    });
  });
}

describe('the engine loop', () => {
  it('writes a change set once, however often what it triggers writes back', async () => {
    s = await served({ 'a.md': '# A\n\nalpha\n' });
    const x = s;
    const clock = new FakeClock();
    const names = new Set<string>();
    const log = linesLog();
    w = new Watcher({
      ...watcherSettings(x.reader, { log, embed: false }),
      clock,
      watch: tappedWatch((n) => names.add(n)),
    });
    let round = 0;
    // A listener that writes into the watched folder at every batch: a feedback loop.
    w.onIndexed(() => x.write(`echo${++round}.md`, `# Echo\n\necho ${round}\n`));
    await w.start();
    const settled = untilSettled(w, 1);
    x.write('first.md', '# First\n\nfirst\n');
    await untilHeard(names, ['first.md']);
    await clock.advance(200);
    await settled;
    await untilHeard(names, ['echo1.md']);
    // The echo waits for its own debounce: no time has passed, so nothing more is written.
    expect(round).toBe(1);
    expect(w.report().pending).toBe(1);
    const next = untilSettled(w, 1);
    await clock.advance(200);
    await next;
    expect(round).toBe(2);
  });

  it('stops, saying so, past its bound of batches at one instant', async () => {
    s = await served({ 'a.md': '# A\n\nalpha\n' });
    const x = s;
    const clock = new FakeClock();
    const names = new Set<string>();
    const log = linesLog();
    w = new Watcher({
      ...watcherSettings(x.reader, { log, embed: false }),
      clock,
      batchPaths: 1,
      maxBatchesPerInstant: 2,
      watch: tappedWatch((n) => names.add(n)),
    });
    await w.start();
    const wanted = ['n1.md', 'n2.md', 'n3.md', 'n4.md', 'n5.md'];
    for (const name of wanted) x.write(name, `# ${name}\n\ntext\n`);
    await untilHeard(names, wanted);
    const two = untilSettled(w, 2);
    await clock.advance(200);
    await two;
    await clock.advance(0);
    expect(w.report().error).toContain('2 batches were written at one instant');
    expect(log.lines.some((l) => l.startsWith('QMD Warning: watching: 2 batches'))).toBe(true);
    // Two of the five (and the catch-up's nothing) were written; the rest were not.
    expect(x.indexed()).toHaveLength(3);
  });
});
