import { textHash, textMatchesHash } from '../../text/content-hash.js';
import type { Sqlite } from '../sqlite.js';
import type { Migration } from './schema.js';

/**
 * Version 7: every content row's hash is its text's (`src/text/content-hash.ts`), as qmd 2.x
 * hashes a note. Until version 6 a note was hashed by its file's bytes, which is the same
 * for every file that is valid UTF-8; a file that was not has its text stored with U+FFFD
 * where its bytes were invalid, and a hash of bytes no longer kept: `get` could not check that
 * text, and qmd 2.x's docid for that note (the start of its text's hash) named nothing here.
 *
 * Such rows are found by their U+FFFD (a read of every text, once: 0.35 s per 100 MiB of text
 * here, `bench/docid-lookup.ts`) and moved to their text's hash, with their chunks and documents (the triggers follow
 * the documents: FTS rows, vector rows). Nothing is read from the files; a note whose file
 * also began with a byte-order mark gets the hash of its text without it.
 */
function rehashUndecodableText(db: Sqlite): void {
  const suspects = db
    .prepare<[], { hash: string; body: string }>(
      // U+FFFD's UTF-8 bytes, searched as bytes: 20% faster than instr() over characters.
      "SELECT hash, body FROM content WHERE instr(CAST(body AS BLOB), X'EFBFBD') > 0",
    )
    .all();
  const insert = db.prepare<[string, string]>('INSERT OR IGNORE INTO content (hash, body) VALUES (?, ?)');
  const moveChunks = db.prepare<[string, string]>(
    'UPDATE OR IGNORE chunks SET content_hash = ? WHERE content_hash = ?',
  );
  const moveDocuments = db.prepare<[string, string]>('UPDATE documents SET hash = ? WHERE hash = ?');
  // Chunks the move left behind (the new hash had them already) go by cascade.
  const drop = db.prepare<[string]>('DELETE FROM content WHERE hash = ?');
  for (const { hash, body } of suspects) {
    if (textMatchesHash(body, hash)) continue;
    const fresh = textHash(body);
    insert.run(fresh, body);
    moveChunks.run(fresh, hash);
    moveDocuments.run(fresh, hash);
    drop.run(hash);
  }
}

export const contentHashMigration: Migration = { version: 7, up: rehashUndecodableText };
