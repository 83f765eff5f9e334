import type { Migration } from './schema.js';

/**
 * Version 2: chunks, their embeddings, and the state that ties them to one model.
 *
 * - `chunks` hang off `content` (the text, keyed by its sha256), not off `documents`: two
 *   files with the same text are chunked and embedded once, and a chunk goes with its text
 *   (ON DELETE CASCADE when `collectOrphanContent` drops the text). `hash` is the sha256 of
 *   what is embedded for the chunk (`title: … | text: …`, see `chunks.ts`); the span is kept
 *   as offsets into the body, which is stored once, in `content`.
 * - `embeddings` are keyed by (model fingerprint, chunk hash): a chunk is embedded again only
 *   when its text or the model changes. `vector` (float32, little-endian, L2-normalized) is
 *   the source of truth and what the fallback scan reads when sqlite-vec cannot load.
 * - Until version 4, a float sqlite-vec `vec0` copy (`chunk_vectors`, rowid = `embeddings.id`),
 *   created by `vectors.ts`, answered KNN queries, and `embedding_state.changes` (bumped by
 *   triggers on `embeddings`) against `vec_synced` told readers whether it was in step.
 *   Version 4 (`schema-vectors.ts`) replaced both: int8 codes partitioned by collection, kept
 *   in step through a queue; `changes` and `vec_synced` stay, unused.
 * - `embedding_state` is one row: the model the index is embedded with (spec, fingerprint,
 *   dimension, most tokens per input) and the chunker that made `chunks`. Knowing dimension and
 *   input size by fingerprint lets a run with nothing to embed skip loading llama.cpp.
 */
const schemaV2 = `
CREATE TABLE chunks (
  content_hash TEXT NOT NULL REFERENCES content(hash) ON DELETE CASCADE,
  seq INTEGER NOT NULL,
  hash TEXT NOT NULL,
  start_offset INTEGER NOT NULL,
  end_offset INTEGER NOT NULL,
  line INTEGER NOT NULL,
  PRIMARY KEY (content_hash, seq)
) STRICT, WITHOUT ROWID;

CREATE INDEX chunks_by_hash ON chunks(hash);

CREATE TABLE embeddings (
  id INTEGER PRIMARY KEY,
  model TEXT NOT NULL,
  chunk_hash TEXT NOT NULL,
  dims INTEGER NOT NULL,
  vector BLOB NOT NULL,
  embedded_at TEXT NOT NULL,
  UNIQUE (model, chunk_hash)
) STRICT;

CREATE TABLE embedding_state (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  model TEXT,
  fingerprint TEXT,
  dims INTEGER,
  max_tokens INTEGER,
  chunker TEXT,
  changes INTEGER NOT NULL DEFAULT 0,
  vec_dims INTEGER,
  vec_synced INTEGER
) STRICT;

INSERT INTO embedding_state (id) VALUES (1);

CREATE TRIGGER embeddings_count_insert AFTER INSERT ON embeddings BEGIN
  UPDATE embedding_state SET changes = changes + 1;
END;

CREATE TRIGGER embeddings_count_delete AFTER DELETE ON embeddings BEGIN
  UPDATE embedding_state SET changes = changes + 1;
END;
`;

export const embeddingsMigration: Migration = { version: 2, up: (db) => db.exec(schemaV2) };
