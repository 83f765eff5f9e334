/**
 * `get` and `multi_get` serve a note's text only when it is the text its hash was taken of: a
 * flipped byte in the stored text (a row changed under qmd: SQLite's page checks and
 * `integrity_check` pass it) is a damaged index, INDEX_CORRUPT, never served as the note. Notes
 * whose bytes and text differ (a byte-order mark, bytes that are not UTF-8) are no false alarm.
 * And an index from before schema 7, whose non-UTF-8 notes were hashed by their bytes, is moved
 * to the text's hash when it is opened.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/core/index.js';
import { Sqlite } from '../../src/store/sqlite.js';
import { textMatchesHash } from '../../src/text/content-hash.js';
import { expectQmdError, type Sandbox, sandbox } from './helpers.js';

let box: Sandbox;
let root: string;
const stores: Store[] = [];
const open = () => {
  const store = openStore(box.index);
  stores.push(store);
  return store;
};

beforeEach(async () => {
  box = sandbox();
  root = box.notes('notes', {
    'a.md': '# A\n\nalpha words\n',
    'b.md': '# B\n\nbravo words\n',
    'crlf.md': '# Windows\r\n\r\nline three\r\n',
    'empty.md': '',
  });
  fs.writeFileSync(
    path.join(root, 'bom.md'),
    Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('# Bom\n\nmarked\n')]),
  );
  fs.writeFileSync(path.join(root, 'latin1.md'), Buffer.from('# Caf\xe9\n\nlatin one\n', 'latin1'));
  const store = open();
  await store.addCollection(root, { name: 'notes' });
});

afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
  box.cleanup();
});

/** Changes the stored text of `file` behind qmd's back, as a flipped byte on disk would. */
function tamper(file: string, change: (body: string) => string): void {
  const db = new Sqlite(box.index);
  try {
    const { hash, body } = db
      .prepare<[string], { hash: string; body: string }>(
        'SELECT c.hash, c.body FROM documents d JOIN content c ON c.hash = d.hash WHERE d.path = ?',
      )
      .get(file) as { hash: string; body: string };
    db.prepare<[string, string]>('UPDATE content SET body = ? WHERE hash = ?').run(change(body), hash);
    expect(db.pragmaValue('integrity_check')).toBe('ok');
  } finally {
    db.close();
  }
}

const flip = (body: string) => body.replace('alpha', 'alphb');

describe('the stored text against its hash', () => {
  it('serves every note whose text is whole, whatever its file held (mark, CRLF, not UTF-8, empty)', async () => {
    const store = stores[0] as Store;
    for (const name of ['a.md', 'crlf.md', 'empty.md', 'bom.md', 'latin1.md']) {
      expect(store.get(`notes/${name}`).file).toBe(`notes/${name}`);
    }
    expect(store.get('notes/latin1.md').text).toBe('# Caf\uFFFD\n\nlatin one\n');
    expect((await store.multiGet('notes/*.md')).documents).toHaveLength(6);
  });

  it('a flipped byte: get is INDEX_CORRUPT in the damaged-index words, naming the note; the others are served', async () => {
    tamper('a.md', flip);
    const store = open();
    const error = await expectQmdError(() => store.get('notes/a.md'), 'INDEX_CORRUPT');
    expect(error.message).toMatch(
      new RegExp(
        `^The index ${box.index.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is damaged \\(the stored text of notes/a.md does not match its content hash [0-9a-f]{12}…\\); move it away and add the collections again \\(qmd collection add DIR\\)$`,
      ),
    );
    // A range of it too: the whole text is what the hash covers.
    await expectQmdError(() => store.get('notes/a.md:1:1'), 'INDEX_CORRUPT');
    expect(store.get('notes/b.md').text).toBe('# B\n\nbravo words\n');
  });

  it('multi_get: a damaged note fails the call, as get does; one skipped as too large is not read', async () => {
    tamper('a.md', flip);
    const store = open();
    await expectQmdError(() => store.multiGet('notes/*.md'), 'INDEX_CORRUPT');
    await expectQmdError(() => store.multiGet('notes/b.md, notes/a.md'), 'INDEX_CORRUPT');
    expect((await store.multiGet('notes/b.md')).documents).toHaveLength(1);
    const skipped = await store.multiGet('notes/a.md', { maxBytes: 1 });
    expect(skipped.skipped.map((s) => s.kind)).toEqual(['too-large']);
  });

  it('a text cut short, or a mark added, is damage too', async () => {
    tamper('b.md', (body) => body.slice(0, -1));
    tamper('crlf.md', (body) => `\uFEFF\uFEFF${body}`);
    const store = open();
    await expectQmdError(() => store.get('notes/b.md'), 'INDEX_CORRUPT');
    await expectQmdError(() => store.get('notes/crlf.md'), 'INDEX_CORRUPT');
  });
});

describe('schema 7: non-UTF-8 notes move from the hash of their bytes to the hash of their text', () => {
  /** What schema 6 stored for latin1.md: the SHA-256 of its bytes, with its chunks. */
  function makeLegacy(): { legacy: string; fresh: string } {
    const bytes = fs.readFileSync(path.join(root, 'latin1.md'));
    const legacy = createHash('sha256').update(bytes).digest('hex');
    const db = new Sqlite(box.index);
    try {
      const fresh = db.value<string>("SELECT hash FROM documents WHERE path = 'latin1.md'") as string;
      // Rows as a schema-6 qmd left them: the bytes' hash everywhere, a chunk under it.
      db.pragma('foreign_keys = OFF');
      db.exec('BEGIN');
      db.prepare<[string, string]>('UPDATE content SET hash = ? WHERE hash = ?').run(legacy, fresh);
      db.prepare<[string, string]>('UPDATE documents SET hash = ? WHERE hash = ?').run(legacy, fresh);
      db.prepare<[string]>(
        "INSERT INTO chunks (content_hash, seq, hash, start_offset, end_offset, line) VALUES (?, 0, 'c0', 0, 8, 1)",
      ).run(legacy);
      db.pragma('user_version = 6');
      db.exec('COMMIT');
      return { legacy, fresh };
    } finally {
      db.close();
    }
  }

  it('an index from before: opened, its latin1 note is whole again and its qmd 2.x docid names it', async () => {
    await (stores.pop() as Store).close();
    const { legacy, fresh } = makeLegacy();
    expect(legacy).not.toBe(fresh);
    // As stored then, the text cannot be checked against that hash: it would read as damage.
    expect(textMatchesHash('# Caf\uFFFD\n\nlatin one\n', legacy)).toBe(false);
    const store = open();
    expect(store.get('notes/latin1.md').text).toBe('# Caf\uFFFD\n\nlatin one\n');
    expect(store.get(`#${fresh.slice(0, 6)}`).file).toBe('notes/latin1.md');
    const db = new Sqlite(box.index, { readOnly: true });
    try {
      expect(db.pragmaValue('user_version')).toBe(7);
      expect(db.value('SELECT count(*) FROM content WHERE hash = ?', legacy)).toBe(0);
      expect(db.value('SELECT content_hash FROM chunks WHERE hash = ?', 'c0')).toBe(fresh);
      expect(db.pragmaValue('foreign_key_check')).toBeUndefined();
      expect(db.value('SELECT count(*) FROM documents_fts')).toBe(db.value('SELECT count(*) FROM documents'));
    } finally {
      db.close();
    }
    // Nothing else moved, and an update finds nothing to do.
    expect(await store.update()).toMatchObject({ added: 0, updated: 0, removed: 0 });
  });
});
