import { silentLog } from '../../log.js';
import type { Sqlite } from '../sqlite.js';
import { Vectors } from '../vectors/vectors.js';
import type { Migration } from './schema.js';

/**
 * Version 4: the vector index keeps one float copy, and answers filters itself (docs/design.md
 * §8.2, §8.3).
 *
 * - `embeddings.vector` (float32, normalized) is the only float copy. The float vec0 table of
 *   version 2 (`chunk_vectors`) goes: `vectors.ts` drops it the first time it runs with
 *   sqlite-vec loaded (dropping a vec0 table needs the module, which this step may not have).
 * - `vector_rows` says where each vector is found: one row per (embedding, document) whose
 *   text has that chunk, with the document's collection and path copied in. It is what the
 *   compact codes (`chunk_codes`, a vec0 table with `collection` as its partition key and
 *   `path` as a metadata column, created by `vectors.ts` once the dimension is known) index:
 *   a code's rowid is a `vector_rows.id`. A chunk shared by several documents (a footer, a
 *   note in two collections) has a row, and a code, for each; its float vector is stored once.
 * - Triggers keep `vector_rows` exactly the join of `embeddings` (of the model the index is
 *   embedded with), `chunks` and `documents`, whoever writes and whether or not sqlite-vec is
 *   loaded: a document added, removed, changed or moved to another collection, a collection
 *   removed (its documents go by cascade), a chunk or an embedding added or collected.
 * - Every insert or delete in `vector_rows` queues its id in `code_queue`. A writer with
 *   sqlite-vec applies the queue to `chunk_codes` before it commits (`Vectors.syncCodes`), so
 *   the queue is empty after every commit of such a writer; readers use the codes only when it
 *   is empty. A writer without sqlite-vec leaves its changes queued for the next one that has it.
 *   This replaces version 2's `changes`/`vec_synced` counters (their triggers are dropped).
 */
// CROSS JOIN keeps chunks as the outer loop: the planner otherwise scanned every embedding of
// the model for each document inserted (measured: O(embeddings) a document).
const forDocument = (doc: 'NEW' | 'OLD') => `
    SELECT e.id, ${doc}.id, ${doc}.collection, ${doc}.path FROM chunks c
    CROSS JOIN embeddings e ON e.model = (SELECT fingerprint FROM embedding_state WHERE id = 1) AND e.chunk_hash = c.hash
    WHERE c.content_hash = ${doc}.hash`;

const schemaV4 = `
DROP TRIGGER embeddings_count_insert;
DROP TRIGGER embeddings_count_delete;

CREATE TABLE vector_rows (
  id INTEGER PRIMARY KEY,
  embedding_id INTEGER NOT NULL,
  document_id INTEGER NOT NULL,
  collection TEXT NOT NULL,
  path TEXT NOT NULL,
  UNIQUE (embedding_id, document_id)
) STRICT;

CREATE INDEX vector_rows_by_document ON vector_rows(document_id);

INSERT INTO vector_rows (embedding_id, document_id, collection, path)
  SELECT DISTINCT e.id, d.id, d.collection, d.path FROM embeddings e
  JOIN chunks c ON c.hash = e.chunk_hash
  JOIN documents d ON d.hash = c.content_hash
  WHERE e.model = (SELECT fingerprint FROM embedding_state WHERE id = 1)
  ORDER BY d.collection, d.path, e.id;

CREATE TABLE code_queue (row_id INTEGER PRIMARY KEY) STRICT;

CREATE TRIGGER vector_rows_queue_insert AFTER INSERT ON vector_rows BEGIN
  INSERT OR IGNORE INTO code_queue (row_id) VALUES (NEW.id);
END;

CREATE TRIGGER vector_rows_queue_delete AFTER DELETE ON vector_rows BEGIN
  INSERT OR IGNORE INTO code_queue (row_id) VALUES (OLD.id);
END;

CREATE TRIGGER documents_vectors_insert AFTER INSERT ON documents BEGIN
  INSERT OR IGNORE INTO vector_rows (embedding_id, document_id, collection, path) ${forDocument('NEW')};
END;

CREATE TRIGGER documents_vectors_delete AFTER DELETE ON documents BEGIN
  DELETE FROM vector_rows WHERE document_id = OLD.id;
END;

CREATE TRIGGER documents_vectors_update AFTER UPDATE OF hash, collection, path ON documents BEGIN
  DELETE FROM vector_rows WHERE document_id = OLD.id;
  INSERT OR IGNORE INTO vector_rows (embedding_id, document_id, collection, path) ${forDocument('NEW')};
END;

CREATE TRIGGER embeddings_vectors_insert AFTER INSERT ON embeddings
WHEN NEW.model = (SELECT fingerprint FROM embedding_state WHERE id = 1) BEGIN
  INSERT OR IGNORE INTO vector_rows (embedding_id, document_id, collection, path)
    SELECT NEW.id, d.id, d.collection, d.path FROM chunks c
    JOIN documents d ON d.hash = c.content_hash
    WHERE c.hash = NEW.chunk_hash;
END;

CREATE TRIGGER embeddings_vectors_delete AFTER DELETE ON embeddings BEGIN
  DELETE FROM vector_rows WHERE embedding_id = OLD.id;
END;

CREATE TRIGGER chunks_vectors_insert AFTER INSERT ON chunks BEGIN
  INSERT OR IGNORE INTO vector_rows (embedding_id, document_id, collection, path)
    SELECT e.id, d.id, d.collection, d.path FROM embeddings e
    JOIN documents d ON d.hash = NEW.content_hash
    WHERE e.model = (SELECT fingerprint FROM embedding_state WHERE id = 1) AND e.chunk_hash = NEW.hash;
END;

CREATE TRIGGER chunks_vectors_delete AFTER DELETE ON chunks
WHEN NOT EXISTS (SELECT 1 FROM chunks c WHERE c.content_hash = OLD.content_hash AND c.hash = OLD.hash) BEGIN
  DELETE FROM vector_rows
  WHERE embedding_id IN (SELECT id FROM embeddings
      WHERE model = (SELECT fingerprint FROM embedding_state WHERE id = 1) AND chunk_hash = OLD.hash)
    AND document_id IN (SELECT id FROM documents WHERE hash = OLD.content_hash);
END;

CREATE TRIGGER embedding_state_vectors AFTER UPDATE OF fingerprint ON embedding_state
WHEN NEW.fingerprint IS NOT OLD.fingerprint BEGIN
  DELETE FROM vector_rows;
  INSERT INTO vector_rows (embedding_id, document_id, collection, path)
    SELECT DISTINCT e.id, d.id, d.collection, d.path FROM embeddings e
    JOIN chunks c ON c.hash = e.chunk_hash
    JOIN documents d ON d.hash = c.content_hash
    WHERE e.model = NEW.fingerprint;
END;
`;

/**
 * Builds the codes of an index that has vectors (an older index being upgraded) when
 * sqlite-vec loads here: a `qmd mcp` that opens it read-only afterwards could not, and would
 * answer every vector search by the exact scan until a writer came. Without the extension
 * the codes wait for the first writer that has it. No cells are trained here: at a million
 * vectors that takes minutes, which the first `qmd mcp` to open an upgraded index would spend
 * before its first reply; the next writer (`qmd update`, `qmd embed`) trains them.
 */
function buildCodes(db: Sqlite): void {
  if (db.value('SELECT EXISTS (SELECT 1 FROM vector_rows)') !== 1) return;
  new Vectors(db, { extension: true, log: silentLog, cellsFor: () => 0 }).syncCodes();
}

// The codes are built by version 5's step, which every index reaching version 4 runs next.
export const vectorsMigration: Migration = { version: 4, up: (db) => db.exec(schemaV4) };

/**
 * Version 5: the codes are split into cells, an inverted file (docs/design.md §8.3).
 * `vector_cells` holds the trained centroids (unit float32 vectors) and the group of each
 * (the first level of the two-level k-means, `cells.ts`); `embedding_state.cell_rows` the
 * number of code rows they were trained on, NULL when there are no cells (an index under
 * `MIN_ROWS_FOR_CELLS` rows). `chunk_codes` gains `cell` as its first partition key, so it is
 * rebuilt here, like version 4's, when sqlite-vec loads.
 */
const schemaV5 = `
CREATE TABLE vector_cells (
  id INTEGER PRIMARY KEY,
  grp INTEGER NOT NULL,
  centroid BLOB NOT NULL
) STRICT;

ALTER TABLE embedding_state ADD COLUMN cell_rows INTEGER;
UPDATE embedding_state SET vec_dims = NULL WHERE id = 1;
`;

export const cellsMigration: Migration = {
  version: 5,
  up: (db) => {
    db.exec(schemaV5);
    buildCodes(db);
  },
};
