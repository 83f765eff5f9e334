/**
 * The writer's place (docs/design.md §9.4): one watcher writes, the others read and take over
 * when it goes; a claim lost is given up before anything is written.
 */
import * as fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { openReader } from '../../src/core/open.js';
import type { Reader } from '../../src/core/reader-types.js';
import { watcherSettings } from '../../src/watch/index.js';
import { hostFacts, placeFile, placeIsFree, readPlace, WriterPlace } from '../../src/watch/place.js';
import { Watcher } from '../../src/watch/watcher.js';
import { linesLog, type Served, served, untilIndexed } from './helpers.js';

let s: Served | undefined;
const others: Array<{ watcher: Watcher; reader: Reader }> = [];
afterEach(async () => {
  for (const o of others.splice(0)) {
    await o.watcher.close();
    await o.reader.close();
  }
  await s?.close();
  s = undefined;
});

const facts = (over: Partial<typeof hostFacts> = {}) => ({ ...hostFacts, now: () => 1_000_000, ...over });

/** Resolves when `watcher` says it has `role` (its `onRole`), or at once if it has; rejects past `ms`. */
function untilRole(watcher: Watcher, heard: Array<() => void>, role: 'writer' | 'reader', ms = 10_000): Promise<void> {
  return new Promise((resolve, reject) => {
    if (watcher.report().role === role) return resolve();
    const timer = setTimeout(() => reject(new Error(`not ${role} within ${ms} ms`)), ms);
    heard.push(() => {
      if (watcher.report().role !== role) return;
      clearTimeout(timer);
      resolve();
    });
  });
}

/** A second server of the same index in this process: its own served reader and watcher. */
function second(index: string, over: Partial<ReturnType<typeof watcherSettings>> = {}) {
  const reader = openReader(index, { readonly: true });
  const log = linesLog();
  const heard: Array<() => void> = [];
  const onRole = () =>
    queueMicrotask(() => {
      for (const f of heard.splice(0)) f();
    });
  const watcher = new Watcher({ ...watcherSettings(reader, { log, embed: false, onRole }), tickMs: 50, ...over });
  others.push({ watcher, reader });
  return { watcher, reader, log, heard };
}

describe('the place rule', () => {
  const record = { pid: 4242, host: hostFacts.host, token: 't', since: 0, by: 'qmd mcp', heartbeatAt: 1_000_000 };
  it('is free with no record, a holder gone from this host, or a stale heartbeat', () => {
    expect(placeIsFree(undefined, facts(), 30_000)).toBe(true);
    expect(placeIsFree(record, facts({ alive: () => true }), 30_000)).toBe(false);
    expect(placeIsFree(record, facts({ alive: () => false }), 30_000)).toBe(true);
    expect(placeIsFree({ ...record, heartbeatAt: 1_000_000 - 30_001 }, facts({ alive: () => true }), 30_000)).toBe(
      true,
    );
    // Another host: its pid means nothing here; only the heartbeat tells.
    const remote = { ...record, host: 'elsewhere' };
    expect(placeIsFree(remote, facts({ alive: () => false }), 30_000)).toBe(false);
    expect(placeIsFree({ ...remote, heartbeatAt: 0 }, facts({ alive: () => false }), 30_000)).toBe(true);
  });

  it('writes its record 0600 and replaces a symlink put in its place instead of following it', () => {
    const dir = fs.mkdtempSync('/tmp/qmd-place-');
    try {
      const file = placeFile(`${dir}/index.sqlite`);
      const target = `${dir}/target`;
      fs.writeFileSync(target, 'precious');
      fs.symlinkSync(target, file);
      expect(readPlace(file)).toBeUndefined();
      const place = new WriterPlace(file, 'test', hostFacts, 30_000);
      expect(place.take()).toBe(true);
      expect(fs.readFileSync(target, 'utf8')).toBe('precious');
      expect(fs.lstatSync(file).isSymbolicLink()).toBe(false);
      expect(fs.statSync(file).mode & 0o777).toBe(0o600);
      expect(readPlace(file)).toMatchObject({ pid: process.pid, token: place.token, by: 'test' });
      expect(place.heartbeat()).toBe(true);
      place.release();
      expect(fs.existsSync(file)).toBe(false);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('one writer per index', () => {
  it('makes a second server a reader that takes over when the writer closes', async () => {
    s = await served({ 'a.md': '# A\n\nalpha\n' });
    const x = s;
    await x.watcher.start();
    const b = second(x.reader.path);
    await b.watcher.start();
    expect(b.watcher.report()).toMatchObject({ role: 'reader', writerPid: process.pid, collections: [] });
    await x.watcher.close();
    await untilRole(b.watcher, b.heard, 'writer');
    expect(b.watcher.report().collections).toHaveLength(1);
    x.write('late.md', '# Late\n\nplatypus\n');
    await untilIndexed(b.watcher, () => b.reader.search('platypus').length === 1, 'the new writer indexes');
  });

  it('takes the place of a holder whose process is gone', async () => {
    s = await served({ 'a.md': '# A\n\nalpha\n' });
    fs.writeFileSync(
      placeFile(s.reader.path),
      JSON.stringify({ pid: 999_999, host: hostFacts.host, token: 'dead', since: 1, by: 'qmd mcp' }),
      { mode: 0o600 },
    );
    const b = second(s.reader.path, { facts: { ...hostFacts, alive: (pid) => pid !== 999_999 } });
    await b.watcher.start();
    expect(b.watcher.report().role).toBe('writer');
    expect(readPlace(placeFile(s.reader.path))?.pid).toBe(process.pid);
  });

  it('steps down, writing nothing, once another has taken its place', async () => {
    s = await served({ 'a.md': '# A\n\nalpha\n' });
    const b = second(s.reader.path);
    await b.watcher.start();
    expect(b.watcher.report().role).toBe('writer');
    // Another process takes the place (as it would after a long stall of this one).
    fs.writeFileSync(
      placeFile(s.reader.path),
      JSON.stringify({ pid: process.pid, host: hostFacts.host, token: 'other', since: 1, by: 'qmd mcp' }),
    );
    s.write('b.md', '# B\n\nbilby\n');
    await untilRole(b.watcher, b.heard, 'reader');
    expect(b.log.lines.join('\n')).toContain('now keeps the index fresh; this one reads');
    expect(b.reader.search('bilby')).toEqual([]);
    expect(b.watcher.report().collections).toEqual([]);
  });
});
