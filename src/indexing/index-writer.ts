import { createHash } from 'node:crypto';
import type { Sqlite } from '../store/sqlite.js';
import type { CollectionScan, KnownFile, ReadFile } from './scan.js';

/**
 * Staged files applied per page: between two yields of the write phase (progress, a second
 * Ctrl-C), and read as a page of keys before any is written (better-sqlite3 refuses a write
 * while a read of the same connection is unfinished, docs/design.md §5).
 */
const APPLY_PAGE = 256;

/** A staged file as a page of `apply` reads it: everything but its text. */
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
 * What a write changed, path by path, for a caller that tells others (a watcher's committed
 * batch): the paths added and updated, and the texts they replaced or dropped (`replaced`:
 * content hashes that may now be orphans) and brought in (`texts`: to embed).
 */
export interface AppliedPaths {
  added: string[];
  updated: string[];
  removed: string[];
  replaced: Set<string>;
  /** Each path added or updated, with the text it holds now. */
  texts: Array<{ path: string; hash: string }>;
}

/**
 * Indexing in bounded memory (docs/design.md §8.5). The read phase hands each batch of files
 * to `stage`, which parks it in a TEMP table (this connection's own temporary file: no lock
 * on the index, nothing left in the heap), with the paths of every file found (`temp.seen`);
 * the write phase, in the caller's one transaction, streams the staged rows into the index
 * (`apply`) and deletes the rows no batch saw (`finish`). Rows
 * are looked up by (collection, path) through the index, never as a map of the collection,
 * and re-read inside the write lock, so a scan computed while another process updated the
 * same collection still applies cleanly (upsert by path, delete what is gone).
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
  private readonly insertStaged;
  private readonly selectStaged;
  private readonly selectStagedText;
  private readonly clearStaged;
  private readonly insertSeen;
  private readonly clearSeen;
  private readonly countStaged;
  private readonly selectUnder;
  private readonly hashUsed;
  private readonly chunkHashesOf;
  private readonly deleteContent;
  private readonly deleteOrphanEmbeddings;
  private runs = 0;

  constructor(private readonly db: Sqlite) {
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
    this.countStaged = db.column<[bigint], number>('SELECT count(*) FROM temp.staged WHERE run = ?');
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
    this.selectGone = db.prepare<{ collection: string; run: bigint }, { id: number }>(
      `SELECT d.id FROM documents d WHERE d.collection = @collection AND NOT EXISTS
         (SELECT 1 FROM temp.seen s WHERE s.run = @run AND s.collection = @collection AND s.path = d.path)`,
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
    // A path and everything under it as a folder: `/` + 1 is `0`, so the range is the subtree.
    this.selectUnder = db.prepare<[string, string, string, string], { id: number; path: string; hash: string }>(
      `SELECT id, path, hash FROM documents WHERE collection = ? AND (path = ? OR (path >= ? AND path < ?))`,
    );
    this.hashUsed = db.column<[string], unknown>('SELECT 1 FROM documents WHERE hash = ? LIMIT 1');
    this.chunkHashesOf = db.column<[string], string>('SELECT hash FROM chunks WHERE content_hash = ?');
    this.deleteContent = db.prepare<[string]>('DELETE FROM content WHERE hash = ?');
    this.deleteOrphanEmbeddings = db.prepare<[string, string]>(
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

  /** How many files a run has staged, for the write phase's progress. */
  stagedCount(run: bigint): number {
    return this.countStaged.get(run) ?? 0;
  }

  /**
   * Applies a collection's staged files (inside the caller's transaction), adding to `counts`;
   * returns how many. A page of `APPLY_PAGE` files' keys at a time, each text read only when it
   * is written (a page of texts could be as large as the notes are); between pages it tells
   * `progress` how many it has applied and yields to the event loop. Nothing else writes on
   * this connection meanwhile (the command that owns it is waiting on this).
   */
  async apply(
    run: bigint,
    collection: string,
    now: string,
    counts: WriteCounts,
    progress?: (applied: number) => void,
    record?: AppliedPaths,
  ): Promise<number> {
    let seen = 0;
    for (let after = 0; ; ) {
      const page = this.selectStaged.all(run, collection, after, APPLY_PAGE);
      for (const staged of page) this.applyOne(collection, staged, now, counts, record);
      seen += page.length;
      const last = page.at(-1);
      if (last === undefined || page.length < APPLY_PAGE) break;
      after = last.seq;
      progress?.(seen);
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    progress?.(seen);
    return seen;
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
      counts.updated++;
      record?.updated.push(staged.path);
      record?.replaced.add(row.hash);
    }
    record?.texts.push({ path: staged.path, hash: staged.hash });
  }

  /**
   * Deletes the documents at each path, or under it when it was a folder (inside the caller's
   * transaction), one indexed range each: never a scan of the collection. Adds to `counts`
   * and `record` (the paths removed and the texts they held).
   */
  removePaths(collection: string, paths: readonly string[], counts: WriteCounts, record: AppliedPaths): void {
    for (const gone of paths) {
      for (const row of this.selectUnder.all(collection, gone, `${gone}/`, `${gone}0`)) {
        this.deleteDocument.run(row.id);
        counts.removed++;
        record.removed.push(row.path);
        record.replaced.add(row.hash);
      }
    }
  }

  /**
   * `collectOrphanContent` for the texts named only: each one no document holds any more is
   * deleted (its chunks go by cascade), and so are the vectors of its chunks that no other
   * text has. Indexed lookups only, so a watcher's small write stays small at any size; the
   * whole-table sweep is `update`'s.
   */
  collectOrphansOf(hashes: Iterable<string>): void {
    for (const hash of hashes) {
      if (this.hashUsed.get(hash) !== undefined) continue;
      const chunks = this.chunkHashesOf.all(hash);
      this.deleteContent.run(hash);
      for (const chunk of new Set(chunks)) this.deleteOrphanEmbeddings.run(chunk, chunk);
    }
  }

  /**
   * After the last batch: deletes the rows of files no batch saw, and stamps the collection.
   * A scan that was stopped saw only some of its files: nothing of it is deleted or stamped.
   */
  finish(run: bigint, scan: CollectionScan, now: string, counts: WriteCounts): void {
    counts.unchanged += scan.unchangedByStat;
    if (scan.skipped || scan.stopped) return;
    const gone: number[] = [];
    for (const row of this.selectGone.iterate({ collection: scan.collection, run })) gone.push(row.id);
    for (const id of gone) this.deleteDocument.run(id);
    counts.removed += gone.length;
    this.touchCollection.run(now, scan.collection);
  }

  /** The indexed paths at `folder` or under it, for a watcher that re-reads a folder. */
  pathsUnder(collection: string, folder: string): string[] {
    return this.selectUnder.all(collection, folder, `${folder}/`, `${folder}0`).map((row) => row.path);
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
