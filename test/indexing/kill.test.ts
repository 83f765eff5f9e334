import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore } from '../../src/core/index.js';
import { Sqlite } from '../../src/store/sqlite.js';
import { type Sandbox, sandbox } from '../store/helpers.js';
import { generateCorpus } from '../support/corpus.js';
import { type Spawned, spawnProcess, waitForExit } from '../support/spawn.js';

const fixture = path.join(import.meta.dirname, 'fixtures', 'update.ts');
const repo = path.resolve(import.meta.dirname, '..', '..');

let box: Sandbox;
let child: Spawned | undefined;

beforeEach(() => {
  box = sandbox();
});

afterEach(() => {
  child?.kill();
  box.cleanup();
});

describe('all or nothing', () => {
  it('a SIGKILL inside the update transaction leaves the previous index, intact', async () => {
    const notes = path.join(box.dir, 'notes');
    fs.mkdirSync(notes);
    fs.writeFileSync(path.join(notes, 'keep.md'), '# Keep\n\noriginal words\n');
    fs.writeFileSync(path.join(notes, 'doomed.md'), '# Doomed\n\nabout to be deleted\n');
    const store = openStore(box.index);
    await store.addCollection(notes);
    await store.close();

    const corpus = generateCorpus(path.join(notes, 'new'), { files: 300, seed: 7 });
    const [rare] = corpus.rare.keys();
    // More new text than the store's page cache holds (16 MB, spilled at 3871 pages),
    // so SQLite writes uncommitted pages into the WAL before COMMIT: the hard case.
    const block = `${'A paragraph of filler text with some numbers '.repeat(20)}\n`;
    for (let i = 0; i < 24; i++)
      fs.writeFileSync(path.join(notes, `big-${i}.md`), `# Big ${i}\n\n${block.repeat(800)}`);
    fs.writeFileSync(path.join(notes, 'keep.md'), '# Keep\n\nrewritten words\n');
    fs.rmSync(path.join(notes, 'doomed.md'));

    child = spawnProcess(process.execPath, ['--import', 'tsx', fixture, box.index], {
      cwd: repo,
      env: { ...process.env, QMD_FAILPOINTS: 'store.update.write=hang' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    await child.waitForStderr('failpoint store.update.write: inside the write transaction');
    // The child holds the write lock: it is inside its transaction.
    const probe = new Sqlite(box.index, { timeoutMs: 0 });
    expect(() => probe.exec('BEGIN IMMEDIATE')).toThrow(/locked/);
    probe.close();
    child.kill();
    expect(await waitForExit(child)).toEqual({ code: null, signal: 'SIGKILL' });
    // The kill left uncommitted frames on disk, which the next open must ignore.
    expect(fs.statSync(`${box.index}-wal`).size).toBeGreaterThan(0);

    const raw = new Sqlite(box.index, { readOnly: true });
    expect(raw.pragmaValue('integrity_check')).toBe('ok');
    raw.close();
    const after = openStore(box.index);
    try {
      expect(after.status().documents).toBe(2);
      expect(after.search(rare ?? 'missing')).toEqual([]);
      expect(after.get('notes/keep.md').text).toContain('original words');
      expect(after.get('notes/doomed.md').title).toBe('Doomed');
      // And the next update applies everything.
      const report = await after.update();
      expect(report).toMatchObject({ added: 324, updated: 1, removed: 1 });
      expect(after.search(rare ?? 'missing').length).toBeGreaterThan(0);
    } finally {
      await after.close();
    }
  });

  it('an update in a child process writes nothing to stdout', async () => {
    const notes = box.notes('notes', { 'a.md': '# A\n\nalpha\n' });
    const store = openStore(box.index);
    await store.addCollection(notes);
    await store.close();
    box.notes('notes', { 'b.md': '# B\n\nbravo\n' });
    child = spawnProcess(process.execPath, ['--import', 'tsx', fixture, box.index], {
      cwd: repo,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    await child.waitForStderr('updated:');
    await waitForExit(child);
    await child.closed;
    expect(child.stdout()).toBe('');
    expect(child.stderr()).toContain('"added":1');
  });
});
