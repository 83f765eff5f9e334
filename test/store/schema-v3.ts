import { loadSqliteVec, Sqlite } from '../../src/store/sqlite.js';

/**
 * Turns a current index back into schema version 3, by SQL that reproduces what version 3
 * had: no `vector_rows`, `code_queue`, `chunk_codes` or `vector_cells` (version 5), no collection settings (version 6), the `changes` counter triggers on
 * `embeddings`, and the float vec0 copy `chunk_vectors` (rowid = `embeddings.id`) in step with
 * them. Everything else (documents, chunks, embeddings) is left as the current code wrote it,
 * which is what version 3 wrote too.
 */
export function downgradeToVersion3(file: string): void {
  const db = new Sqlite(file, { allowExtension: true });
  try {
    loadSqliteVec(db);
    db.transaction(() => {
      for (const trigger of [
        'vector_rows_queue_insert',
        'vector_rows_queue_delete',
        'documents_vectors_insert',
        'documents_vectors_delete',
        'documents_vectors_update',
        'embeddings_vectors_insert',
        'embeddings_vectors_delete',
        'chunks_vectors_insert',
        'chunks_vectors_delete',
        'embedding_state_vectors',
      ])
        db.exec(`DROP TRIGGER IF EXISTS ${trigger}`);
      db.exec('DROP TABLE IF EXISTS chunk_codes; DROP TABLE IF EXISTS vector_rows; DROP TABLE IF EXISTS code_queue');
      db.exec('DROP TABLE IF EXISTS vector_cells; ALTER TABLE embedding_state DROP COLUMN cell_rows');
      // Version 6's collection settings.
      for (const column of ['ignore', 'update_command', 'include_by_default'])
        db.exec(`ALTER TABLE collections DROP COLUMN ${column}`);
      db.exec(`
        CREATE TRIGGER embeddings_count_insert AFTER INSERT ON embeddings BEGIN
          UPDATE embedding_state SET changes = changes + 1;
        END;
        CREATE TRIGGER embeddings_count_delete AFTER DELETE ON embeddings BEGIN
          UPDATE embedding_state SET changes = changes + 1;
        END;`);
      const dims = db.value<number | null>('SELECT dims FROM embedding_state WHERE id = 1');
      if (dims !== null && dims !== undefined) {
        db.exec(`CREATE VIRTUAL TABLE chunk_vectors USING vec0(embedding float[${dims}] distance_metric=cosine)`);
        db.exec('INSERT INTO chunk_vectors (rowid, embedding) SELECT id, vector FROM embeddings');
        db.exec(`UPDATE embedding_state SET changes = (SELECT count(*) FROM embeddings), vec_dims = ${dims}`);
        db.exec('UPDATE embedding_state SET vec_synced = changes');
      } else {
        db.exec('UPDATE embedding_state SET vec_dims = NULL, vec_synced = NULL');
      }
      db.pragma('user_version = 3');
    });
  } finally {
    db.close();
  }
}
