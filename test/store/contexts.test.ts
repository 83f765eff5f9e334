/**
 * Contexts on a real index file: what PATH forms name, what each hit carries,
 * the migration that adds the table, and two handles on one index seeing each other's changes.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/core/index.js';
import { latestVersion } from '../../src/store/schema/schema.js';
import { Sqlite } from '../../src/store/sqlite.js';
import { expectQmdError, type Sandbox, sandbox } from './helpers.js';
import { downgradeToVersion3 } from './schema-v3.js';

let box: Sandbox;
let notes: string;
let store: Store;

beforeEach(async () => {
  box = sandbox();
  notes = box.notes('notes', {
    'talks/2024/keynote.md': '# Keynote\n\nOpening remarks about sourdough.\n',
    'talkshow/episode.md': '# Episode\n\nA sourdough episode.\n',
    'meetings/weekly.md': '# Weekly\n\nSourdough budget review.\n',
    'top.md': '# Top\n\nSourdough at the top.\n',
  });
  box.notes('journal', { 'day.md': '# Day\n\nBaked sourdough.\n' });
  store = openStore(box.index);
  await store.addCollection(notes, { name: 'notes' });
  await store.addCollection(path.join(box.dir, 'journal'), { name: 'journal' });
});

afterEach(async () => {
  await store.close();
  box.cleanup();
});

const contextOf = (file: string): string | undefined =>
  store.search('sourdough', { limit: 20 }).find((hit) => hit.file === file)?.context;

describe('PATH forms', () => {
  it.each([
    ['/', { path: '/', collection: null, prefix: '' }],
    ['notes', { path: 'notes', collection: 'notes', prefix: '' }],
    ['notes/talks', { path: 'notes/talks', collection: 'notes', prefix: 'talks' }],
    ['notes/talks/2024/', { path: 'notes/talks/2024', collection: 'notes', prefix: 'talks/2024' }],
    ['qmd://notes/', { path: 'notes', collection: 'notes', prefix: '' }],
    ['qmd://notes/talks%20x', { path: 'notes/talks x', collection: 'notes', prefix: 'talks x' }],
    ['notes/not-there-yet', { path: 'notes/not-there-yet', collection: 'notes', prefix: 'not-there-yet' }],
  ])('%s names %o', (typed, expected) => {
    const { context, replaced } = store.setContext(typed, 'some words');
    expect(context).toMatchObject({ ...expected, text: 'some words' });
    expect(replaced).toBe(false);
    expect(store.listContexts()).toEqual([context]);
  });

  it('reads a folder on disk inside a collection: absolute, ./ from cwd, ~-free relative, a single note', () => {
    expect(store.setContext(path.join(notes, 'talks'), 'a').context.path).toBe('notes/talks');
    expect(store.setContext('./2024', 'b', { cwd: path.join(notes, 'talks') }).context.path).toBe('notes/talks/2024');
    expect(store.setContext('.', 'c', { cwd: path.join(box.dir, 'journal') }).context.path).toBe('journal');
    // No collection is called "meetings": the folder under cwd is meant, as qmd 2.8 reads it.
    expect(store.setContext('meetings', 'd', { cwd: notes }).context.path).toBe('notes/meetings');
    expect(store.setContext(path.join(notes, 'top.md'), 'e').context.path).toBe('notes/top.md');
    expect(store.listContexts().map((c) => c.path)).toEqual([
      'journal',
      'notes/meetings',
      'notes/talks',
      'notes/talks/2024',
      'notes/top.md',
    ]);
  });

  it('a symlinked folder is read where it really is', () => {
    const link = path.join(box.dir, 'link-to-talks');
    fs.symlinkSync(path.join(notes, 'talks'), link);
    expect(store.setContext(link, 'x').context.path).toBe('notes/talks');
  });

  it('replaces the text of a place that has one, and says so', () => {
    store.setContext('notes/talks', 'old');
    const again = store.setContext('qmd://notes/talks', '  new  ');
    expect(again).toMatchObject({ replaced: true, context: { path: 'notes/talks', text: 'new' } });
    expect(store.listContexts()).toHaveLength(1);
  });

  it.each([
    ['nope/dir', 'UNKNOWN_COLLECTION', /No collection named "nope".*known: journal, notes/],
    ['qmd://nope/x', 'UNKNOWN_COLLECTION', /No collection named "nope"/],
    ['notes/../journal', 'BAD_ARGUMENT', /may not contain ".."/],
    ['/definitely/not/here', 'NO_SUCH_DIRECTORY', /No such folder or file/],
    ['', 'BAD_ARGUMENT', /needs a PATH/],
  ] as const)('refuses %s with %s', async (typed, code, message) => {
    const error = await expectQmdError(() => store.setContext(typed, 'x'), code);
    expect(error.message).toMatch(message);
    expect(store.listContexts()).toEqual([]);
  });

  it('refuses a folder outside every collection, naming the collections', async () => {
    const error = await expectQmdError(() => store.setContext(box.dir, 'x'), 'OUTSIDE_COLLECTIONS');
    expect(error.message).toContain(`notes (${fs.realpathSync(notes)})`);
  });

  it('refuses blank and oversized text', async () => {
    await expectQmdError(() => store.setContext('notes', '   '), 'BAD_ARGUMENT');
    await expectQmdError(() => store.setContext('notes', 'x'.repeat(2_001)), 'BAD_ARGUMENT');
    expect(store.listContexts()).toEqual([]);
  });
});

describe('removing', () => {
  it('removes by any form that names the same place; a place without one is NOT_FOUND', async () => {
    store.setContext('notes/talks', 'x');
    store.setContext('/', 'everything');
    expect(store.removeContext(path.join(notes, 'talks'))).toMatchObject({ path: 'notes/talks', text: 'x' });
    expect(store.listContexts().map((c) => c.path)).toEqual(['/']);
    const error = await expectQmdError(() => store.removeContext('notes/talks'), 'NOT_FOUND');
    expect(error.message).toBe('No context for notes/talks; contexts: /');
  });

  it('goes with its collection', () => {
    store.setContext('journal', 'a diary');
    store.setContext('notes', 'notes');
    store.removeCollection('journal');
    expect(store.listContexts().map((c) => c.path)).toEqual(['notes']);
  });

  it('a read-only handle changes nothing', async () => {
    const reader = openStore(box.index, { readonly: true });
    try {
      await expectQmdError(() => reader.setContext('notes', 'x'), 'INDEX_READ_ONLY');
      await expectQmdError(() => reader.removeContext('notes'), 'INDEX_READ_ONLY');
    } finally {
      await reader.close();
    }
  });
});

describe('contexts on results', () => {
  it('joins the contexts covering a note, widest first: global, collection, folders', () => {
    store.setContext('notes/talks/2024', 'The 2024 talks.');
    store.setContext('/', 'My notes.');
    store.setContext('notes/talks', 'Talks I gave.');
    store.setContext('notes', 'Work notes.');
    expect(contextOf('notes/talks/2024/keynote.md')).toBe(
      'My notes.\n\nWork notes.\n\nTalks I gave.\n\nThe 2024 talks.',
    );
    expect(contextOf('journal/day.md')).toBe('My notes.');
  });

  it('covers whole path segments: talks is not talkshow', () => {
    store.setContext('notes/talks', 'Talks I gave.');
    expect(contextOf('notes/talks/2024/keynote.md')).toBe('Talks I gave.');
    expect(contextOf('notes/talkshow/episode.md')).toBeUndefined();
    expect(contextOf('journal/day.md')).toBeUndefined();
  });

  it('a context on one note covers that note only', () => {
    store.setContext('notes/top.md', 'The top note.');
    expect(contextOf('notes/top.md')).toBe('The top note.');
    expect(contextOf('notes/meetings/weekly.md')).toBeUndefined();
  });

  it('is on query and vsearch hits too', async () => {
    store.setContext('journal', 'A diary.');
    const hit = (await store.query('baked')).hits[0];
    expect(hit).toMatchObject({ file: 'journal/day.md', context: 'A diary.' });
  });

  it('another handle on the index (another process) sees a change at once', async () => {
    const server = openStore(box.index, { readonly: true });
    try {
      expect(server.search('baked')[0]?.context).toBeUndefined();
      store.setContext('journal', 'A diary.');
      expect(server.search('baked')[0]?.context).toBe('A diary.');
      expect(server.listContexts()).toHaveLength(1);
    } finally {
      await server.close();
    }
  });
});

describe('the migration (schema version 3)', () => {
  function downgradeToVersion2(): void {
    downgradeToVersion3(box.index);
    const db = new Sqlite(box.index);
    db.exec('DROP TABLE contexts');
    db.pragma('user_version = 2');
    db.close();
  }

  it('adds the table to a version 2 index and keeps everything in it', async () => {
    await store.close();
    downgradeToVersion2();
    store = openStore(box.index);
    const db = new Sqlite(box.index, { readOnly: true });
    expect(db.pragmaValue('user_version')).toBe(latestVersion);
    db.close();
    expect(store.search('sourdough', { limit: 20 })).toHaveLength(5);
    expect(store.setContext('notes', 'Work notes.').replaced).toBe(false);
  });

  it('is all or nothing: a failure leaves the index at version 2, unchanged', async () => {
    await store.close();
    downgradeToVersion2();
    // Something in the way of the new index makes the step fail after its table was created.
    const db = new Sqlite(box.index);
    db.exec('CREATE TABLE in_the_way (x); CREATE INDEX contexts_by_place ON in_the_way(x)');
    db.close();
    expect(() => openStore(box.index)).toThrow(/contexts_by_place/);
    const after = new Sqlite(box.index, { readOnly: true });
    expect(after.pragmaValue('user_version')).toBe(2);
    expect(after.prepare("SELECT name FROM sqlite_schema WHERE name = 'contexts'").get()).toBeUndefined();
    after.close();
  });
});
