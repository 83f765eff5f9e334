/**
 * `npx tsx bench/experiments/status/counts.ts INDEX`: how long each of `status()`'s counts
 * takes on an index (docs/design.md §8.4), and candidate cheaper forms of the slow ones.
 */
import { performance } from 'node:perf_hooks';
import { Sqlite } from '../../../src/store/sqlite.js';

const db = new Sqlite(process.argv[2] as string, { readOnly: true, timeoutMs: 5000, allowExtension: false });
const model =
  (db.prepare('SELECT fingerprint FROM embedding_state').get() as { fingerprint: string } | undefined)?.fingerprint ??
  null;
const time = (name: string, sql: string, ...params: unknown[]): void => {
  const times: number[] = [];
  let value: unknown;
  for (let i = 0; i < 3; i++) {
    const t = performance.now();
    value = db.prepare(sql).get(...(params as never[]));
    times.push(performance.now() - t);
  }
  console.log(`${name}: ${times.map((t) => t.toFixed(0)).join(' / ')} ms → ${JSON.stringify(value)}`);
};
time(
  'needsEmbedding (today)',
  `SELECT count(*) AS n FROM (SELECT DISTINCT hash FROM documents) d WHERE
     (NOT EXISTS (SELECT 1 FROM chunks c WHERE c.content_hash = d.hash)
       AND (SELECT length(trim(body, ' \n\r\t')) > 0 FROM content WHERE hash = d.hash))
     OR EXISTS (SELECT 1 FROM chunks c WHERE c.content_hash = d.hash AND NOT EXISTS
       (SELECT 1 FROM embeddings e WHERE e.model = ? AND e.chunk_hash = c.hash))`,
  model,
);
time(
  'chunk counts (today)',
  `SELECT (SELECT count(DISTINCT hash) FROM chunks) AS chunks,
  (SELECT count(*) FROM embeddings e WHERE e.model = ? AND EXISTS (SELECT 1 FROM chunks c WHERE c.hash = e.chunk_hash)) AS embedded`,
  model,
);
time(
  'collections',
  `SELECT c.name, count(d.id) FROM collections c LEFT JOIN documents d ON d.collection = c.name GROUP BY c.name`,
);
time(
  'newest',
  `SELECT c.name, max(d.mtime_ms) AS newest FROM collections c LEFT JOIN documents d ON d.collection = c.name GROUP BY c.name`,
);
console.log(db.prepare("SELECT name, sql FROM sqlite_master WHERE type='index'").all());
for (const row of db
  .prepare(`EXPLAIN QUERY PLAN SELECT count(*) FROM (SELECT DISTINCT hash FROM documents) d WHERE
     (NOT EXISTS (SELECT 1 FROM chunks c WHERE c.content_hash = d.hash)
       AND (SELECT length(trim(body, ' \n\r\t')) > 0 FROM content WHERE hash = d.hash))
     OR EXISTS (SELECT 1 FROM chunks c WHERE c.content_hash = d.hash AND NOT EXISTS
       (SELECT 1 FROM embeddings e WHERE e.model = ? AND e.chunk_hash = c.hash))`)
  .all(model))
  console.log(row);
