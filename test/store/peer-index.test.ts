/**
 * Reading qmd 2.x's index (`peer-index.ts`) without touching it: a SQLite file with qmd 2.8.3's
 * tables (its `initializeDatabase`, abridged to what is read), its last commits still in its
 * `-wal` as a running qmd 2.x leaves them. The real qmd 2.8.3's index is read in
 * test/e2e/migrate.test.ts.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore } from '../../src/core/index.js';
import { readPeerIndex } from '../../src/store/peer-index.js';
import { Sqlite } from '../../src/store/sqlite.js';
import { expectQmdError, type Sandbox, sandbox } from './helpers.js';

let box: Sandbox;
beforeEach(() => {
  box = sandbox();
});
afterEach(() => box.cleanup());

const PEER_SCHEMA = `
CREATE TABLE content (hash TEXT PRIMARY KEY, doc TEXT NOT NULL, created_at TEXT NOT NULL);
CREATE TABLE documents (id INTEGER PRIMARY KEY AUTOINCREMENT, collection TEXT NOT NULL, path TEXT NOT NULL,
  title TEXT NOT NULL, hash TEXT NOT NULL, created_at TEXT NOT NULL, modified_at TEXT NOT NULL,
  active INTEGER NOT NULL DEFAULT 1, UNIQUE(collection, path));
CREATE TABLE llm_cache (hash TEXT PRIMARY KEY, result TEXT NOT NULL, created_at TEXT NOT NULL);
CREATE TABLE content_vectors (hash TEXT NOT NULL, seq INTEGER NOT NULL DEFAULT 0, pos INTEGER NOT NULL DEFAULT 0,
  model TEXT NOT NULL, embed_fingerprint TEXT NOT NULL DEFAULT '', total_chunks INTEGER NOT NULL DEFAULT 1,
  embedded_at TEXT NOT NULL, PRIMARY KEY (hash, seq));
CREATE TABLE store_collections (name TEXT PRIMARY KEY, path TEXT NOT NULL, pattern TEXT NOT NULL DEFAULT '**/*.md',
  ignore_patterns TEXT, include_by_default INTEGER DEFAULT 1, update_command TEXT, context TEXT);
CREATE TABLE store_config (key TEXT PRIMARY KEY, value TEXT);
`;

/** A qmd 2.x index at `file`, its connection left open (its last commits in the -wal). */
function peerIndex(file: string): Sqlite {
  const db = new Sqlite(file);
  db.pragma('journal_mode = WAL');
  db.exec(PEER_SCHEMA);
  db.exec(`INSERT INTO store_collections VALUES
    ('notes', '/n', '**/*.md', '["archive/**"]', 1, 'git pull', '{"":"Notes","/work":"Work"}'),
    ('wiki', '/w', 'pages/*.md,index.md', NULL, 0, NULL, NULL);
    INSERT INTO store_config VALUES ('global_context', 'Everything');
    INSERT INTO documents (collection, path, title, hash, created_at, modified_at, active) VALUES
      ('notes', 'a.md', 'A', 'h1', '', '', 1), ('notes', 'gone.md', 'G', 'h2', '', '', 0),
      ('wiki', 'index.md', 'I', 'h3', '', '', 1);
    INSERT INTO content_vectors (hash, seq, model, embedded_at) VALUES ('h1', 0, 'gemma', ''), ('h1', 1, 'gemma', '');`);
  return db;
}

function digest(file: string): string {
  return createHash('sha256').update(readFileSync(file)).digest('hex');
}

describe('readPeerIndex', () => {
  it("reads its collections, settings, contexts, active documents and vectors, its -wal's commits included", () => {
    const file = join(box.dir, 'index.sqlite');
    const peer = peerIndex(file);
    try {
      expect(existsSync(`${file}-wal`)).toBe(true);
      const before = { main: digest(file), wal: digest(`${file}-wal`), files: readdirSync(box.dir).sort() };
      expect(readPeerIndex(file)).toEqual({
        file,
        collections: [
          {
            name: 'notes',
            path: '/n',
            pattern: '**/*.md',
            ignore: ['archive/**'],
            update: 'git pull',
            includeByDefault: true,
            context: { '': 'Notes', '/work': 'Work' },
          },
          {
            name: 'wiki',
            path: '/w',
            pattern: 'pages/*.md,index.md',
            ignore: [],
            includeByDefault: false,
            context: {},
          },
        ],
        globalContext: 'Everything',
        documents: { notes: 1, wiki: 1 },
        embedded: { chunks: 2, model: 'gemma' },
      });
      // Byte for byte as it was, and nothing new beside it (no -shm of ours, no lock file).
      expect({ main: digest(file), wal: digest(`${file}-wal`), files: readdirSync(box.dir).sort() }).toEqual(before);
    } finally {
      peer.close();
    }
  });

  it('leaves no -wal or -shm beside a qmd 2.x index that has none (qmd 2.x closed)', () => {
    const file = join(box.dir, 'index.sqlite');
    peerIndex(file).close();
    expect(readdirSync(box.dir)).toEqual(['index.sqlite']);
    const before = digest(file);
    expect(readPeerIndex(file).documents).toEqual({ notes: 1, wiki: 1 });
    expect(readdirSync(box.dir)).toEqual(['index.sqlite']);
    expect(digest(file)).toBe(before);
  });

  it('refuses a missing file, an index of ours and a file that is not SQLite', async () => {
    await expectQmdError(() => readPeerIndex(join(box.dir, 'none.sqlite')), 'NOT_FOUND');
    const ours = openStore(join(box.dir, 'ours.sqlite'));
    await ours.close();
    await expectQmdError(() => readPeerIndex(join(box.dir, 'ours.sqlite')), 'BAD_ARGUMENT');
    const text = box.notes('x', { 'not.sqlite': 'hello, not a database at all, just text that is long enough' });
    await expectQmdError(() => readPeerIndex(join(text, 'not.sqlite')), 'BAD_ARGUMENT');
  });

  it('an index of ours opened on it says it is qmd 2.x’s and names qmd migrate', async () => {
    const file = join(box.dir, 'index.sqlite');
    peerIndex(file).close();
    const error = await expectQmdError(() => openStore(file, { readonly: true }), 'INDEX_CORRUPT');
    expect(error.message).toBe(
      `${file} is an index of qmd 2.x (@tobilu/qmd), not of this qmd: run qmd migrate to build ours from it (it stays as it is), or choose another --index`,
    );
  });
});
