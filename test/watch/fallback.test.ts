/**
 * Degrading in the open (docs/design.md §9.3): a folder that cannot be watched is polled, with
 * one line saying so and `report()` saying why, and its changes still arrive.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { watcherSettings } from '../../src/watch/index.js';
import { parseMountinfo } from '../../src/watch/platform.js';
import { Watcher } from '../../src/watch/watcher.js';
import { linesLog, type Served, served, untilIndexed } from './helpers.js';

let s: Served | undefined;
let w: Watcher | undefined;
afterEach(async () => {
  await w?.close();
  w = undefined;
  await s?.close();
  s = undefined;
});

const files = { 'a.md': '# A\n\nalpha\n', 'one/b.md': '# B\n\nbravo\n', 'two/c.md': '# C\n\ncharlie\n' };

function watcher(x: Served, over: Partial<ReturnType<typeof watcherSettings>>) {
  const log = linesLog();
  w = new Watcher({ ...watcherSettings(x.reader, { log, embed: false }), pollIntervalMs: 200, ...over });
  return { watcher: w, log };
}

describe('polling when a folder cannot be watched', () => {
  it('polls a collection once the OS limit on watches is reached, saying so once', async () => {
    s = await served(files);
    const x = s;
    const { watcher: ww, log } = watcher(x, { watchLimit: 2 });
    await ww.start();
    const [collection] = ww.report().collections;
    expect(collection).toMatchObject({ via: 'polling', folders: 0, intervalMs: 200 });
    expect(collection?.reason).toContain('fs.inotify.max_user_watches');
    const said = log.lines.filter((l) => l.startsWith('Watching: polling'));
    expect(said).toEqual([
      `Watching: polling ${x.root} every 0.2 s (longer if a pass takes over 1/20 of that): ${collection?.reason}`,
    ]);

    x.write('two/new.md', '# New\n\nnumbat\n');
    await untilIndexed(ww, () => x.reader.search('numbat').length === 1, 'a polled note');
    fs.rmSync(path.join(x.root, 'one'), { recursive: true });
    await untilIndexed(ww, () => !x.reader.listDocuments('notes').some((d) => d.path.startsWith('one/')), 'gone');
    x.write('a.md', '# A\n\nalpha edited to quoll\n');
    await untilIndexed(ww, () => x.reader.search('quoll').length === 1, 'an edit heard by polling');
    expect(log.lines.filter((l) => l.startsWith('Watching: polling'))).toHaveLength(1);
  });

  it('polls a collection on a file system that sends no events', async () => {
    s = await served(files);
    const x = s;
    const mounts = () => parseMountinfo(`99 1 0:50 / ${x.root} rw - nfs4 server:/notes rw`);
    const { watcher: ww, log } = watcher(x, { mounts });
    await ww.start();
    expect(ww.report().collections[0]).toMatchObject({
      via: 'polling',
      reason: 'its file system (nfs4) sends no events for changes made elsewhere',
    });
    expect(log.lines.join('\n')).toContain(
      `Watching: polling ${x.root} every 0.2 s (longer if a pass takes over 1/20 of that): its file system (nfs4)`,
    );
    x.write('one/d.md', '# D\n\ndingo\n');
    await untilIndexed(ww, () => x.reader.search('dingo').length === 1, 'a polled note');
  });
});
