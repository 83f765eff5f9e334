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

describe('unit by unit', () => {
  it('a SIGKILL inside a unit leaves the units before it, not that one, and an intact index', async () => {
    const notes = path.join(box.dir, 'notes');
    fs.mkdirSync(notes);
    fs.writeFileSync(path.join(notes, 'keep.md'), '# Keep\n\noriginal words\n');
    fs.writeFileSync(path.join(notes, 'doomed.md'), '# Doomed\n\nabout to be deleted\n');
    const store = openStore(box.index);
    await store.addCollection(notes);
    await store.close();

    const corpus = generateCorpus(path.join(notes, 'new'), { files: 300, seed: 7 });
    const [rare] = corpus.rare.keys();
    // Large notes first in path order: the first unit is a batch cut at its byte bound.
    const block = `${'A paragraph of filler text with some numbers '.repeat(20)}\n`;
    for (let i = 0; i < 24; i++)
      fs.writeFileSync(path.join(notes, `big-${String(i).padStart(2, '0')}.md`), `# Big ${i}\n\n${block.repeat(800)}`);
    fs.writeFileSync(path.join(notes, 'keep.md'), '# Keep\n\nrewritten words\n');
    fs.rmSync(path.join(notes, 'doomed.md'));

    child = spawnProcess(process.execPath, ['--import', 'tsx', fixture, box.index], {
      cwd: repo,
      env: { ...process.env, QMD_FAILPOINTS: 'store.update.write=hang', SKIP_UNITS: '1' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    await child.waitForStderr('failpoint store.update.write: inside the write transaction');
    // The child holds the write lock: it is inside its second unit's transaction.
    const probe = new Sqlite(box.index, { timeoutMs: 0 });
    expect(() => probe.exec('BEGIN IMMEDIATE')).toThrow(/locked/);
    probe.close();
    child.kill();
    expect(await waitForExit(child)).toEqual({ code: null, signal: 'SIGKILL' });

    const raw = new Sqlite(box.index, { readOnly: true });
    let firstUnit: string[];
    try {
      expect(raw.pragmaValue('integrity_check')).toBe('ok');
      firstUnit = raw
        .prepare<[], { path: string }>("SELECT path FROM documents WHERE path LIKE 'big-%' ORDER BY path")
        .all()
        .map((row) => row.path);
      // Every document has its FTS row and its text: the unit was whole.
      expect(raw.value('SELECT count(*) FROM documents_fts')).toBe(firstUnit.length + 2);
      expect(raw.value('SELECT count(*) FROM documents d JOIN content c ON c.hash = d.hash')).toBe(
        firstUnit.length + 2,
      );
    } finally {
      raw.close();
    }
    // The first unit: the first large notes in path order, up to the batch's byte bound; not all.
    expect(firstUnit.length).toBeGreaterThan(0);
    expect(firstUnit.length).toBeLessThan(24);
    expect(firstUnit).toEqual(firstUnit.map((_, i) => `big-${String(i).padStart(2, '0')}.md`));
    const after = openStore(box.index);
    try {
      // The second unit and everything after it never happened: keep.md as it was, doomed.md still there.
      expect(after.status().documents).toBe(firstUnit.length + 2);
      expect(after.search(rare ?? 'missing')).toEqual([]);
      expect(after.get('notes/keep.md').text).toContain('original words');
      expect(after.get('notes/doomed.md').title).toBe('Doomed');
      // And the next update applies the rest.
      const report = await after.update();
      expect(report).toMatchObject({ added: 324 - firstUnit.length, updated: 1, removed: 1 });
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
