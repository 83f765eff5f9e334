import { createHash } from 'node:crypto';
import type { CollectionScan, KnownFile } from './scan.js';
import type { Sqlite } from './sqlite.js';

export interface WriteCounts {
  added: number;
  updated: number;
  removed: number;
  unchanged: number;
}

/**
 * The write phase of indexing: applies read-phase results with prepared statements. The
 * caller wraps every call in one transaction. The rows are re-read here, inside the write
 * lock, so a scan computed while another process updated the same collection still applies
 * cleanly (upsert by path, delete what is gone).
 */
export class IndexWriter {
  private readonly selectKnown;
  private readonly selectRows;
  private readonly insertContent;
  private readonly insertDocument;
  private readonly updateDocument;
  private readonly touchDocument;
  private readonly deleteDocument;
  private readonly docidTaken;
  private readonly touchCollection;
  private readonly deleteOrphanContent;

  constructor(db: Sqlite) {
    this.selectKnown = db.prepare<[string], { path: string; mtime_ms: number; size: number; hash: string }>(
      'SELECT path, mtime_ms, size, hash FROM documents WHERE collection = ?',
    );
    this.selectRows = db.prepare<[string], { id: number; path: string; hash: string }>(
      'SELECT id, path, hash FROM documents WHERE collection = ?',
    );
    this.insertContent = db.prepare<[string, string]>('INSERT OR IGNORE INTO content (hash, body) VALUES (?, ?)');
    this.insertDocument = db.prepare<[string, string, string, string, string, number, number, string]>(
      `INSERT INTO documents (collection, path, docid, title, hash, mtime_ms, size, indexed_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    this.updateDocument = db.prepare<[string, string, number, number, string, number]>(
      'UPDATE documents SET title = ?, hash = ?, mtime_ms = ?, size = ?, indexed_at = ? WHERE id = ?',
    );
    this.touchDocument = db.prepare<[number, number, number]>(
      'UPDATE documents SET mtime_ms = ?, size = ? WHERE id = ?',
    );
    this.deleteDocument = db.prepare<[number]>('DELETE FROM documents WHERE id = ?');
    this.docidTaken = db.column<[string], unknown>('SELECT 1 FROM documents WHERE docid = ?');
    this.touchCollection = db.prepare<[string, string]>('UPDATE collections SET updated_at = ? WHERE name = ?');
    // Runs after the documents' delete triggers, which need the old body to unindex it.
    this.deleteOrphanContent = db.prepare(
      'DELETE FROM content WHERE NOT EXISTS (SELECT 1 FROM documents d WHERE d.hash = content.hash)',
    );
  }

  /** What the index has for a collection, so the read phase can skip unchanged files. */
  known(collection: string): Map<string, KnownFile> {
    const rows = this.selectKnown.all(collection);
    return new Map(rows.map((row) => [row.path, { mtimeMs: row.mtime_ms, size: row.size, hash: row.hash }]));
  }

  apply(scan: CollectionScan, now: string): WriteCounts {
    const counts: WriteCounts = { added: 0, updated: 0, removed: 0, unchanged: scan.unchangedByStat };
    if (scan.skipped) return counts;
    const current = new Map(this.selectRows.all(scan.collection).map((row) => [row.path, row]));
    for (const file of scan.read) {
      const row = current.get(file.path);
      if (row !== undefined && row.hash === file.hash) {
        this.touchDocument.run(file.mtimeMs, file.size, row.id);
        counts.unchanged++;
        continue;
      }
      // No text: the read phase saw the indexed hash, and another process changed the row
      // since. Leave it; the next update reads the file again.
      if (file.text === undefined || file.title === undefined) continue;
      this.insertContent.run(file.hash, file.text);
      if (row === undefined) {
        const docid = this.newDocid(scan.collection, file.path);
        this.insertDocument.run(scan.collection, file.path, docid, file.title, file.hash, file.mtimeMs, file.size, now);
        counts.added++;
      } else {
        this.updateDocument.run(file.title, file.hash, file.mtimeMs, file.size, now, row.id);
        counts.updated++;
      }
    }
    for (const [path, row] of current) {
      if (scan.found.has(path)) continue;
      this.deleteDocument.run(row.id);
      counts.removed++;
    }
    this.touchCollection.run(now, scan.collection);
    return counts;
  }

  collectOrphanContent(): void {
    this.deleteOrphanContent.run();
  }

  /**
   * 8 hex characters of sha256(`collection/path`): the same file keeps the same id across
   * updates, re-adds and machines. On a collision (about 1 in 4 billion per pair) it grows by
   * 2 characters; the stored id never changes afterwards.
   */
  private newDocid(collection: string, path: string): string {
    const full = createHash('sha256').update(`${collection}/${path}`).digest('hex');
    for (let length = 8; length < full.length; length += 2) {
      const candidate = full.slice(0, length);
      if (this.docidTaken.get(candidate) === undefined) return candidate;
    }
    return full;
  }
}
