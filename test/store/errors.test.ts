import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore } from '../../src/core/index.js';
import { Sqlite } from '../../src/store/sqlite.js';
import { expectQmdError, type Sandbox, sandbox } from './helpers.js';

let box: Sandbox;
let root: string;

beforeEach(() => {
  box = sandbox();
  root = box.notes('notes', { 'a.md': '# A\n\nalpha\n' });
});

afterEach(() => {
  box.cleanup();
});

/**
 * Makes paths unwritable. chmod does not stop root, so as root they are made immutable
 * (chattr +i, which root obeys too); where that flag is unsupported the caller skips.
 */
function protect(paths: string[], on: boolean): void {
  if (process.getuid?.() === 0) {
    execFileSync('chattr', [on ? '+i' : '-i', ...paths], { stdio: 'ignore' });
    return;
  }
  for (const target of paths) {
    const directory = fs.statSync(target).isDirectory();
    fs.chmodSync(target, on ? (directory ? 0o555 : 0o444) : directory ? 0o755 : 0o644);
  }
}

async function buildIndex(): Promise<void> {
  const store = openStore(box.index);
  await store.addCollection(root);
  await store.close();
}

describe('INDEX_LOCKED', () => {
  it('when another process holds the write lock past the busy timeout; reads still work', async () => {
    await buildIndex();
    const other = new Sqlite(box.index);
    other.exec('BEGIN IMMEDIATE');
    // Opening needs no lock: a server starting during an update must come up.
    const store = openStore(box.index, { busyTimeoutMs: 20 });
    try {
      const more = box.notes('more', { 'b.md': 'bravo\n' });
      const error = await expectQmdError(() => store.addCollection(more), 'INDEX_LOCKED');
      expect(error.message).toContain('20 ms');
      await expectQmdError(() => store.update(), 'INDEX_LOCKED');
      await expectQmdError(() => store.removeCollection('notes'), 'INDEX_LOCKED');
      expect(store.search('alpha')).toHaveLength(1);
      other.exec('ROLLBACK');
      expect((await store.addCollection(more)).added).toBe(1);
    } finally {
      if (other.inTransaction) other.exec('ROLLBACK');
      other.close();
      await store.close();
    }
  });
});

describe('INDEX_CORRUPT', () => {
  it('for a file that is not a SQLite database', async () => {
    fs.mkdirSync(path.dirname(box.index), { recursive: true });
    fs.writeFileSync(box.index, 'this is a markdown note, not a database\n'.repeat(200));
    await expectQmdError(() => openStore(box.index), 'INDEX_CORRUPT');
    await expectQmdError(() => openStore(box.index, { readonly: true }), 'INDEX_CORRUPT');
  });

  it('for another program’s SQLite database, which is left untouched', async () => {
    fs.mkdirSync(path.dirname(box.index), { recursive: true });
    const foreign = new Sqlite(box.index);
    foreign.exec('CREATE TABLE contacts (name TEXT)');
    foreign.close();
    const error = await expectQmdError(() => openStore(box.index), 'INDEX_CORRUPT');
    expect(error.message).toContain('not a qmd index');
    const check = new Sqlite(box.index, { readOnly: true });
    expect(check.column("SELECT name FROM sqlite_schema WHERE type = 'table'").all()).toEqual(['contacts']);
    check.close();
  });

  it('for damaged pages, found by quick_check on a read-write open', async () => {
    const many: Record<string, string> = {};
    for (let i = 0; i < 200; i++) many[`n${i}.md`] = `# Note ${i}\n\n${'words and more words '.repeat(40)}${i}\n`;
    root = box.notes('many', many);
    await buildIndex();
    // Overwrite the second half of the file, leaving the header and schema page intact.
    const size = fs.statSync(box.index).size;
    const fd = fs.openSync(box.index, 'r+');
    fs.writeSync(
      fd,
      Buffer.alloc(Math.floor(size / 2), 0x5a),
      0,
      Math.floor(size / 2),
      Math.ceil(size / 2 / 4096) * 4096,
    );
    fs.closeSync(fd);
    await expectQmdError(() => openStore(box.index), 'INDEX_CORRUPT');
    await expectQmdError(() => openStore(box.index, { readonly: true, quickCheck: true }), 'INDEX_CORRUPT');
  });
});

describe('INDEX_READ_ONLY', () => {
  it('for a location that cannot hold a file (its parent is a regular file)', async () => {
    const file = path.join(box.dir, 'plain-file');
    fs.writeFileSync(file, 'x');
    await expectQmdError(() => openStore(path.join(file, 'index.sqlite')), 'INDEX_READ_ONLY');
    await expectQmdError(() => openStore(path.join(file, 'deeper', 'index.sqlite')), 'INDEX_READ_ONLY');
  });

  it('for an existing index that cannot be written, which still opens read-only', async (context) => {
    await buildIndex();
    const dir = path.dirname(box.index);
    try {
      protect([box.index], true);
    } catch {
      context.skip();
    }
    try {
      expect(() => fs.appendFileSync(box.index, 'x')).toThrow();
      await expectQmdError(() => openStore(box.index), 'INDEX_READ_ONLY');
      const reader = openStore(box.index, { readonly: true });
      expect(reader.search('alpha')).toHaveLength(1);
      await reader.close();
      // With the directory read-only too, SQLite cannot create the -shm a WAL reader needs.
      fs.rmSync(`${box.index}-shm`, { force: true });
      fs.rmSync(`${box.index}-wal`, { force: true });
      protect([dir], true);
      const error = await expectQmdError(() => openStore(box.index, { readonly: true }), 'INDEX_READ_ONLY');
      expect(error.message).toContain('-shm');
    } finally {
      protect([box.index, dir], false);
    }
  });

  it('on a read-only filesystem, where Linux has one (/sys refuses new files, even to root)', async (context) => {
    const target = '/sys/qmd-test-index/index.sqlite';
    if (!fs.existsSync('/sys/kernel')) context.skip();
    await expectQmdError(() => openStore(target), 'INDEX_READ_ONLY');
  });
});
