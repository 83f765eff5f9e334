/**
 * qmd 2.x's collection settings in our index (schema 6) and the store calls that use them:
 * ignore globs and comma masks in the scan, an update command, `includeByDefault` in every
 * search mode, a rename that carries documents, contexts and docids, `listDocuments` (`qmd ls`)
 * and `cleanup`. Real SQLite files.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/core/index.js';
import { splitMask } from '../../src/indexing/ignore.js';
import { Sqlite } from '../../src/store/sqlite.js';
import { expectQmdError, type Sandbox, sandbox } from './helpers.js';

let box: Sandbox;
let store: Store;
beforeEach(() => {
  box = sandbox();
  store = openStore(box.index);
});
afterEach(async () => {
  await store.close();
  box.cleanup();
});

const NOTES = {
  'a.md': '# A\n\nQuokka one.\n',
  'archive/old.md': '# Old\n\nQuokka archived.\n',
  'build/gen.md': '# Gen\n\nQuokka built.\n',
  'pages/p.md': '# P\n\nQuokka page.\n',
  'pages/deep/d.md': '# D\n\nQuokka deep.\n',
  'index.md': '# Index\n\nQuokka index.\n',
};

describe('the scan', () => {
  it('leaves out what ignore names, and takes the union of a comma-separated mask', async () => {
    const root = box.notes('notes', NOTES);
    await store.addCollection(root, { name: 'notes', ignore: ['archive/**', '**/build/**'] });
    expect(store.listDocuments('notes').map((d) => d.path)).toEqual([
      'a.md',
      'index.md',
      'pages/deep/d.md',
      'pages/p.md',
    ]);
    const wiki = box.notes('wiki', NOTES);
    await store.addCollection(wiki, { name: 'wiki', mask: 'pages/*.md,index.md' });
    expect(store.listDocuments('wiki').map((d) => d.path)).toEqual(['index.md', 'pages/p.md']);
    // An update keeps both rules: nothing comes back, nothing goes.
    expect(await store.update()).toMatchObject({ added: 0, removed: 0 });
  });

  it('splits a mask at commas outside braces and brackets', () => {
    expect(splitMask('**/*.md')).toEqual(['**/*.md']);
    expect(splitMask('sources/**/*.md, CO - *.md')).toEqual(['sources/**/*.md', 'CO - *.md']);
    expect(splitMask('{a,b}/*.md,[x,y].md')).toEqual(['{a,b}/*.md', '[x,y].md']);
    expect(splitMask('a.md,,')).toEqual(['a.md']);
  });

  it('refuses an ignore glob that climbs out of the folder', async () => {
    const root = box.notes('notes', NOTES);
    await expectQmdError(() => store.addCollection(root, { ignore: ['../x/**'] }), 'BAD_ARGUMENT');
  });
});

describe('settings', () => {
  it('are listed, set and cleared; an unknown collection is one error', async () => {
    const root = box.notes('notes', NOTES);
    await store.addCollection(root, { name: 'notes', update: 'git pull', includeByDefault: false });
    expect(store.listCollections()[0]).toMatchObject({ update: 'git pull', includeByDefault: false, ignore: [] });
    store.configureCollection('notes', { update: null, includeByDefault: true });
    expect(store.listCollections()[0]).toMatchObject({ includeByDefault: true });
    expect(store.listCollections()[0]?.update).toBeUndefined();
    store.configureCollection('notes', { update: '  echo hi  ' });
    expect(store.listCollections()[0]?.update).toBe('echo hi');
    await expectQmdError(() => store.configureCollection('nope', { includeByDefault: false }), 'UNKNOWN_COLLECTION');
  });

  it('an excluded collection is left out of a search that names none, and searched when named', async () => {
    await store.addCollection(box.notes('notes', { 'a.md': '# A\n\nQuokka.\n' }), { name: 'notes' });
    await store.addCollection(box.notes('archive', { 'b.md': '# B\n\nQuokka.\n' }), { name: 'archive' });
    expect(
      store
        .search('quokka')
        .map((h) => h.file)
        .sort(),
    ).toEqual(['archive/b.md', 'notes/a.md']);
    store.configureCollection('archive', { includeByDefault: false });
    expect(store.search('quokka').map((h) => h.file)).toEqual(['notes/a.md']);
    expect((await store.query('quokka')).hits.map((h) => h.file)).toEqual(['notes/a.md']);
    expect(store.search('quokka', { collections: ['archive'] }).map((h) => h.file)).toEqual(['archive/b.md']);
    store.configureCollection('notes', { includeByDefault: false });
    expect(store.search('quokka')).toEqual([]);
    expect((await store.query('quokka')).hits).toEqual([]);
  });
});

describe('renameCollection', () => {
  it('moves documents (same docids), contexts and the name; the old name is gone', async () => {
    const root = box.notes('notes', NOTES);
    await store.addCollection(root, { name: 'notes' });
    store.setContext('notes', 'My notes');
    store.setContext('notes/pages', 'Pages');
    const before = store.search('quokka', { limit: 20 }).map((h) => [h.path, h.docid]);
    store.renameCollection('notes', 'journal');
    expect(store.listCollections().map((c) => c.name)).toEqual(['journal']);
    const after = store.search('quokka', { limit: 20 });
    expect(after.map((h) => [h.path, h.docid])).toEqual(before);
    expect(after.every((h) => h.file.startsWith('journal/'))).toBe(true);
    expect(store.listContexts().map((c) => c.path)).toEqual(['journal', 'journal/pages']);
    expect(store.get('journal/a.md').text).toContain('Quokka one');
    await expectQmdError(() => store.get('notes/a.md'), 'NOT_FOUND');
    // The foreign keys held: the file checks clean.
    const db = new Sqlite(box.index, { readOnly: true });
    expect(db.prepare('PRAGMA foreign_key_check').all()).toEqual([]);
    db.close();
  });

  it('refuses a taken name, an unknown collection and an invalid name, changing nothing', async () => {
    await store.addCollection(box.notes('a', { 'a.md': '# A\n' }), { name: 'a' });
    await store.addCollection(box.notes('b', { 'b.md': '# B\n' }), { name: 'b' });
    await expectQmdError(() => store.renameCollection('a', 'b'), 'COLLECTION_EXISTS');
    await expectQmdError(() => store.renameCollection('nope', 'c'), 'UNKNOWN_COLLECTION');
    await expectQmdError(() => store.renameCollection('a', 'x/y'), 'BAD_ARGUMENT');
    expect(store.listCollections().map((c) => [c.name, c.documents])).toEqual([
      ['a', 1],
      ['b', 1],
    ]);
  });
});

describe('listDocuments', () => {
  it("lists a collection's documents, or those at or under a path by whole segments", async () => {
    await store.addCollection(box.notes('notes', NOTES), { name: 'notes' });
    expect(store.listDocuments('notes', 'pages').map((d) => d.file)).toEqual([
      'notes/pages/deep/d.md',
      'notes/pages/p.md',
    ]);
    expect(store.listDocuments('notes', 'pag')).toEqual([]);
    expect(store.listDocuments('notes', 'a.md').map((d) => d.path)).toEqual(['a.md']);
    const [entry] = store.listDocuments('notes', 'a.md');
    expect(entry).toMatchObject({
      docid: expect.stringMatching(/^#[0-9a-f]{8}$/),
      title: 'A',
      size: Buffer.byteLength(NOTES['a.md']),
    });
    expect(Date.parse(entry?.modified ?? '')).not.toBeNaN();
    await expectQmdError(() => store.listDocuments('nope'), 'UNKNOWN_COLLECTION');
    await expectQmdError(() => store.listDocuments('notes', '../x'), 'OUTSIDE_COLLECTIONS');
  });
});

describe('cleanup', () => {
  it('counts with dryRun and changes nothing; then removes orphaned content and compacts', async () => {
    await store.addCollection(box.notes('notes', NOTES), { name: 'notes' });
    // Content no document has: what a process killed between two steps could leave.
    const db = new Sqlite(box.index);
    db.exec("INSERT INTO content (hash, body) VALUES ('orphan', 'left behind')");
    db.close();
    expect(store.cleanup({ dryRun: true })).toMatchObject({ orphanedContent: 1, orphanedEmbeddings: 0 });
    expect(store.cleanup({ dryRun: true })).toMatchObject({ orphanedContent: 1 });
    const report = store.cleanup();
    expect(report).toMatchObject({ orphanedContent: 1 });
    expect(report.bytesAfter).toBeGreaterThan(0);
    expect(store.cleanup({ dryRun: true })).toMatchObject({ orphanedContent: 0 });
    expect(store.search('quokka', { limit: 20 })).toHaveLength(6);
  });

  it('is refused on a read-only store, unless a dry run', async () => {
    await store.addCollection(box.notes('notes', NOTES), { name: 'notes' });
    const reader = openStore(box.index, { readonly: true });
    try {
      await expectQmdError(() => reader.cleanup(), 'INDEX_READ_ONLY');
      expect(reader.cleanup({ dryRun: true }).orphanedContent).toBe(0);
    } finally {
      await reader.close();
    }
  });
});
