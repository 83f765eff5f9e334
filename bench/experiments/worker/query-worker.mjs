/**
 * The worker side of awake.mjs: its own read-only node:sqlite connection with sqlite-vec,
 * answering { id, kind, ... } messages with { id, ms, rows }.
 *   scan:   every BLOB vector compared in JS (today's filtered vector search)
 *   knn:    a vec0 KNN (one native call)
 *   native: a recursive CTE that runs natively for a long time without returning to JS
 */
import { createRequire } from 'node:module';
import { DatabaseSync } from 'node:sqlite';
import { parentPort, workerData } from 'node:worker_threads';
import { scan } from './scan.mjs';

const db = new DatabaseSync(workerData.path, { readOnly: true, allowExtension: true });
db.loadExtension(createRequire(import.meta.url)('sqlite-vec').getLoadablePath());
parentPort.on('message', (message) => {
  const started = performance.now();
  const rows = run(message);
  parentPort.postMessage({ id: message.id, ms: performance.now() - started, rows });
});

export function run(message) {
  if (message.kind === 'scan') return scan(db, message.query, message.k);
  if (message.kind === 'knn') {
    return db
      .prepare(`SELECT rowid, distance FROM v_knn WHERE embedding MATCH ? AND k = ${message.k}`)
      .all(message.query).length;
  }
  return db
    .prepare(
      `WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < ${message.n}) SELECT count(*) AS n FROM c`,
    )
    .get().n;
}
