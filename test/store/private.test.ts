/**
 * The index is private by default (src/store/private.ts): made 0600 in a 0700 folder whatever
 * the umask, its -wal and -shm following; an existing one of this user open to others is
 * tightened with one line; one of another user is reported, never changed.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore } from '../../src/core/index.js';
import { privacyProblems, tightenIndex } from '../../src/store/private.js';
import { Sqlite } from '../../src/store/sqlite.js';
import { recordingLog } from '../support/recording-log.js';
import { type Sandbox, sandbox } from './helpers.js';

const mode = (file: string) => fs.statSync(file).mode & 0o777;

let box: Sandbox;
let umask: number;
beforeEach(() => {
  box = sandbox();
  // The usual umask of a person's shell: without our care, files would be 0644 and folders 0755.
  umask = process.umask(0o022);
});
afterEach(() => {
  process.umask(umask);
  box.cleanup();
});

describe('a new index', () => {
  it('is 0600 in a 0700 folder (parents made too), and SQLite gives -wal and -shm the same mode', async () => {
    const index = path.join(box.dir, 'deep', 'er', 'index.sqlite');
    const store = openStore(index);
    try {
      await store.addCollection(box.notes('notes', { 'a.md': '# A\n\nsecret sourdough\n' }), { name: 'notes' });
      expect(mode(index)).toBe(0o600);
      expect(mode(path.dirname(index))).toBe(0o700);
      expect(mode(path.join(box.dir, 'deep'))).toBe(0o700);
      // The connection is open: WAL's files are there.
      for (const beside of [`${index}-wal`, `${index}-shm`]) expect(mode(beside), beside).toBe(0o600);
    } finally {
      await store.close();
    }
  });

  it('even under a umask that takes the owner’s write bit away', async () => {
    process.umask(0o277);
    const store = openStore(box.index);
    try {
      expect(store.listCollections()).toEqual([]);
      expect(mode(box.index)).toBe(0o600);
    } finally {
      await store.close();
    }
  });
});

describe('an existing index open to others', () => {
  it('is tightened when opened, with one line naming what changed; a private one says nothing', async () => {
    const log = recordingLog();
    await openStore(box.index).close();
    fs.chmodSync(box.index, 0o644);
    const store = openStore(box.index, { readonly: true, log });
    try {
      expect(mode(box.index)).toBe(0o600);
      expect(log.lines).toEqual([
        `The index ${box.index} was open to other users; made it private (index.sqlite 644 → 600)`,
      ]);
      for (const beside of [`${box.index}-wal`, `${box.index}-shm`]) {
        if (fs.existsSync(beside)) expect(mode(beside), beside).toBe(0o600);
      }
    } finally {
      await store.close();
    }
    const again = recordingLog();
    await openStore(box.index, { readonly: true, log: again }).close();
    expect(again.lines).toEqual([]);
  });

  it('tightens a -wal left open to others, and qmd’s own cache folder, not a folder the user chose', () => {
    const cache = path.join(box.dir, 'xdg-cache');
    const ours = path.join(cache, 'qmd');
    fs.mkdirSync(ours, { recursive: true, mode: 0o755 });
    fs.chmodSync(ours, 0o755);
    const index = path.join(ours, 'index.sqlite');
    for (const file of [index, `${index}-wal`]) fs.writeFileSync(file, '', { mode: 0o644 });
    const log = recordingLog();
    tightenIndex(index, log, { XDG_CACHE_HOME: cache });
    expect(mode(index)).toBe(0o600);
    expect(mode(`${index}-wal`)).toBe(0o600);
    expect(mode(ours)).toBe(0o700);
    expect(log.lines).toEqual([
      `The index ${index} was open to other users; made it private (index.sqlite 644 → 600, index.sqlite-wal 644 → 600, its folder 755 → 700)`,
    ]);
    // A folder of the user's choosing keeps its mode: its files are what must be private.
    const chosen = path.join(box.dir, 'chosen');
    fs.mkdirSync(chosen, { mode: 0o755 });
    fs.writeFileSync(path.join(chosen, 'index.sqlite'), '', { mode: 0o644 });
    tightenIndex(path.join(chosen, 'index.sqlite'), recordingLog(), { XDG_CACHE_HOME: cache });
    expect(mode(chosen)).toBe(0o755);
    expect(mode(path.join(chosen, 'index.sqlite'))).toBe(0o600);
  });

  it('a file that proves not to be a qmd index (another program’s SQLite file) keeps its modes, and nothing is said', () => {
    const cache = path.join(box.dir, 'xdg-cache-2');
    fs.mkdirSync(cache, { recursive: true });
    const other = path.join(box.dir, 'other.sqlite');
    const db = new Sqlite(other);
    db.exec('CREATE TABLE documents (id INTEGER PRIMARY KEY, body TEXT)');
    db.close();
    fs.chmodSync(other, 0o644);
    const log = recordingLog();
    expect(() => openStore(other, { readonly: true, log })).toThrow(/not a qmd index|qmd 2\.x/);
    expect(mode(other)).toBe(0o644);
    expect(log.lines).toEqual([]);
  });

  it.skipIf(process.getuid?.() !== 0)(
    'of another user (needs root to chown): left as it is, and privacyProblems says whose it is',
    () => {
      const index = path.join(box.dir, 'theirs.sqlite');
      fs.writeFileSync(index, '', { mode: 0o644 });
      fs.chownSync(index, 65534, 65534);
      const log = recordingLog();
      tightenIndex(index, log);
      expect(mode(index)).toBe(0o644);
      expect(log.lines).toEqual([]);
      expect(privacyProblems(index)).toEqual([
        `${index} is open to other users (mode 644): it belongs to uid 65534: ask its owner to chmod 600 ${index}`,
      ]);
    },
  );

  it('privacyProblems: nothing for a private index; the chmod to run for one of ours', () => {
    fs.writeFileSync(box.index.replace('index/', ''), '', { mode: 0o600 });
    const index = box.index.replace('index/', '');
    expect(privacyProblems(index)).toEqual([]);
    fs.chmodSync(index, 0o640);
    expect(privacyProblems(index)).toEqual([`${index} is open to other users (mode 640): chmod 600 ${index}`]);
  });
});
