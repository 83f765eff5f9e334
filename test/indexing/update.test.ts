import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/core/index.js';
import { FailpointError, parseFailpoints } from '../../src/failpoints.js';
import { expectQmdError, type Sandbox, sandbox } from '../store/helpers.js';

let box: Sandbox;
let store: Store;
let root: string;

beforeEach(async () => {
  box = sandbox();
  store = openStore(box.index);
  root = box.notes('notes', {
    'a.md': '# A\n\nalpha apple\n',
    'b.md': '# B\n\nbravo banana\n',
    'c.md': '# C\n\ncharlie cherry\n',
  });
  await store.addCollection(root);
});

afterEach(async () => {
  await store.close();
  box.cleanup();
});

const files = (query: string): string[] => store.search(query).map((hit) => hit.file);

describe('update', () => {
  it('reports nothing to do when nothing changed', async () => {
    const report = await store.update();
    expect(report).toMatchObject({ collections: 1, scanned: 3, added: 0, updated: 0, removed: 0, unchanged: 3 });
    expect(report.errors).toEqual([]);
  });

  it('adds, re-indexes and removes exactly what changed', async () => {
    fs.writeFileSync(path.join(root, 'b.md'), '# B\n\nbravo blueberry, now longer\n');
    fs.rmSync(path.join(root, 'c.md'));
    fs.writeFileSync(path.join(root, 'd.md'), '# D\n\ndelta date\n');
    const report = await store.update();
    expect(report).toMatchObject({ scanned: 3, added: 1, updated: 1, removed: 1, unchanged: 1, errors: [] });

    expect(files('date')).toEqual(['notes/d.md']);
    expect(files('blueberry')).toEqual(['notes/b.md']);
    expect(files('banana')).toEqual([]);
    expect(files('cherry')).toEqual([]);
    expect(store.get('notes/b.md').text).toContain('blueberry');
    await expectQmdError(() => store.get('notes/c.md'), 'NOT_FOUND');
    expect(store.listCollections()[0]?.documents).toBe(3);
  });

  it('removes a vanished file from its own collection only, when another has the same path', async () => {
    const other = box.notes('other', { 'a.md': '# A2\n\nalpha apricot\n', 'b.md': '# B2\n\nbravo basil\n' });
    await store.addCollection(other);
    fs.rmSync(path.join(other, 'a.md'));
    fs.rmSync(path.join(root, 'b.md'));
    const report = await store.update();
    expect(report).toMatchObject({ collections: 2, scanned: 3, removed: 2, unchanged: 3 });
    expect(files('apple')).toEqual(['notes/a.md']);
    expect(files('apricot')).toEqual([]);
    expect(files('basil')).toEqual(['other/b.md']);
    expect(files('banana')).toEqual([]);
    // A second update finds nothing more to remove.
    expect(await store.update()).toMatchObject({ scanned: 3, removed: 0, unchanged: 3 });
  });

  it('skips files whose mtime and size did not change, without reading them', async () => {
    // A whole-second mtime, so it can be put back exactly (mtimeMs carries nanoseconds).
    const file = path.join(root, 'a.md');
    const second = Math.floor(Date.now() / 1000) - 60;
    fs.utimesSync(file, second, second);
    await store.update();
    // Same length, mtime put back: only reading the file would notice.
    fs.writeFileSync(file, '# A\n\nalpha apric\n');
    fs.utimesSync(file, second, second);
    const report = await store.update();
    expect(report).toMatchObject({ updated: 0, unchanged: 3 });
    expect(files('apple')).toEqual(['notes/a.md']);
    expect(files('apric')).toEqual([]);
  });

  it('counts a touched file whose content did not change as unchanged (by hash)', async () => {
    const later = new Date(Date.now() + 60_000);
    fs.utimesSync(path.join(root, 'a.md'), later, later);
    const report = await store.update();
    expect(report).toMatchObject({ added: 0, updated: 0, unchanged: 3 });
    // The new mtime was recorded: the next scan skips it by stat again.
    fs.writeFileSync(path.join(root, 'a.md'), '# A\n\nalpha avocado\n');
    fs.utimesSync(path.join(root, 'a.md'), later, later);
    expect((await store.update()).updated).toBe(1);
  });

  it('rolls back the unit whose write transaction fails, and stops there', async () => {
    const failing = openStore(box.index, { failpoints: parseFailpoints('store.update.write=throw') });
    try {
      fs.writeFileSync(path.join(root, 'd.md'), 'delta date\n');
      fs.rmSync(path.join(root, 'a.md'));
      await expect(failing.update()).rejects.toBeInstanceOf(FailpointError);
    } finally {
      await failing.close();
    }
    expect(files('date')).toEqual([]);
    expect(files('apple')).toEqual(['notes/a.md']);
    expect(store.status().documents).toBe(3);
    expect(await store.update()).toMatchObject({ added: 1, removed: 1 });
  });

  it('does nothing when its signal has already fired', async () => {
    fs.writeFileSync(path.join(root, 'd.md'), 'delta date\n');
    await expectQmdError(() => store.update({ signal: AbortSignal.abort() }), 'ABORTED');
    expect(files('date')).toEqual([]);
  });

  it('reports progress per collection, ending at done = total once the last batch is written', async () => {
    box.notes('notes', { 'd.md': 'delta\n' });
    const seen: Array<[string, number, number, string[]]> = [];
    await store.update({ onProgress: (p) => seen.push([p.stage, p.done, p.total, files('delta')]) });
    expect(seen[0]?.slice(0, 3)).toEqual(['listing', 0, 0]);
    const reading = seen.filter(([stage]) => stage === 'reading');
    expect(reading[0]?.slice(0, 3)).toEqual(['reading', 0, 4]);
    // Each batch is committed before its files count as done: d.md is searchable at 4 of 4.
    expect(reading.at(-1)).toEqual(['reading', 4, 4, ['notes/d.md']]);
    expect(seen.at(-1)).toEqual(reading.at(-1));
  });

  it('keeps a collection whose root vanished, and says why', async () => {
    const other = box.notes('other', { 'x.md': 'xray\n' });
    await store.addCollection(other);
    fs.rmSync(other, { recursive: true });
    const report = await store.update();
    expect(report.errors).toHaveLength(1);
    expect(report.errors[0]?.error).toContain('other');
    expect(files('xray')).toEqual(['other/x.md']);
  });

  it('never follows a symlink out of the root', async () => {
    const outside = box.notes('outside', { 'secret.md': 'classified material\n', 'deep/more.md': 'classified too\n' });
    fs.symlinkSync(path.join(outside, 'secret.md'), path.join(root, 'link.md'));
    fs.symlinkSync(outside, path.join(root, 'linkdir'));
    const report = await store.update();
    expect(report.added).toBe(0);
    expect(files('classified')).toEqual([]);
    await expectQmdError(() => store.get('notes/link.md'), 'NOT_FOUND');
    await expectQmdError(() => store.get('notes/linkdir/secret.md'), 'NOT_FOUND');

    const linked = box.dir;
    const fresh = box.notes('fresh', { 'own.md': 'own words\n' });
    fs.symlinkSync(path.join(linked, 'outside'), path.join(fresh, 'escape'));
    expect((await store.addCollection(fresh)).added).toBe(1);
    expect(files('classified')).toEqual([]);
  });

  it('does not hang on a FIFO named like a note', async () => {
    // Reading a FIFO blocks until a writer comes; the scan lists regular files only.
    execFileSync('mkfifo', [path.join(root, 'pipe.md')]);
    const report = await store.update();
    expect(report).toMatchObject({ scanned: 3, unchanged: 3, errors: [] });
  });

  it('reports a file too large to be a note and does not index it', async () => {
    const big = path.join(root, 'big.md');
    fs.writeFileSync(big, '');
    fs.truncateSync(big, 10 * 1024 * 1024 + 1); // sparse: costs no disk
    const report = await store.update();
    expect(report).toMatchObject({ scanned: 4, added: 0, unchanged: 3 });
    expect(report.errors).toEqual([
      { file: path.join(fs.realpathSync(root), 'big.md'), error: expect.stringContaining('larger than') },
    ]);
    await expectQmdError(() => store.get('notes/big.md'), 'NOT_FOUND');
  });

  it('reports an unreadable file and keeps its indexed version (non-root only: root reads anything)', async (context) => {
    if (process.getuid?.() === 0) context.skip();
    fs.writeFileSync(path.join(root, 'a.md'), '# A\n\nalpha changed\n');
    fs.chmodSync(path.join(root, 'a.md'), 0o000);
    try {
      const report = await store.update();
      expect(report.errors[0]?.error).toContain('EACCES');
      expect(files('apple')).toEqual(['notes/a.md']);
    } finally {
      fs.chmodSync(path.join(root, 'a.md'), 0o644);
    }
  });

  it('shares text between identical files and drops it when the last one goes', async () => {
    fs.writeFileSync(path.join(root, 'a-copy.md'), '# A\n\nalpha apple\n');
    await store.update();
    expect(files('apple').sort()).toEqual(['notes/a-copy.md', 'notes/a.md']);
    fs.rmSync(path.join(root, 'a.md'));
    await store.update();
    expect(store.get('notes/a-copy.md').text).toBe('# A\n\nalpha apple\n');
    expect(files('apple')).toEqual(['notes/a-copy.md']);
  });
});

describe('a collection larger than one page of staged files (indexing.ts reads 256 at a time, then writes them)', () => {
  it('adds all 600, then updates exactly the 300 changed and keeps the 150 only touched', async () => {
    const notes: Record<string, string> = {};
    for (let i = 0; i < 600; i++) notes[`n${String(i).padStart(3, '0')}.md`] = `# Note ${i}\n\nword${i} plain\n`;
    const big = box.notes('big', notes);
    const added = await store.addCollection(big, { name: 'big' });
    expect(added).toMatchObject({ added: 600, errors: [] });
    expect(store.listCollections().find((c) => c.name === 'big')?.documents).toBe(600);
    for (let i = 0; i < 600; i += 2)
      fs.writeFileSync(path.join(big, `n${String(i).padStart(3, '0')}.md`), `# Note ${i}\n\nchanged${i}\n`);
    // Touched, same text: read again (the stat changed), found unchanged by its hash.
    const later = new Date(Date.now() + 60_000);
    for (let i = 1; i < 600; i += 4) fs.utimesSync(path.join(big, `n${String(i).padStart(3, '0')}.md`), later, later);
    const report = await store.update();
    expect(report).toMatchObject({ added: 0, updated: 300, removed: 0, errors: [] });
    expect(report.unchanged).toBe(3 + 300);
    expect(files('changed598')).toEqual(['big/n598.md']);
    expect(files('word598')).toEqual([]);
    expect(files('word599')).toEqual(['big/n599.md']);
    expect(store.listCollections().find((c) => c.name === 'big')?.documents).toBe(600);
  });
});
