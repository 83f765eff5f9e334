import { createHash, randomBytes } from 'node:crypto';
import { closeSync, openSync, writeSync } from 'node:fs';
import { Sqlite } from '../../src/store/sqlite.js';
import { textHash } from '../../src/text/content-hash.js';

/**
 * Grows an index that `qmd collection add` made (so its schema, settings and collection are the
 * binary's own) by `count` notes of about `kib` KiB each, written as the index writer writes
 * them (`content`, then `documents`; its triggers fill FTS5), in one transaction: an index past
 * 16 MiB in seconds, where indexing as many notes through the CLI takes a minute here. Their
 * paths are `big/bN.md` in `collection` (no file on disk: they are only ever read from the index).
 */
export function growIndex(file: string, options: { collection: string; count: number; kib: number }): void {
  const words = 'wal checkpoint page index note sqlite vector cell journal lock btree header'.split(' ');
  const db = new Sqlite(file);
  try {
    const addContent = db.prepare('INSERT OR IGNORE INTO content (hash, body) VALUES (?, ?)');
    const addDocument = db.prepare(
      'INSERT INTO documents (collection, path, docid, title, hash, mtime_ms, size, indexed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
    );
    db.transaction(() => {
      for (let n = 0; n < options.count; n++) {
        const lines = [`# Big ${n}`, ''];
        let length = 0;
        for (let w = 0; length < options.kib * 1024; w++) {
          const word = `${words[(n * 7 + w * 13) % words.length]}${w % 97}`;
          lines.push(word);
          length += word.length + 1;
        }
        const body = `${lines.join('\n')}\n`;
        const hash = textHash(body);
        const path = `big/b${n}.md`;
        const docid = createHash('sha256').update(`${options.collection}/${path}`).digest('hex').slice(0, 8);
        addContent.run(hash, body);
        addDocument.run(options.collection, path, docid, `Big ${n}`, hash, 0, body.length, new Date().toISOString());
      }
    });
  } finally {
    db.close();
  }
}

/** The pages of a b-tree (`dbstat`: a table's or an index's, its overflow pages included). */
export function pagesOf(file: string, btree: string): number[] {
  const db = new Sqlite(file, { readOnly: true });
  try {
    return db.column<[string], number>('SELECT pageno FROM dbstat WHERE name = ? ORDER BY pageno').all(btree);
  } finally {
    db.close();
  }
}

/** Overwrites page `page` (numbered from 1, 4 KiB: qmd's page size) with zeros, or random bytes. */
export function damagePage(file: string, page: number, bytes: 'zeros' | 'random' = 'zeros'): void {
  const data = bytes === 'zeros' ? Buffer.alloc(4096) : randomBytes(4096);
  const fd = openSync(file, 'r+');
  try {
    writeSync(fd, data, 0, data.length, (page - 1) * 4096);
  } finally {
    closeSync(fd);
  }
}
