import { QmdError } from '../../errors.js';
import type { Sqlite } from '../sqlite.js';
import { collectionSettingsMigration } from './schema-collection-settings.js';
import { contentHashMigration } from './schema-content-hash.js';
import { contextsMigration } from './schema-contexts.js';
import { embeddingsMigration } from './schema-embeddings.js';
import { APPLICATION_ID } from './schema-id.js';
import { cellsMigration, vectorsMigration } from './schema-vectors.js';

/**
 * The schema, as numbered migrations tracked by `PRAGMA user_version`. Another feature (the
 * embeddings' chunk and vector tables) adds its tables by appending a migration in its own
 * file and listing it in `migrations` below; versions only ever go up.
 *
 * Layout (version 1; version 2, the embeddings, is described in `schema-embeddings.ts`, and
 * version 3, the contexts, in `schema-contexts.ts`; version 4, where vectors are found and
 * their compact codes, in `schema-vectors.ts`; version 6, qmd 2.x's collection settings, in
 * `schema-collection-settings.ts`; version 7, content hashes of text, in `schema-content-hash.ts`):
 * - `content` holds each distinct text once, keyed by its sha256 (two files with the same
 *   text share a row; embeddings will hang off this hash too, so identical notes are embedded
 *   once).
 * - `documents` is one row per indexed file. Its FTS5 index is external-content: it reads
 *   title and body through the `document_text` view, so the text is stored once, not twice.
 *   Triggers keep it in step with `documents`, including the cascade when a collection goes.
 *   External-content FTS must be told the exact old values to delete them, which is why the
 *   delete triggers run before `content` rows are collected (see `collectOrphanContent`).
 */
export interface Migration {
  version: number;
  up(db: Sqlite): void;
}

export { APPLICATION_ID };

const schemaV1 = `
CREATE TABLE collections (
  name TEXT PRIMARY KEY,
  root TEXT NOT NULL UNIQUE,
  mask TEXT NOT NULL,
  updated_at TEXT NOT NULL
) STRICT;

CREATE TABLE content (
  hash TEXT PRIMARY KEY,
  body TEXT NOT NULL
) STRICT;

CREATE TABLE documents (
  id INTEGER PRIMARY KEY,
  collection TEXT NOT NULL REFERENCES collections(name) ON DELETE CASCADE,
  path TEXT NOT NULL,
  docid TEXT NOT NULL UNIQUE,
  title TEXT NOT NULL,
  hash TEXT NOT NULL REFERENCES content(hash),
  mtime_ms REAL NOT NULL,
  size INTEGER NOT NULL,
  indexed_at TEXT NOT NULL,
  UNIQUE (collection, path)
) STRICT;

CREATE INDEX documents_by_hash ON documents(hash);

CREATE VIEW document_text(id, title, body) AS
  SELECT d.id, d.title, c.body FROM documents d JOIN content c ON c.hash = d.hash;

CREATE VIRTUAL TABLE documents_fts USING fts5(
  title, body,
  content = 'document_text', content_rowid = 'id',
  tokenize = 'porter unicode61'
);

CREATE TRIGGER documents_fts_insert AFTER INSERT ON documents BEGIN
  INSERT INTO documents_fts(rowid, title, body)
    SELECT NEW.id, NEW.title, body FROM content WHERE hash = NEW.hash;
END;

CREATE TRIGGER documents_fts_delete AFTER DELETE ON documents BEGIN
  INSERT INTO documents_fts(documents_fts, rowid, title, body)
    SELECT 'delete', OLD.id, OLD.title, body FROM content WHERE hash = OLD.hash;
END;

CREATE TRIGGER documents_fts_update AFTER UPDATE OF title, hash ON documents BEGIN
  INSERT INTO documents_fts(documents_fts, rowid, title, body)
    SELECT 'delete', OLD.id, OLD.title, body FROM content WHERE hash = OLD.hash;
  INSERT INTO documents_fts(rowid, title, body)
    SELECT NEW.id, NEW.title, body FROM content WHERE hash = NEW.hash;
END;
`;

export const migrations: readonly Migration[] = [
  { version: 1, up: (db) => db.exec(schemaV1) },
  embeddingsMigration,
  contextsMigration,
  vectorsMigration,
  cellsMigration,
  collectionSettingsMigration,
  contentHashMigration,
];

export const latestVersion = Math.max(...migrations.map((m) => m.version));

/** Brings the schema up to date. Each step runs in its own `BEGIN IMMEDIATE` transaction. */
export function migrate(db: Sqlite, indexPath: string): void {
  checkOwnership(db, indexPath);
  if (schemaVersion(db) >= latestVersion) return;
  db.transaction(() => {
    // Re-read inside the write lock: another process may have migrated while we waited.
    const current = schemaVersion(db);
    for (const migration of migrations) {
      if (migration.version <= current) continue;
      migration.up(db);
      db.pragma(`user_version = ${migration.version}`);
    }
    db.pragma(`application_id = ${APPLICATION_ID}`);
  });
}

export function schemaVersion(db: Sqlite): number {
  return db.pragmaValue<number>('user_version') as number;
}

/** Refuses a SQLite file that some other program made, and one from a newer qmd. */
export function checkOwnership(db: Sqlite, indexPath: string): void {
  const applicationId = db.pragmaValue<number>('application_id') as number;
  const tables = db.value<number>("SELECT count(*) FROM sqlite_schema WHERE name NOT LIKE 'sqlite_%'") as number;
  if (applicationId !== APPLICATION_ID && tables > 0) {
    if (isPeerIndex(db)) {
      throw new QmdError(
        'INDEX_CORRUPT',
        `${indexPath} is an index of qmd 2.x (@tobilu/qmd), not of this qmd: run qmd migrate to build ours from it (it stays as it is), or choose another --index`,
      );
    }
    throw new QmdError(
      'INDEX_CORRUPT',
      `${indexPath} is a SQLite database but not a qmd index; choose another --index`,
    );
  }
  const version = schemaVersion(db);
  if (version > latestVersion) {
    // No dedicated error code: the user's action is the same as for a bad argument (use
    // another --index, or upgrade qmd).
    throw new QmdError(
      'BAD_ARGUMENT',
      `The index ${indexPath} has schema version ${version}, newer than this qmd understands (${latestVersion}); upgrade qmd or use another --index`,
    );
  }
}

/**
 * An index made by qmd 2.x (the peer, `@tobilu/qmd`; 1.x too): its `documents` table has the
 * `active` column (a deleted file's row is kept inactive) and it caches LLM answers in
 * `llm_cache`. Ours has neither.
 */
export function isPeerIndex(db: Sqlite): boolean {
  const cache = db.value<number>("SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'llm_cache'");
  if (cache !== 1) return false;
  const active = db.value<number>("SELECT count(*) FROM pragma_table_info('documents') WHERE name = 'active'");
  return active === 1;
}
