import { createHash } from 'node:crypto';
import type { Sqlite } from '../store/sqlite.js';
import type { KnownFile, ReadFile } from './scan.js';

/**
 * The most staged files one `applyStaged` writes: a unit of the write phase (`write-units.ts`),
 * read as a page of keys before any is written (better-sqlite3 refuses a write while a read of
 * the same connection is unfinished, docs/design.md §5). The read phase's batches are no larger.
 */
export const UNIT_FILES = 256;

/** A staged file as `applyStaged` reads it: everything but its text. */
interface StagedKeys {
  seq: number;
  path: string;
  mtime_ms: number;
  size: number;
  hash: string;
  /** 1 when its text was read (it is staged), 0 when the read phase saw the indexed hash. */
  read: number;
  title: string | null;
}

export interface WriteCounts {
  added: number;
  updated: number;
  removed: number;
  unchanged: number;
}

/**
 * What a watcher's write changed, path by path, for those it tells (a committed batch): the
 * paths added, updated and removed, and each path added or updated with the text it holds now
 * (to embed).
 */
export interface AppliedPaths {
  added: string[];
  updated: string[];
  removed: string[];
  texts: Array<{ path: string; hash: string }>;
}

/**
 * Indexing in bounded memory (docs/design.md §8.5). The read phase hands each batch of files
 * to `stage`, which parks it in a TEMP table (this connection's own temporary file: no lock
 * on the index, nothing left in the heap), with the paths of every file found (`temp.seen`);
 * each unit of the write phase (`write-units.ts`: one short transaction) moves staged rows into
 * the index (`applyStaged`), and once a collection is read in full deletes, page by page, the
 * rows no batch saw (`removeGone`). Rows are looked up by (collection, path) through the
 * index, never as a map of the collection, and re-read inside the write lock, so a scan
 * computed while another process updated the same collection still applies cleanly (upsert by
 * path, delete what is gone). The text a unit stops using is collected in that unit
 * (`collectReplaced`), by its hash, not by a scan of every text.
 */
export class IndexWriter {
  private readonly selectKnown;
  private readonly selectGone;
  private readonly insertContent;
  private readonly insertDocument;
  private readonly updateDocument;
  private readonly touchDocument;
  private readonly deleteDocument;
  private readonly docidTaken;
  private readonly touchCollection;
  private readonly deleteOrphanContent;
  private readonly deleteContentIfUnused;
  private readonly unstageFile;
  private readonly insertStaged;
  private readonly selectStaged;
  private readonly selectStagedText;
  private readonly clearStaged;
  private readonly insertSeen;
  private readonly clearSeen;
  private readonly selectUnder;
  private readonly chunkHashesOf;
  private readonly deleteOrphanVectors;
  private runs = 0;
  /** Texts the documents written since the last `collectReplaced` stopped using. */
  private readonly replaced = new Set<string>();
  /**
   * Texts of the documents `removeGone` deleted, collected only once the command's units are
   * all done (`collectRemoved`): a note moved to another collection is deleted from one before
   * it is added to the other, and keeps its text, chunks and vectors that way.
   */
  private readonly removed = new Set<string>();

  /**
   * `vectorsFollow`: the writer of a watcher, after which no `qmd embed` comes to collect the
   * vectors a replaced text leaves behind: `collectReplaced` deletes them with their text.
   */
  constructor(
    private readonly db: Sqlite,
    private readonly options: { vectorsFollow?: boolean } = {},
  ) {
    db.exec(`CREATE TEMP TABLE IF NOT EXISTS staged (
      seq INTEGER PRIMARY KEY, run INTEGER NOT NULL, collection TEXT NOT NULL, path TEXT NOT NULL, mtime_ms REAL NOT NULL,
      size INTEGER NOT NULL, hash TEXT NOT NULL, text TEXT, title TEXT)`);
    this.insertStaged = db.prepare<[bigint, string, string, number, number, string, string | null, string | null]>(
      'INSERT INTO temp.staged (run, collection, path, mtime_ms, size, hash, text, title) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
    );
    this.selectStaged = db.prepare<[bigint, string, number, number], StagedKeys>(
      `SELECT seq, path, mtime_ms, size, hash, text IS NOT NULL AS read, title FROM temp.staged
       WHERE run = ? AND collection = ? AND seq > ? ORDER BY seq LIMIT ?`,
    );
    this.selectStagedText = db.column<[number], string>('SELECT text FROM temp.staged WHERE seq = ?');
    this.clearStaged = db.prepare<[bigint]>('DELETE FROM temp.staged WHERE run = ?');
    this.unstageFile = db.prepare<[number]>('DELETE FROM temp.staged WHERE seq = ?');
    // Paths arrive sorted within a collection, so the key appends at the b-tree's end.
    db.exec(`CREATE TEMP TABLE IF NOT EXISTS seen (
      run INTEGER NOT NULL, collection TEXT NOT NULL, path TEXT NOT NULL, PRIMARY KEY (run, collection, path)) WITHOUT ROWID`);
    this.insertSeen = db.prepare<[bigint, string, string]>(
      'INSERT OR IGNORE INTO temp.seen (run, collection, path) VALUES (?, ?, ?)',
    );
    this.clearSeen = db.prepare<[bigint]>('DELETE FROM temp.seen WHERE run = ?');
    this.selectKnown = db.prepare<[string, string], { id: number; mtime_ms: number; size: number; hash: string }>(
      'SELECT id, mtime_ms, size, hash FROM documents WHERE collection = ? AND path = ?',
    );
    // Named, not `?1`: better-sqlite3 binds only bare `?` by position.
    this.selectGone = db.prepare<{ collection: string; run: bigint; limit: number }, { id: number; hash: string }>(
      `SELECT d.id, d.hash FROM documents d WHERE d.collection = @collection AND NOT EXISTS
         (SELECT 1 FROM temp.seen s WHERE s.run = @run AND s.collection = @collection AND s.path = d.path)
       LIMIT @limit`,
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
    this.deleteContentIfUnused = db.prepare<{ hash: string }>(
      'DELETE FROM content WHERE hash = @hash AND NOT EXISTS (SELECT 1 FROM documents d WHERE d.hash = @hash)',
    );
    // A path and everything under it as a folder: `/` + 1 is `0`, so the range is the subtree.
    this.selectUnder = db.prepare<[string, string, string, string, number], { id: number; path: string; hash: string }>(
      `SELECT id, path, hash FROM documents WHERE collection = ? AND (path = ? OR (path >= ? AND path < ?)) LIMIT ?`,
    );
    this.chunkHashesOf = db.column<[string], string>('SELECT hash FROM chunks WHERE content_hash = ?');
    this.deleteOrphanVectors = db.prepare<[string, string]>(
      'DELETE FROM embeddings WHERE chunk_hash = ? AND NOT EXISTS (SELECT 1 FROM chunks WHERE hash = ?)',
    );
  }

  /** What the index has for one file, so the read phase can skip it unchanged. */
  known(collection: string, path: string): KnownFile | undefined {
    const row = this.selectKnown.get(collection, path);
    return row === undefined ? undefined : { mtimeMs: row.mtime_ms, size: row.size, hash: row.hash };
  }

  /** A key for one command's staged files: two commands on one store never mix theirs. */
  newRun(): bigint {
    return BigInt(++this.runs);
  }

  /**
   * Parks a batch of read files, and the paths of the files found, until the write phase
   * (outside any transaction on the index).
   */
  stage(run: bigint, collection: string, files: readonly ReadFile[], seen: readonly string[]): void {
    this.db.exec('BEGIN');
    try {
      for (const f of files) {
        this.insertStaged.run(run, collection, f.path, f.mtimeMs, f.size, f.hash, f.text ?? null, f.title ?? null);
      }
      for (const path of seen) this.insertSeen.run(run, collection, path);
      this.db.exec('COMMIT');
    } catch (error) {
      if (this.db.inTransaction) this.db.exec('ROLLBACK');
      throw error;
    }
  }

  /** Empties the staging tables (after COMMIT or ROLLBACK). */
  unstage(run: bigint): void {
    if (!this.db.isOpen) return;
    this.clearStaged.run(run);
    this.clearSeen.run(run);
  }

  /**
   * Writes up to `UNIT_FILES` of a collection's staged files, oldest first, inside the
   * caller's transaction, adding to `counts`, and takes them off the stage (a rollback puts
   * them back). Returns how many it took, and whether any is left. Each text is read from the
   * stage only when it is written (a page of texts could be as large as the notes are).
   * `record` (a watcher's write) is told each path added or updated.
   */
  applyStaged(
    run: bigint,
    collection: string,
    now: string,
    counts: WriteCounts,
    record?: AppliedPaths,
  ): { applied: number; more: boolean } {
    const page = this.selectStaged.all(run, collection, 0, UNIT_FILES + 1);
    const unit = page.slice(0, UNIT_FILES);
    for (const staged of unit) {
      this.applyOne(collection, staged, now, counts, record);
      this.unstageFile.run(staged.seq);
    }
    return { applied: unit.length, more: page.length > unit.length };
  }

  private applyOne(
    collection: string,
    staged: StagedKeys,
    now: string,
    counts: WriteCounts,
    record: AppliedPaths | undefined,
  ): void {
    const row = this.selectKnown.get(collection, staged.path);
    if (row !== undefined && row.hash === staged.hash) {
      this.touchDocument.run(staged.mtime_ms, staged.size, row.id);
      counts.unchanged++;
      return;
    }
    // No text: the read phase saw the indexed hash, and another process changed the row
    // since. Leave it; the next update reads the file again.
    if (staged.read === 0 || staged.title === null) return;
    const text = this.selectStagedText.get(staged.seq) as string;
    this.insertContent.run(staged.hash, text);
    if (row === undefined) {
      const docid = this.newDocid(collection, staged.path);
      this.insertDocument.run(
        collection,
        staged.path,
        docid,
        staged.title,
        staged.hash,
        staged.mtime_ms,
        staged.size,
        now,
      );
      counts.added++;
      record?.added.push(staged.path);
    } else {
      this.updateDocument.run(staged.title, staged.hash, staged.mtime_ms, staged.size, now, row.id);
      this.replaced.add(row.hash);
      counts.updated++;
      record?.updated.push(staged.path);
    }
    record?.texts.push({ path: staged.path, hash: staged.hash });
  }

  /**
   * A watcher's removal: deletes up to `limit` documents at the paths given, or under them when
   * they were folders (inside the caller's transaction), one indexed range each: never a scan
   * of the collection. Their texts are collected in the same unit (`collectReplaced`): a note
   * renamed in one batch is added before its old path is removed, and keeps its text. Returns
   * how many were deleted: fewer than `limit` when none is left.
   */
  removePaths(
    collection: string,
    paths: readonly string[],
    counts: WriteCounts,
    record: AppliedPaths,
    limit = UNIT_FILES,
  ): number {
    let deleted = 0;
    for (const gone of paths) {
      if (deleted >= limit) break;
      for (const row of this.selectUnder.all(collection, gone, `${gone}/`, `${gone}0`, limit - deleted)) {
        this.deleteDocument.run(row.id);
        this.replaced.add(row.hash);
        record.removed.push(row.path);
        deleted++;
      }
    }
    counts.removed += deleted;
    return deleted;
  }

  /** The indexed paths at `folder` or under it, for a watcher that re-reads a folder. */
  pathsUnder(collection: string, folder: string): string[] {
    return this.selectUnder.all(collection, folder, `${folder}/`, `${folder}0`, -1).map((row) => row.path);
  }

  /**
   * Once a collection was read in full: deletes up to `UNIT_FILES` rows of files no batch saw
   * (inside the caller's transaction). Returns how many: 0 when none is left. A scan that was
   * stopped or skipped saw only some of its files: nothing of it may be deleted (the caller
   * never asks).
   */
  removeGone(run: bigint, collection: string, counts: WriteCounts): number {
    const gone = this.selectGone.all({ collection, run, limit: UNIT_FILES });
    for (const row of gone) {
      this.deleteDocument.run(row.id);
      this.removed.add(row.hash);
    }
    counts.removed += gone.length;
    return gone.length;
  }

  /** The collection was brought up to date: its `updated_at`. */
  stamp(collection: string, now: string): void {
    this.touchCollection.run(now, collection);
  }

  /**
   * Deletes the texts the documents written since the last call stopped using, when no other
   * document uses them (inside the caller's transaction, after the documents' delete triggers,
   * which need the old text to unindex it). One indexed lookup per text; with `vectorsFollow`,
   * the vectors of its chunks that no other text has go too.
   */
  collectReplaced(): void {
    for (const hash of this.replaced) this.collectText(hash);
    this.replaced.clear();
  }

  private collectText(hash: string): void {
    if (this.options.vectorsFollow !== true) {
      this.deleteContentIfUnused.run({ hash });
      return;
    }
    // Read before the delete: the chunks go with their text (ON DELETE CASCADE).
    const chunks = new Set(this.chunkHashesOf.all(hash));
    if (this.deleteContentIfUnused.run({ hash }).changes === 0) return;
    for (const chunk of chunks) this.deleteOrphanVectors.run(chunk, chunk);
  }

  /**
   * `collectReplaced` for the texts of removed documents, at most `limit` of them (inside the
   * caller's transaction). Returns how many are left.
   */
  collectRemoved(limit: number): number {
    for (const hash of this.removed) {
      if (limit-- <= 0) break;
      this.deleteContentIfUnused.run({ hash });
      this.removed.delete(hash);
    }
    return this.removed.size;
  }

  /**
   * The transaction was rolled back: what it wrote is not there, and neither is the need to
   * collect after it. (A text a rolled-back `removeGone` meant to collect stays listed: its
   * collection is a lookup that finds the text still used, and keeps it.)
   */
  forgetReplaced(): void {
    this.replaced.clear();
  }

  /** Every text no document uses (a collection removed): a scan of every text. */
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
