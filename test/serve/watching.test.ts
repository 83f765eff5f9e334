/**
 * The served index kept fresh (src/serve/watching.ts) with a hand-written engine: when the
 * watcher comes to be (off, no index yet, loading, starting), what it reports meanwhile, and
 * that closing it at any of those moments leaves nothing running and creates nothing after.
 */
import { describe, expect, it } from 'vitest';
import type { Reader } from '../../src/core/reader-types.js';
import { createWatching, type WatchingOptions } from '../../src/serve/watching.js';
import type { WatchIndex } from '../../src/watch/types.js';
import { deferred } from '../support/deferred.js';
import { FakeClock, flush } from '../support/fake-clock.js';
import { FakeWatcher } from '../support/fake-watcher.js';
import { recordingLog } from '../support/recording-log.js';

const READER = { path: '/notes/index.sqlite' } as Reader;

function setup(options: Partial<WatchingOptions> & { watcher?: FakeWatcher } = {}) {
  const watcher = options.watcher ?? new FakeWatcher();
  const created: Reader[] = [];
  const engine: WatchIndex = (reader) => {
    created.push(reader);
    return watcher;
  };
  const log = recordingLog();
  const clock = new FakeClock();
  const watching = createWatching({
    config: { enabled: true },
    reader: () => READER,
    load: async () => engine,
    log,
    clock,
    ...options,
  });
  return { watching, watcher, created, log, clock };
}

describe('watching the served index', () => {
  it('starts the engine over the served reader, and reports what it says', async () => {
    const { watching, watcher, created } = setup();
    expect(watching.report()).toMatchObject({ role: 'off', off: 'starting' });
    watching.start();
    await watching.ready;
    expect(created).toEqual([READER]);
    expect(watcher.started).toBe(true);
    watcher.current = { ...watcher.current, pending: 3, vectorsPending: 2 };
    expect(watching.report()).toMatchObject({ role: 'writer', pending: 3, vectorsPending: 2 });
  });

  it('relays the engine’s writes and committed batches', async () => {
    const { watching, watcher } = setup();
    const writes: string[] = [];
    const batches: string[][] = [];
    watching.onWrite((event) => writes.push(event));
    watching.onIndexed((change) => batches.push(change.added));
    watching.start();
    await watching.ready;
    watcher.startWrite();
    watcher.settleWrite();
    watcher.indexed({ added: ['a.md'] });
    expect(writes).toEqual(['started', 'settled']);
    expect(batches).toEqual([['a.md']]);
  });

  it.each([
    ['--no-watch', { enabled: false, off: '--no-watch' }],
    ['QMD_WATCH=0', { enabled: false, off: 'QMD_WATCH=0' }],
  ] as const)('turned off by %s: nothing is loaded, and status says why', async (why, config) => {
    let loads = 0;
    const { watching } = setup({
      config,
      load: async () => {
        loads++;
        return () => new FakeWatcher();
      },
    });
    watching.start();
    await watching.ready;
    expect(loads).toBe(0);
    expect(watching.report()).toEqual({
      role: 'off',
      off: why,
      collections: [],
      pending: 0,
      vectorsPending: 0,
      lastChangeAt: null,
      lastIndexedAt: null,
    });
  });

  it('with no index yet, looks for it every 2 s and starts once it appears', async () => {
    let reader: Reader | undefined;
    const { watching, created, clock } = setup({ reader: () => reader });
    watching.start();
    await flush();
    expect(watching.report()).toMatchObject({ role: 'off', off: 'no index yet: watching begins when it appears' });
    // Unref'd: the wait for an index never keeps the process alive.
    expect(clock.pending('unref')).toBe(1);
    await clock.advance(2000);
    expect(created).toEqual([]);
    reader = READER;
    await clock.advance(2000);
    await watching.ready;
    expect(created).toEqual([READER]);
    expect(clock.pending()).toBe(0);
  });

  it('closed while it waits for the index: the poll stops, nothing is created after', async () => {
    let reader: Reader | undefined;
    const { watching, created, clock } = setup({ reader: () => reader });
    watching.start();
    await flush();
    await watching.close();
    expect(clock.pending()).toBe(0);
    reader = READER;
    await clock.advance(10_000);
    await watching.ready;
    expect(created).toEqual([]);
    expect(watching.report()).toMatchObject({ role: 'off', off: 'the server is closing' });
  });

  it('closed while the engine loads: it is never created', async () => {
    const load = deferred<WatchIndex>();
    const watcher = new FakeWatcher();
    const { watching, created } = setup({ load: () => load.promise, watcher });
    watching.start();
    await flush();
    const closed = watching.close();
    load.resolve((reader) => {
      created.push(reader);
      return watcher;
    });
    await closed;
    await watching.ready;
    expect(created).toEqual([]);
    expect(watcher.started).toBe(false);
  });

  it('closed while the engine starts (catching up): the engine is closed, with the signal given', async () => {
    const watcher = new FakeWatcher({ manualStart: true });
    const { watching } = setup({ watcher });
    watching.start();
    await flush();
    expect(watcher.started).toBe(true);
    const signal = new AbortController().signal;
    await watching.close(signal);
    await watching.ready;
    expect(watcher.closeCalls).toBe(1);
    expect(watcher.closeSignal).toBe(signal);
  });

  it('a close waits for the engine’s write, which the signal rolls back', async () => {
    const { watching, watcher } = setup();
    watching.start();
    await watching.ready;
    const write = watcher.startWrite();
    const controller = new AbortController();
    let closed = false;
    const closing = watching.close(controller.signal).then(() => {
      closed = true;
    });
    await flush();
    expect(closed).toBe(false);
    controller.abort();
    await closing;
    expect(write.rolledBack).toBe(true);
    // Idempotent: a second close is the first one.
    await watching.close();
    expect(watcher.closeCalls).toBe(1);
  });

  it('an engine that cannot be loaded: the index is served unwatched, and it is said once', async () => {
    const missing = Object.assign(new Error('Cannot find module'), { code: 'ERR_MODULE_NOT_FOUND' });
    const { watching, log } = setup({
      load: async () => {
        throw missing;
      },
    });
    watching.start();
    await watching.ready;
    expect(log.warnings).toEqual([
      'serving without watching the notes (could not load the watcher: Cannot find module): run qmd update to index changes',
    ]);
    expect(watching.report()).toMatchObject({ role: 'off', off: 'could not load the watcher: Cannot find module' });
  });

  it('an engine that fails to start is closed, and status says why', async () => {
    const watcher = new FakeWatcher({ startFails: new Error('EACCES: /notes') });
    const { watching, log } = setup({ watcher });
    watching.start();
    await watching.ready;
    expect(log.warnings).toEqual([
      'watching stopped (EACCES: /notes): serving the index as it is; run qmd update to index changes',
    ]);
    expect(watcher.closeCalls).toBe(1);
    expect(watching.report()).toMatchObject({ role: 'off', off: 'it failed: EACCES: /notes' });
  });

  it('an engine that throws as it is made: the same, with nothing left to close', async () => {
    const { watching, log } = setup({
      load: async () => () => {
        throw new Error('no inotify');
      },
    });
    watching.start();
    await watching.ready;
    expect(log.warnings).toEqual([
      'watching stopped (no inotify): serving the index as it is; run qmd update to index changes',
    ]);
    expect(watching.report()).toMatchObject({ role: 'off', off: 'it failed: no inotify' });
    await watching.close();
  });

  it('a report that throws reads as off, with why', async () => {
    const watcher = new FakeWatcher();
    watcher.report = () => {
      throw new Error('closed');
    };
    const { watching } = setup({ watcher });
    watching.start();
    await watching.ready;
    expect(watching.report()).toMatchObject({ role: 'off', off: 'no report: closed' });
  });
});
