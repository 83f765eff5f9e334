/**
 * The watcher over a served reader, on real folders and a real index: what a person editing
 * notes while an agent searches them expects to find (docs/design.md §9).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type Served, served, untilIndexed } from './helpers.js';

let s: Served | undefined;
afterEach(async () => {
  await s?.close();
  s = undefined;
});

const hits = (x: Served, query: string) => x.reader.search(query).map((h) => h.file);

describe('the watcher keeps a served index fresh', () => {
  it('takes the writer place and follows the collection by events', async () => {
    s = await served({ 'a.md': '# A\n\nalpha\n', 'sub/b.md': '# B\n\nbravo\n' });
    await s.watcher.start();
    const report = s.watcher.report();
    expect(report.role).toBe('writer');
    expect(report.writerPid).toBe(process.pid);
    expect(report.collections).toEqual([expect.objectContaining({ collection: 'notes', via: 'events', folders: 2 })]);
  });

  it('indexes a note created, edited, saved atomically, renamed, moved and deleted', async () => {
    s = await served({ 'a.md': '# A\n\nalpha\n', 'sub/b.md': '# B\n\nbravo\n' });
    const x = s;
    await x.watcher.start();
    x.write('new.md', '# New\n\nzebrafish arrive\n');
    await untilIndexed(x.watcher, () => hits(x, 'zebrafish').includes('notes/new.md'), 'created note searchable');

    x.write('a.md', '# A\n\nalpha now speaks of quokkas\n');
    await untilIndexed(x.watcher, () => hits(x, 'quokkas').includes('notes/a.md'), 'edit searchable');

    // An editor's atomic save: the new text in a temporary file, renamed over the note.
    fs.writeFileSync(path.join(x.root, '.a.md.swp'), '# A\n\nalpha saved atomically with narwhals\n');
    fs.renameSync(path.join(x.root, '.a.md.swp'), path.join(x.root, 'a.md'));
    await untilIndexed(x.watcher, () => hits(x, 'narwhals').includes('notes/a.md'), 'atomic save searchable');
    expect(hits(x, 'quokkas')).toEqual([]);

    fs.renameSync(path.join(x.root, 'new.md'), path.join(x.root, 'renamed.md'));
    await untilIndexed(x.watcher, () => hits(x, 'zebrafish').join() === 'notes/renamed.md', 'rename followed');

    fs.mkdirSync(path.join(x.root, 'other'));
    fs.renameSync(path.join(x.root, 'sub/b.md'), path.join(x.root, 'other/b.md'));
    await untilIndexed(x.watcher, () => hits(x, 'bravo').join() === 'notes/other/b.md', 'move followed');

    fs.rmSync(path.join(x.root, 'renamed.md'));
    await untilIndexed(x.watcher, () => hits(x, 'zebrafish').length === 0, 'delete followed');
    expect(x.indexed()).toEqual(['a.md', 'other/b.md']);
    expect(x.indexed()).not.toContain('.a.md.swp');
    const pathsTold = x.changes.flatMap((c) => [...c.added, ...c.updated, ...c.removed]);
    expect(pathsTold).toEqual(expect.arrayContaining(['new.md', 'a.md', 'renamed.md', 'other/b.md', 'sub/b.md']));
  });

  it('watches a folder that appears, and forgets one removed or moved away', async () => {
    s = await served({ 'a.md': '# A\n\nalpha\n', 'old/c.md': '# C\n\ncharlie\n', 'old/deep/d.md': '# D\n\ndelta\n' });
    const x = s;
    await x.watcher.start();
    // mkdir -p and a note at once: the note may land before the folder's watch exists.
    x.write('fresh/deeper/e.md', '# E\n\nechidna\n');
    await untilIndexed(x.watcher, () => hits(x, 'echidna').join() === 'notes/fresh/deeper/e.md', 'new folder');
    x.write('fresh/deeper/f.md', '# F\n\nfoxtrot\n');
    await untilIndexed(x.watcher, () => hits(x, 'foxtrot').length === 1, 'a note in the new folder, later');

    fs.renameSync(path.join(x.root, 'old'), path.join(x.box.dir, 'moved-away'));
    await untilIndexed(x.watcher, () => !x.indexed().some((p) => p.startsWith('old/')), 'folder moved away');
    fs.rmSync(path.join(x.root, 'fresh'), { recursive: true });
    await untilIndexed(x.watcher, () => x.indexed().join() === 'a.md', 'folder removed');
    fs.renameSync(path.join(x.box.dir, 'moved-away'), path.join(x.root, 'back'));
    await untilIndexed(x.watcher, () => x.indexed().length === 3, 'folder moved in');
    expect(x.indexed()).toEqual(['a.md', 'back/c.md', 'back/deep/d.md']);
  });

  it('leaves out what the mask and the ignore rules leave out, as a scan does', async () => {
    s = await served({ 'a.md': '# A\n\nalpha\n' }, { ignore: ['archive/**'] });
    const x = s;
    await x.watcher.start();
    x.write('archive/old.md', '# Old\n\nmarmot\n');
    x.write('.obsidian/ws.md', '# Ws\n\nmarmot\n');
    x.write('node_modules/pkg/readme.md', '# R\n\nmarmot\n');
    x.write('notes.txt', 'marmot\n');
    x.write('kept.md', '# Kept\n\nmarmot kept\n');
    await untilIndexed(x.watcher, () => hits(x, 'marmot').length > 0, 'the note the rules keep');
    expect(hits(x, 'marmot')).toEqual(['notes/kept.md']);
    expect(x.watcher.report().collections[0]?.folders).toBe(2);
  });

  it('settles a burst of 1,000 writes to the right index, in a few batches', async () => {
    s = await served({ 'a.md': '# A\n\nalpha\n' });
    const x = s;
    await x.watcher.start();
    for (let i = 0; i < 1000; i++) x.write(`burst/n${i}.md`, `# N${i}\n\nburst note number${i}\n`);
    for (let i = 0; i < 1000; i += 2) x.write(`burst/n${i}.md`, `# N${i}\n\nrewritten number${i}\n`);
    for (let i = 0; i < 1000; i += 10) fs.rmSync(path.join(x.root, `burst/n${i}.md`));
    const expected = 1 + 1000 - 100;
    await untilIndexed(
      x.watcher,
      () => x.indexed().length === expected && x.watcher.report().pending === 0,
      'the burst settled',
      30_000,
    );
    expect(hits(x, 'number3')).toEqual(['notes/burst/n3.md']);
    expect(x.reader.get('notes/burst/n4.md').text).toContain('rewritten number4');
    expect(x.reader.get('notes/burst/n3.md').text).toContain('burst note number3');
    expect(x.indexed()).not.toContain('burst/n10.md');
    // Coalesced: far fewer batches than writes.
    expect(x.changes.length).toBeLessThan(200);
  }, 60_000);

  it('catches up at start what changed while nobody watched', async () => {
    s = await served({ 'a.md': '# A\n\nalpha\n', 'b.md': '# B\n\nbravo\n' });
    const x = s;
    x.write('a.md', '# A\n\nalpha changed offline to wombats\n');
    fs.rmSync(path.join(x.root, 'b.md'));
    x.write('c.md', '# C\n\ncassowary\n');
    await x.watcher.start();
    await untilIndexed(
      x.watcher,
      () => x.indexed().join() === 'a.md,c.md' && hits(x, 'wombats').length === 1,
      'caught up',
    );
  });

  it('never takes its own index for a note, even under a mask of everything in the same folder', async () => {
    s = await served({ 'a.md': '# A\n\nalpha\n' }, { mask: '**/*', indexIn: 'notes' });
    const x = s;
    await x.watcher.start();
    x.write('b.md', '# B\n\nbeluga\n');
    await untilIndexed(x.watcher, () => hits(x, 'beluga').length === 1, 'first note');
    const batches = x.changes.length;
    x.write('marker.md', '# M\n\nmarker\n');
    await untilIndexed(x.watcher, () => hits(x, 'marker').length === 1, 'marker note');
    // Had the index's own commits (index.sqlite-wal…) been taken for notes, each batch would
    // have brought another: the marker's batch would not be the only one since.
    expect(x.changes.length).toBe(batches + 1);
    expect(x.indexed()).toEqual(['a.md', 'b.md', 'marker.md']);
  });
});
