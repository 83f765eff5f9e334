import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/core/index.js';
import { pathEscapeCases } from '../support/path-escape.js';
import { expectQmdError, type Sandbox, sandbox } from './helpers.js';

let box: Sandbox;
let store: Store;
let root: string;
let journal: string;

const ten = Array.from({ length: 10 }, (_, i) => `line ${i + 1}`).join('\n');

beforeAll(async () => {
  box = sandbox();
  store = openStore(box.index);
  root = box.notes('notes', {
    'ten.md': `${ten}\n`,
    'a.md': '# A\n\nalpha\n',
    'sub/b.md': '# B\n\nbravo\n',
    'sub/c.md': '# C\n\ncharlie\n',
    'crlf.md': '# Windows\r\n\r\nline three\r\n',
    'unicode é.md': '# Café\n\nnaïve\n',
    'empty.md': '',
    'readme.md': '# Notes readme\n',
    'not-indexed.txt': 'secret text',
  });
  journal = box.notes('journal', {
    '2025-05-01.md': '# May\n\nbasil\n',
    '2025-06-01.md': '# June\n\npesto\n',
    '2024/meeting-2024-01.md': '# Meeting\n\nagenda\n',
    'readme.md': '# Journal readme\n',
    'data.md': '# Data\n',
  });
  fs.writeFileSync(path.join(box.dir, 'secret.md'), 'classified zebrafish\n');
  fs.symlinkSync(path.join(box.dir, 'secret.md'), path.join(root, 'link.md'));
  await store.addCollection(root, { name: 'notes' });
  await store.addCollection(journal, { name: 'journal' });
});

afterAll(async () => {
  await store.close();
  box.cleanup();
});

describe('get', () => {
  it('reads a document by path, from the index', () => {
    const doc = store.get('notes/ten.md');
    expect(doc).toMatchObject({ file: 'notes/ten.md', title: 'ten', fromLine: 1, lines: 10, totalLines: 10 });
    expect(doc.text).toBe(`${ten}\n`);
    expect(doc.docid).toMatch(/^#[0-9a-f]{8}$/);
    expect(store.get('notes/unicode é.md').title).toBe('Café');
    expect(store.get('notes/empty.md')).toMatchObject({ text: '', lines: 0, totalLines: 0 });
  });

  it('never reads the file at request time', () => {
    fs.writeFileSync(path.join(root, 'a.md'), '# A\n\nchanged on disk\n');
    expect(store.get('notes/a.md').text).toBe('# A\n\nalpha\n');
    expect(store.get(path.join(root, 'a.md')).text).toBe('# A\n\nalpha\n');
    fs.writeFileSync(path.join(root, 'a.md'), '# A\n\nalpha\n');
  });

  it('reads by #docid, in any case, and by qmd:// URI', () => {
    const { docid } = store.get('notes/sub/b.md');
    expect(store.get(docid).file).toBe('notes/sub/b.md');
    expect(store.get(docid.toUpperCase()).file).toBe('notes/sub/b.md');
    expect(store.get('qmd://notes/sub/b.md').file).toBe('notes/sub/b.md');
    expect(store.get('qmd://notes/unicode%20%C3%A9.md').title).toBe('Café');
    expect(store.get(`qmd://${docid}`).file).toBe('notes/sub/b.md');
  });

  it('returns line ranges exactly', () => {
    const slice = store.get('notes/ten.md', { fromLine: 3, maxLines: 2 });
    expect(slice).toMatchObject({ fromLine: 3, lines: 2, totalLines: 10, text: 'line 3\nline 4' });
    expect(store.get('notes/ten.md', { fromLine: 9 })).toMatchObject({ lines: 2, text: 'line 9\nline 10' });
    expect(store.get('notes/ten.md', { fromLine: 10, maxLines: 50 }).text).toBe('line 10');
    expect(store.get('notes/crlf.md', { fromLine: 3 }).text).toBe('line three');
  });

  it('takes path:LINE and path:FROM:COUNT; explicit fromLine and maxLines win', () => {
    expect(store.get('notes/ten.md:9')).toMatchObject({ fromLine: 9, lines: 2, text: 'line 9\nline 10' });
    expect(store.get('notes/ten.md:3:2')).toMatchObject({ fromLine: 3, lines: 2, text: 'line 3\nline 4' });
    expect(store.get('notes/ten.md:3:2', { fromLine: 5 })).toMatchObject({ fromLine: 5, lines: 2 });
    expect(store.get('notes/ten.md:3:2', { maxLines: 1 })).toMatchObject({ fromLine: 3, lines: 1 });
    const { docid } = store.get('notes/ten.md');
    expect(store.get(`${docid}:4:1`).text).toBe('line 4');
    expect(store.get('ten.md:10').text).toBe('line 10');
  });

  it('numbers lines as "N: text" from where the slice starts, keeping line ends', () => {
    expect(store.get('notes/ten.md', { fromLine: 9, lineNumbers: true }).text).toBe('9: line 9\n10: line 10');
    expect(store.get('notes/crlf.md', { lineNumbers: true }).text).toBe('1: # Windows\r\n2: \r\n3: line three\r\n');
    expect(store.get('notes/empty.md', { lineNumbers: true }).text).toBe('');
    expect(store.get('notes/ten.md:2:1', { lineNumbers: true }).text).toBe('2: line 2');
  });

  it('refuses bad ranges', async () => {
    await expectQmdError(() => store.get('notes/ten.md', { fromLine: 11 }), 'BAD_ARGUMENT');
    await expectQmdError(() => store.get('notes/ten.md', { fromLine: 0 }), 'BAD_ARGUMENT');
    await expectQmdError(() => store.get('notes/ten.md', { maxLines: 0 }), 'BAD_ARGUMENT');
    await expectQmdError(() => store.get('notes/ten.md', { fromLine: 1.5 }), 'BAD_ARGUMENT');
    await expectQmdError(() => store.get('notes/ten.md:0'), 'BAD_ARGUMENT');
    await expectQmdError(() => store.get('notes/ten.md:11'), 'BAD_ARGUMENT');
  });
});

describe('references as qmd 2.8 resolves them', () => {
  it('a path without its collection, when one collection has it', () => {
    expect(store.get('ten.md').file).toBe('notes/ten.md');
    expect(store.get('sub/b.md').file).toBe('notes/sub/b.md');
    expect(store.get('2024/meeting-2024-01.md').file).toBe('journal/2024/meeting-2024-01.md');
  });

  it('an absolute path inside a collection root, mapped to the indexed document', () => {
    expect(store.get(path.join(root, 'sub', 'b.md')).file).toBe('notes/sub/b.md');
    expect(store.get(path.join(journal, '2025-05-01.md')).text).toContain('basil');
    expect(store.get(`qmd://${path.join(root, 'a.md')}`).file).toBe('notes/a.md');
    expect(store.get(`${path.join(root, 'ten.md')}:10`).text).toBe('line 10');
  });

  it('a unique suffix that starts at a path segment', () => {
    expect(store.get('meeting-2024-01.md').file).toBe('journal/2024/meeting-2024-01.md');
    expect(store.get('qmd://meeting-2024-01.md').file).toBe('journal/2024/meeting-2024-01.md');
    expect(store.get('b.md').file).toBe('notes/sub/b.md');
  });

  it('a docid without its #, when no file has that name', () => {
    const { docid } = store.get('notes/sub/c.md');
    expect(store.get(docid.slice(1)).file).toBe('notes/sub/c.md');
    expect(store.get(`${docid.slice(1).toUpperCase()}:3`).text).toBe('charlie');
  });

  it('never a fragment of a file name', async () => {
    // `a.md` is notes/a.md (exact); `ta.md` is no segment of journal/data.md.
    expect(store.get('a.md').file).toBe('notes/a.md');
    await expectQmdError(() => store.get('ta.md'), 'NOT_FOUND');
  });

  it('collection/path first: it names what query returned, even where another form could match', () => {
    expect(store.get('journal/readme.md').text).toContain('Journal readme');
    expect(store.get('notes/readme.md').text).toContain('Notes readme');
  });

  it('two matches are an AMBIGUOUS error that lists both, never a silent pick', async () => {
    const error = await expectQmdError(() => store.get('readme.md'), 'AMBIGUOUS');
    expect(error.message).toBe(
      '"readme.md" matches 2 indexed documents: journal/readme.md, notes/readme.md; give one of these paths',
    );
  });

  it('a miss says "Did you mean" with the closest indexed paths, at most three', async () => {
    const typo = await expectQmdError(() => store.get('notes/sub/bb.md'), 'NOT_FOUND');
    expect(typo.message).toBe('No indexed document "notes/sub/bb.md". Did you mean: notes/sub/b.md?');
    const name = await expectQmdError(() => store.get('metting-2024-01.md'), 'NOT_FOUND');
    expect(name.message).toMatch(/Did you mean: journal\/2024\/meeting-2024-01\.md\?$/);
    const cased = await expectQmdError(() => store.get('notes/README.md'), 'NOT_FOUND');
    expect(cased.message).toMatch(/Did you mean: notes\/readme\.md/);
    const far = await expectQmdError(() => store.get('completely/unrelated/thing.md'), 'NOT_FOUND');
    expect(far.message).toBe('No indexed document "completely/unrelated/thing.md"');
    const rooted = await expectQmdError(() => store.get(path.join(root, 'sub', 'cc.md')), 'NOT_FOUND');
    expect(rooted.message).toMatch(/Did you mean: notes\/sub\/c\.md\?$/);
    const many = await expectQmdError(() => store.get('2025-05-02.md'), 'NOT_FOUND');
    expect(many.message.split(', ').length).toBeLessThanOrEqual(3);
  });

  it('suggests only indexed files', async () => {
    const error = await expectQmdError(() => store.get('notes/not-indexed.md'), 'NOT_FOUND');
    expect(error.message).not.toContain('not-indexed.txt');
    expect(error.message).not.toContain('secret');
  });
});

describe('nothing outside the collections (the path-escape table)', () => {
  const code = { outside: 'OUTSIDE_COLLECTIONS', bad: 'BAD_ARGUMENT', indexOnly: 'NOT_FOUND' } as const;
  it('get and multiGet give each case its verdict and never a byte of what lies outside', async () => {
    const cases = pathEscapeCases({ dir: box.dir, notes: root });
    expect(cases.length).toBeGreaterThan(40);
    for (const { input, verdict } of cases) {
      const error = await expectQmdError(() => store.get(input), code[verdict]);
      expect(error.message).not.toContain('zebrafish');
      const alone = await expectQmdError(() => store.multiGet(input), code[verdict]);
      expect(alone.message).not.toContain('zebrafish');
      if (verdict === 'outside') {
        // A traversal attempt anywhere in a list refuses the whole call.
        await expectQmdError(() => store.multiGet(`notes/a.md, ${input}`), 'OUTSIDE_COLLECTIONS');
      } else if (!input.includes(',') && input.trim() !== '') {
        const listed = await store.multiGet(`notes/a.md, ${input}`);
        expect(listed.documents.map((doc) => doc.file)).toEqual(['notes/a.md']);
        expect(listed.skipped.map((skip) => skip.file)).toEqual([input.trim()]);
      }
    }
  });
});

describe('multiGet', () => {
  it('takes a glob over collection/path, in order', async () => {
    const result = await store.multiGet('notes/sub/*.md');
    expect(result.documents.map((doc) => doc.file)).toEqual(['notes/sub/b.md', 'notes/sub/c.md']);
    expect(result.documents.every((doc) => !doc.truncated)).toBe(true);
    expect(result.skipped).toEqual([]);
    expect((await store.multiGet('*/sub/{b,c}.md')).documents).toHaveLength(2);
    expect((await store.multiGet('notes/**')).documents).toHaveLength(8);
  });

  it('matches relative globs inside every collection too', async () => {
    const top = (await store.multiGet('*.md')).documents.map((doc) => doc.file);
    expect(top).toContain('notes/a.md');
    expect(top).toContain('journal/2025-05-01.md');
    expect(top).not.toContain('notes/sub/b.md');
    expect((await store.multiGet('**/2025-*.md')).documents.map((doc) => doc.file)).toEqual([
      'journal/2025-05-01.md',
      'journal/2025-06-01.md',
    ]);
    expect((await store.multiGet('2024/*.md')).documents.map((doc) => doc.file)).toEqual([
      'journal/2024/meeting-2024-01.md',
    ]);
    expect((await store.multiGet(`${journal}/2025-*.md`)).documents).toHaveLength(2);
    expect((await store.multiGet('sub/*.md')).documents.map((doc) => doc.file)).toEqual([
      'notes/sub/b.md',
      'notes/sub/c.md',
    ]);
  });

  it('takes a comma list of paths, docids, globs and peer forms, and says what it skipped', async () => {
    const { docid } = store.get('notes/a.md');
    const result = await store.multiGet(
      `notes/sub/b.md, ${docid}, notes/missing.md, notes/sub/{b,c}.md, notes/none/*.md, meeting-2024-01.md, readme.md`,
    );
    expect(result.documents.map((doc) => doc.file)).toEqual([
      'notes/sub/b.md',
      'notes/a.md',
      'notes/sub/c.md',
      'journal/2024/meeting-2024-01.md',
    ]);
    expect(result.skipped).toEqual([
      // qmd 2.8's words, its suggestions after them.
      {
        file: 'notes/missing.md',
        reason: expect.stringMatching(/^not found( \(did you mean: .*\?\))?$/),
        kind: 'not-found',
      },
      { file: 'notes/none/*.md', reason: 'no files matched', kind: 'no-match' },
      { file: 'readme.md', reason: expect.stringContaining('matches 2 indexed documents'), kind: 'refused' },
    ]);
  });

  it('caps each file at maxBytes (default 65536) and skips what is larger, with why', async () => {
    // ten.md is 71 bytes, a.md 11, b.md 11.
    const result = await store.multiGet('notes/ten.md,notes/a.md,notes/sub/b.md', { maxBytes: 20 });
    expect(result.documents.map((doc) => doc.file)).toEqual(['notes/a.md', 'notes/sub/b.md']);
    expect(result.skipped).toEqual([
      { file: 'notes/ten.md', reason: 'too large: 71 bytes > maxBytes 20; use get with maxLines', kind: 'too-large' },
    ]);
    expect((await store.multiGet('notes/ten.md', { maxBytes: 71 })).documents).toHaveLength(1);
  });

  it('applies maxLines before the cap, and says what it cut', async () => {
    const result = await store.multiGet('notes/ten.md, notes/a.md', { maxLines: 2, maxBytes: 20 });
    expect(result.documents).toEqual([
      expect.objectContaining({
        file: 'notes/ten.md',
        text: 'line 1\nline 2\n',
        lines: 2,
        totalLines: 10,
        truncated: true,
      }),
      expect.objectContaining({ file: 'notes/a.md', lines: 2, totalLines: 3, truncated: true }),
    ]);
  });

  it('numbers lines on request; the cap is on the text, not the numbers', async () => {
    const result = await store.multiGet('notes/ten.md', { maxLines: 2, lineNumbers: true, maxBytes: 14 });
    expect(result.documents[0]?.text).toBe('1: line 1\n2: line 2\n');
  });

  it('stops at totalBytes in all, listing the rest as skipped', async () => {
    const result = await store.multiGet('notes/a.md, notes/sub/b.md, notes/sub/c.md', { totalBytes: 25 });
    expect(result.documents.map((doc) => doc.file)).toEqual(['notes/a.md', 'notes/sub/b.md']);
    expect(result.skipped).toEqual([
      { file: 'notes/sub/c.md', reason: 'the reply is full (25 bytes in all)', kind: 'full' },
    ]);
  });

  it('refuses bad options and an empty pattern', async () => {
    await expectQmdError(() => store.multiGet(' , '), 'BAD_ARGUMENT');
    await expectQmdError(() => store.multiGet('notes/a.md', { maxBytes: 0 }), 'BAD_ARGUMENT');
    await expectQmdError(() => store.multiGet('notes/a.md', { maxLines: 0 }), 'BAD_ARGUMENT');
    await expectQmdError(() => store.multiGet('notes/a.md', { totalBytes: 1.5 }), 'BAD_ARGUMENT');
  });
});
