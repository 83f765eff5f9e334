import * as fs from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore } from '../../src/core/index.js';
import { openReader } from '../../src/core/open.js';
import { silentLog } from '../../src/log.js';
import { closeDatabase, openDatabase } from '../../src/store/database.js';
import { CATALOGUE, checkCatalogue, checkOnOpen, isFileDamage, quickCheck } from '../../src/store/integrity.js';
import { damagePage, pagesOf } from '../support/damage.js';
import { expectQmdError, type Sandbox, sandbox } from './helpers.js';

let box: Sandbox;

beforeEach(async () => {
  box = sandbox();
  const notes: Record<string, string> = {};
  for (let i = 0; i < 60; i++) notes[`n${i}.md`] = `# Note ${i}\n\n${'checkpoint words '.repeat(60)}${i}\n`;
  const root = box.notes('notes', notes);
  const writer = openStore(box.index);
  await writer.addCollection(root, { name: 'notes' });
  await writer.close();
});

afterEach(() => box.cleanup());

/** The index opened with no check, for `work` to check; closed after. */
function withDatabase(work: (db: ReturnType<typeof openDatabase>['db']) => void): void {
  const opened = openDatabase(box.index, { readonly: true, busyTimeoutMs: 2000, quickCheck: false });
  try {
    work(opened.db);
  } finally {
    closeDatabase(opened, silentLog);
  }
}

describe('what each check reads, and what it misses', () => {
  it('a page of the notes’ text: the whole-file check finds it, the catalogue does not (a read that meets it does)', async () => {
    const pages = pagesOf(box.index, 'content');
    damagePage(box.index, pages[Math.floor(pages.length / 2)]!, 'random');
    withDatabase((db) => {
      expect(() => checkCatalogue(db, box.index)).not.toThrow();
      let caught: unknown;
      try {
        quickCheck(db, box.index);
      } catch (error) {
        caught = error;
      }
      expect(isFileDamage(caught), String(caught)).toBe(true);
      expect((caught as Error).message).toMatch(
        /^The index .*index\.sqlite is damaged \(quick_check: .+\); move it away and add the collections again/,
      );
    });
  });

  it('a leaf of `documents`: the catalogue finds it, each table checked on its own (quick_check(TABLE))', () => {
    const leaves = pagesOf(box.index, 'documents');
    damagePage(box.index, leaves[leaves.length - 1]!, 'random');
    withDatabase((db) => {
      expect(CATALOGUE).toContain('documents');
      expect(() => checkCatalogue(db, box.index)).toThrow(/is damaged \(quick_check: .*Tree \d+ page/);
    });
  });

  it('a freelist leaf pointing at a page in use: only the whole-file check finds it (a partial check walks no freelist)', () => {
    // Free some pages, then point the first freelist trunk's first leaf at page 2 (in use).
    const opened = openDatabase(box.index, { readonly: false, busyTimeoutMs: 2000, quickCheck: false });
    opened.db.exec("DELETE FROM documents WHERE path > 'n3'");
    opened.db.exec('DELETE FROM content WHERE hash NOT IN (SELECT hash FROM documents)');
    expect(opened.db.pragmaValue<number>('freelist_count')).toBeGreaterThan(0);
    closeDatabase(opened, silentLog);
    const header = Buffer.alloc(100);
    const fd = fs.openSync(box.index, 'r+');
    fs.readSync(fd, header, 0, 100, 0);
    const trunk = header.readUInt32BE(32);
    const leaf = Buffer.alloc(4);
    leaf.writeUInt32BE(2);
    fs.writeSync(fd, leaf, 0, 4, (trunk - 1) * 4096 + 8);
    fs.closeSync(fd);
    withDatabase((check) => {
      expect(() => checkCatalogue(check, box.index)).not.toThrow();
      // Not even the schema's own b-tree, whose root is page 1, makes SQLite walk the freelist.
      expect(check.pragmaValue<string>('quick_check(sqlite_schema)')).toBe('ok');
      expect(() => quickCheck(check, box.index)).toThrow(/2nd reference to page 2/);
    });
  });

  it('checkOnOpen: false reads nothing; a small file is read whole by `small` and `catalogue` alike', () => {
    const pages = pagesOf(box.index, 'content');
    damagePage(box.index, pages[1]!, 'random');
    withDatabase((db) => {
      expect(() => checkOnOpen(db, box.index, false)).not.toThrow();
      for (const scope of ['small', 'catalogue', true] as const) {
        expect(() => checkOnOpen(db, box.index, scope), String(scope)).toThrow(/quick_check/);
      }
    });
  });

  it('checkOnOpen past the small bound: `catalogue` reads the catalogue alone, `small` nothing', () => {
    const leaves = pagesOf(box.index, 'documents');
    damagePage(box.index, leaves[leaves.length - 1]!, 'random');
    withDatabase((db) => {
      // Every file is large with a bound of 0 bytes.
      expect(() => checkOnOpen(db, box.index, 'small', 0)).not.toThrow();
      expect(() => checkOnOpen(db, box.index, 'catalogue', 0)).toThrow(/is damaged \(quick_check: .*Tree \d+ page/);
      expect(() => checkOnOpen(db, box.index, true, 0)).toThrow(/quick_check/);
    });
  });

  it('checkOnOpen past the small bound: the notes’ text is not the catalogue’s (the read that meets it says so)', () => {
    const pages = pagesOf(box.index, 'content');
    damagePage(box.index, pages[1]!, 'random');
    withDatabase((db) => {
      expect(() => checkOnOpen(db, box.index, 'catalogue', 0)).not.toThrow();
      expect(() => checkOnOpen(db, box.index, true, 0)).toThrow(/quick_check/);
    });
  });

  it('a writer refuses a damaged catalogue before writing; a reader opens with no check and meets it in a read', async () => {
    const leaves = pagesOf(box.index, 'documents');
    damagePage(box.index, leaves[0]!, 'random');
    await expectQmdError(() => openStore(box.index, { quickCheck: 'catalogue' }), 'INDEX_CORRUPT');
    const reader = openReader(box.index, { readonly: true, quickCheck: false, queryWorker: false });
    try {
      const error = await expectQmdError(() => reader.listDocuments('notes'), 'INDEX_CORRUPT');
      expect(isFileDamage(error)).toBe(true);
      await expectQmdError(() => reader.verify(), 'INDEX_CORRUPT');
    } finally {
      await reader.close();
    }
  });
});
