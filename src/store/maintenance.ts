import * as fs from 'node:fs';
import { checkFolder } from './folder.js';
import type { Sqlite } from './sqlite.js';
import type { CleanupReport, DocumentEntry } from './types.js';
import type { Vectors } from './vectors/vectors.js';
import { prefixRange } from './vectors/vectors.js';

/**
 * The documents of one collection, by path; with `prefix`, the one at that path or those
 * under it (whole segments, read as the folder filter is: `folder.ts`): what `qmd ls` lists.
 */
export function listDocuments(db: Sqlite, collection: string, prefix?: string): DocumentEntry[] {
  const folder = checkFolder(prefix);
  const range = prefixRange(folder);
  const rows = db
    .prepare<Record<string, string>, { path: string; docid: string; title: string; size: number; mtime_ms: number }>(
      `SELECT path, docid, title, size, mtime_ms FROM documents WHERE collection = @collection
       ${range === undefined ? '' : 'AND (path = @exact OR (path >= @low AND path < @high))'} ORDER BY path`,
    )
    .all({ collection, ...(range !== undefined && { ...range, exact: folder as string }) });
  return rows.map((row) => ({
    file: `${collection}/${row.path}`,
    path: row.path,
    docid: `#${row.docid}`,
    title: row.title,
    size: row.size,
    modified: new Date(row.mtime_ms).toISOString(),
  }));
}

/**
 * `qmd cleanup`: what nothing uses any more goes, then the full-text index's segments are
 * merged and the file VACUUMed (qmd 2.x's cleanup, less its LLM cache, which qmd has not).
 * Orphans are rare here: `update` collects content no document has and `embed` vectors no
 * chunk has, in the transactions that orphan them; what stays is the vectors of a model the
 * index is no longer embedded with (kept so that switching back costs nothing) and whatever
 * a process killed between two steps left. With `dryRun`, only counts.
 */
export function cleanupIndex(db: Sqlite, vectors: Vectors, file: string, options: { dryRun?: boolean }): CleanupReport {
  const current = vectors.state().fingerprint;
  const counts = {
    orphanedContent:
      db.value<number>(
        'SELECT count(*) FROM content WHERE NOT EXISTS (SELECT 1 FROM documents d WHERE d.hash = content.hash)',
      ) ?? 0,
    orphanedChunks: 0,
    orphanedEmbeddings:
      db.value<number>(
        `SELECT count(*) FROM embeddings WHERE model IS NOT ?
         OR NOT EXISTS (SELECT 1 FROM chunks c WHERE c.hash = embeddings.chunk_hash)`,
        current,
      ) ?? 0,
  };
  // Chunks go with their content (ON DELETE CASCADE): those of orphaned content are counted.
  counts.orphanedChunks =
    db.value<number>(
      'SELECT count(*) FROM chunks WHERE NOT EXISTS (SELECT 1 FROM documents d WHERE d.hash = chunks.content_hash)',
    ) ?? 0;
  const bytesBefore = fileSize(file);
  if (options.dryRun) return { ...counts, bytesBefore, bytesAfter: bytesBefore };
  db.transaction(() => {
    db.exec('DELETE FROM content WHERE NOT EXISTS (SELECT 1 FROM documents d WHERE d.hash = content.hash)');
    db.prepare<[string | null]>(
      `DELETE FROM embeddings WHERE model IS NOT ?
       OR NOT EXISTS (SELECT 1 FROM chunks c WHERE c.hash = embeddings.chunk_hash)`,
    ).run(current);
    vectors.syncCodes();
    db.exec(`INSERT INTO documents_fts(documents_fts) VALUES ('optimize')`);
  });
  db.exec('VACUUM');
  db.pragma('wal_checkpoint(TRUNCATE)');
  return { ...counts, bytesBefore, bytesAfter: fileSize(file) };
}

function fileSize(file: string): number {
  try {
    return fs.statSync(file).size;
  } catch {
    return 0;
  }
}
