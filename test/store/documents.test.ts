import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/store/index.js';
import { expectQmdError, type Sandbox, sandbox } from './helpers.js';

let box: Sandbox;
let store: Store;
let root: string;

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
    'not-indexed.txt': 'secret text',
  });
  box.notes('outside', { 'secret.md': 'classified\n' });
  await store.addCollection(root);
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
    expect(slice).toMatchObject({ fromLine: 3, lines: 2, totalLines: 10, text: 'line 3\nline 4\n' });
    expect(store.get('notes/ten.md', { fromLine: 9 })).toMatchObject({ lines: 2, text: 'line 9\nline 10\n' });
    expect(store.get('notes/ten.md', { fromLine: 10, maxLines: 50 }).text).toBe('line 10\n');
    expect(store.get('notes/crlf.md', { fromLine: 3 }).text).toBe('line three\r\n');
  });

  it('refuses bad ranges', async () => {
    await expectQmdError(() => store.get('notes/ten.md', { fromLine: 11 }), 'BAD_ARGUMENT');
    await expectQmdError(() => store.get('notes/ten.md', { fromLine: 0 }), 'BAD_ARGUMENT');
    await expectQmdError(() => store.get('notes/ten.md', { maxLines: 0 }), 'BAD_ARGUMENT');
    await expectQmdError(() => store.get('notes/ten.md', { fromLine: 1.5 }), 'BAD_ARGUMENT');
  });

  it('refuses anything that reaches outside the collections', async () => {
    const outside = [
      '../outside/secret.md',
      '/etc/passwd',
      'notes/../../outside/secret.md',
      'notes/../outside/secret.md',
      '%2e%2e/outside/secret.md',
      '%2E%2E%2Foutside%2Fsecret.md',
      'notes/%2e%2e/%2e%2e/etc/passwd',
      '..%2f..%2fetc%2fpasswd',
      'qmd://../outside/secret.md',
      'qmd://%2e%2e/outside/secret.md',
      'qmd:///etc/passwd',
      'C:\\Windows\\win.ini',
      '~/.ssh/id_rsa',
      '..',
      'outside/secret.md',
      'etc/passwd',
    ];
    for (const ref of outside) {
      const error = await expectQmdError(() => store.get(ref), 'OUTSIDE_COLLECTIONS');
      expect(error.message).toContain(ref);
    }
  });

  it('refuses malformed references and reports unknown documents', async () => {
    for (const ref of [
      '',
      '   ',
      'notes',
      'notes//a.md',
      'notes/./a.md',
      'notes\\a.md',
      '#zz',
      'a\0b',
      'qmd://%E0%A4%A',
    ]) {
      await expectQmdError(() => store.get(ref), 'BAD_ARGUMENT');
    }
    await expectQmdError(() => store.get('notes/missing.md'), 'NOT_FOUND');
    await expectQmdError(() => store.get('notes/not-indexed.txt'), 'NOT_FOUND');
    await expectQmdError(() => store.get('#00000000'), 'NOT_FOUND');
  });
});

describe('multiGet', () => {
  it('takes a glob over collection/path, in order', () => {
    const result = store.multiGet('notes/sub/*.md');
    expect(result.documents.map((doc) => doc.file)).toEqual(['notes/sub/b.md', 'notes/sub/c.md']);
    expect(result.documents.every((doc) => !doc.truncated)).toBe(true);
    expect(result.skipped).toEqual([]);
    expect(store.multiGet('*/sub/{b,c}.md').documents).toHaveLength(2);
    expect(store.multiGet('notes/**').documents).toHaveLength(7);
  });

  it('takes a comma list of paths, docids and globs, and says what it skipped', () => {
    const { docid } = store.get('notes/a.md');
    const result = store.multiGet(`notes/sub/b.md, ${docid}, notes/missing.md, notes/sub/{b,c}.md, notes/none/*.md`);
    expect(result.documents.map((doc) => doc.file)).toEqual(['notes/sub/b.md', 'notes/a.md', 'notes/sub/c.md']);
    expect(result.skipped).toEqual([
      { file: 'notes/missing.md', reason: expect.stringContaining('No indexed document') },
      { file: 'notes/none/*.md', reason: 'no indexed document matches' },
    ]);
  });

  it('caps the total bytes and reports what did not fit', () => {
    // ten.md is 71 bytes, a.md 11, b.md 11, c.md 13: 82 fit in 90, the next would make 93.
    const result = store.multiGet('notes/ten.md,notes/a.md,notes/sub/b.md,notes/sub/c.md', { maxBytes: 90 });
    expect(result.documents.map((doc) => doc.file)).toEqual(['notes/ten.md', 'notes/a.md']);
    expect(result.skipped.map((skip) => skip.file)).toEqual(['notes/sub/b.md', 'notes/sub/c.md']);
    expect(result.skipped[0]?.reason).toMatch(/maxBytes/);
    const total = result.documents.reduce((sum, doc) => sum + Buffer.byteLength(doc.text), 0);
    expect(total).toBeLessThanOrEqual(90);
  });

  it('truncates a first document larger than the cap to whole lines', () => {
    const result = store.multiGet('notes/ten.md', { maxBytes: 20 });
    expect(result.documents).toEqual([
      expect.objectContaining({ text: 'line 1\nline 2\n', truncated: true, lines: 2 }),
    ]);
  });

  it('refuses globs that reach outside, and unknown collections', async () => {
    await expectQmdError(() => store.multiGet('../outside/*.md'), 'OUTSIDE_COLLECTIONS');
    await expectQmdError(() => store.multiGet('/etc/*'), 'OUTSIDE_COLLECTIONS');
    await expectQmdError(() => store.multiGet('notes/../../*'), 'OUTSIDE_COLLECTIONS');
    await expectQmdError(() => store.multiGet('outside/*.md'), 'OUTSIDE_COLLECTIONS');
    await expectQmdError(() => store.multiGet(' , '), 'BAD_ARGUMENT');
    await expectQmdError(() => store.multiGet('notes/a.md', { maxBytes: 0 }), 'BAD_ARGUMENT');
    const mixed = store.multiGet('notes/a.md, ../outside/secret.md');
    expect(mixed.documents.map((doc) => doc.file)).toEqual(['notes/a.md']);
    expect(mixed.skipped[0]?.file).toBe('../outside/secret.md');
  });
});
