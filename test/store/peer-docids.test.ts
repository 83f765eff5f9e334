/**
 * qmd 2.x's docids name the same notes here: `#40271e` is the first 6 hex digits of the SHA-256
 * of the note's text as qmd 2.x reads it (`readFileSync(file, 'utf-8')`). Computed here the way
 * qmd 2.8.3's `store.js` computes it (`hashContent`, `getDocid`), on real files, including the
 * ones whose bytes and text differ (a byte-order mark, bytes that are not UTF-8).
 * `test/e2e/peer-docids.test.ts` checks the same against the real qmd 2.8.3.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/core/index.js';
import { BY_CONTENT_HASH_SQL } from '../../src/store/lookup.js';
import { Sqlite } from '../../src/store/sqlite.js';
import { expectQmdError, type Sandbox, sandbox } from './helpers.js';

/** qmd 2.8.3: `getDocid(await hashContent(readFileSync(filepath, "utf-8")))`. */
function peerDocid(file: string): string {
  return createHash('sha256').update(fs.readFileSync(file, 'utf-8')).digest('hex').slice(0, 6);
}

/** Two texts whose SHA-256 share their first 6 hex digits (about 5,000 tries for even odds). */
function collidingTexts(): [string, string] {
  const seen = new Map<string, string>();
  for (let i = 0; ; i++) {
    const text = `# Collision ${i}\n\nThis note shares the start of its hash with another.\n`;
    const start = createHash('sha256').update(text).digest('hex').slice(0, 6);
    const other = seen.get(start);
    if (other !== undefined) return [other, text];
    seen.set(start, text);
  }
}

let box: Sandbox;
let store: Store;
let root: string;
const [collideA, collideB] = collidingTexts();

beforeAll(async () => {
  box = sandbox();
  store = openStore(box.index);
  root = box.notes('notes', {
    'plain.md': '# Plain\n\nplain words\n',
    'café.md': '# Café\n\nnaïve résumé\n',
    'crlf.md': '# Windows\r\n\r\nline three\r\n',
    'twin-a.md': '# Twin\n\nthe same text twice\n',
    'twin-b.md': '# Twin\n\nthe same text twice\n',
    'collide-a.md': collideA,
    'collide-b.md': collideB,
  });
  fs.writeFileSync(
    path.join(root, 'bom.md'),
    Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('# Bom\n\nmarked\n')]),
  );
  // Latin-1, as an old editor saves it: 0xE9 is no UTF-8; qmd 2.x reads it as U+FFFD.
  fs.writeFileSync(path.join(root, 'latin1.md'), Buffer.from('# Caf\xe9\n\nlatin one\n', 'latin1'));
  await store.addCollection(root, { name: 'notes' });
});

afterAll(async () => {
  await store.close();
  box.cleanup();
});

describe("qmd 2.x's docids", () => {
  it.each(['plain.md', 'café.md', 'crlf.md', 'bom.md', 'latin1.md'])(
    '%s: its qmd 2.x docid opens it, with #, without, in capitals, and as qmd://#id',
    (name) => {
      const id = peerDocid(path.join(root, name));
      expect(store.get(`#${id}`).file).toBe(`notes/${name}`);
      expect(store.get(id).file).toBe(`notes/${name}`);
      expect(store.get(`#${id.toUpperCase()}`).file).toBe(`notes/${name}`);
      expect(store.get(`qmd://%23${id}`).file).toBe(`notes/${name}`);
      // Longer prefixes of the same hash name it too, as qmd 2.x's lookup takes them.
      const full = createHash('sha256')
        .update(fs.readFileSync(path.join(root, name), 'utf-8'))
        .digest('hex');
      expect(store.get(`#${full}`).file).toBe(`notes/${name}`);
      // Our own docid for it is unchanged: 8 digits, from its path.
      expect(store.get(`#${id}`).docid).toMatch(/^#[0-9a-f]{8}$/);
    },
  );

  it('multi_get takes them, in a list with paths', async () => {
    const ids = ['plain.md', 'latin1.md'].map((name) => `#${peerDocid(path.join(root, name))}`);
    const result = await store.multiGet(`${ids.join(', ')}, notes/crlf.md`);
    expect(result.documents.map((d) => d.file)).toEqual(['notes/plain.md', 'notes/latin1.md', 'notes/crlf.md']);
    expect(result.skipped).toEqual([]);
  });

  it('two notes with the same text share it: AMBIGUOUS, listing both with the docids that name each alone', async () => {
    const id = peerDocid(path.join(root, 'twin-a.md'));
    const error = await expectQmdError(() => store.get(`#${id}`), 'AMBIGUOUS');
    const a = store.get('notes/twin-a.md').docid;
    const b = store.get('notes/twin-b.md').docid;
    expect(error.message).toBe(
      `"#${id}" is the qmd 2.x docid of 2 indexed documents: notes/twin-a.md (${a}), notes/twin-b.md (${b}); give one of these paths or docids`,
    );
    expect(store.get(a).file).toBe('notes/twin-a.md');
    // In a list, it is skipped with that reason; the rest is served.
    const result = await store.multiGet(`#${id}, notes/plain.md`);
    expect(result.documents.map((d) => d.file)).toEqual(['notes/plain.md']);
    expect(result.skipped[0]?.reason).toContain('is the qmd 2.x docid of 2 indexed documents');
  });

  it('two texts whose hashes share 6 digits: AMBIGUOUS at 6, each found alone with one digit more', async () => {
    const id = peerDocid(path.join(root, 'collide-a.md'));
    expect(peerDocid(path.join(root, 'collide-b.md'))).toBe(id);
    const error = await expectQmdError(() => store.get(`#${id}`), 'AMBIGUOUS');
    expect(error.message).toContain('notes/collide-a.md (#');
    expect(error.message).toContain('notes/collide-b.md (#');
    const [a, b] = [collideA, collideB].map((text) => createHash('sha256').update(text).digest('hex')) as [
      string,
      string,
    ];
    let common = 0;
    while (a[common] === b[common]) common++;
    expect(common).toBeGreaterThanOrEqual(6);
    // The first digit where they part names each alone.
    expect(store.get(`#${a.slice(0, common + 1)}`).file).toBe('notes/collide-a.md');
    expect(store.get(`#${b.slice(0, common + 1)}`).file).toBe('notes/collide-b.md');
  });

  it('an id that names nothing says what it was looked up as', async () => {
    const error = await expectQmdError(() => store.get('#abcdef'), 'NOT_FOUND');
    expect(error.message).toBe(
      "No indexed document has the id #abcdef: looked up as a qmd 2.x docid, no indexed note's content hash starts with it (it changes when a note is edited; search again for the note)",
    );
    // Eight digits or more could be ours: the line is ours.
    const ours = await expectQmdError(() => store.get('#abcdef01'), 'NOT_FOUND');
    expect(ours.message).toBe('No indexed document has the id #abcdef01');
  });

  it('an edit gives the note another qmd 2.x docid, and keeps ours', async () => {
    const file = path.join(root, 'plain.md');
    const before = peerDocid(file);
    const ours = store.get('notes/plain.md').docid;
    fs.writeFileSync(file, '# Plain\n\nplain words, edited\n');
    await store.update();
    await expectQmdError(() => store.get(`#${before}`), 'NOT_FOUND');
    expect(store.get(`#${peerDocid(file)}`).file).toBe('notes/plain.md');
    expect(store.get('notes/plain.md').docid).toBe(ours);
  });

  it('the lookup is a range over the documents_by_hash index, never a scan', () => {
    const db = new Sqlite(box.index, { readOnly: true });
    try {
      const plan = db
        .prepare<[string, string], { detail: string }>(`EXPLAIN QUERY PLAN ${BY_CONTENT_HASH_SQL}`)
        .all('abc123', 'abc123g')
        .map((row) => row.detail);
      expect(plan[0]).toBe('SEARCH d USING INDEX documents_by_hash (hash>? AND hash<?)');
    } finally {
      db.close();
    }
  });
});
