/**
 * `npx tsx bench/experiments/status/counts.ts INDEX`: how long each of `status()`'s counts
 * takes on an index (docs/design.md §8.4), and the two halves of `needsEmbedding` apart.
 */
import { performance } from 'node:perf_hooks';
import { Sqlite } from '../../../src/store/sqlite.js';

const db = new Sqlite(process.argv[2] as string, { readOnly: true, timeoutMs: 5000, allowExtension: false });
const state = db.prepare('SELECT fingerprint FROM embedding_state').get() as { fingerprint: string } | undefined;
const model = state?.fingerprint ?? null;

function time(name: string, sql: string, ...params: Array<string | null>): void {
  const times: number[] = [];
  let value: unknown;
  for (let i = 0; i < 3; i++) {
    const started = performance.now();
    value = db.prepare(sql).get(...params);
    times.push(performance.now() - started);
  }
  console.log(`${name}: ${times.map((t) => t.toFixed(0)).join(' / ')} ms → ${JSON.stringify(value)}`);
}

time(
  'needsEmbedding (StatusReader)',
  `SELECT count(*) AS n FROM (SELECT DISTINCT hash FROM documents) d WHERE
     (NOT EXISTS (SELECT 1 FROM chunks c WHERE c.content_hash = d.hash)
       AND (SELECT length(trim(body, ' \n\r\t')) > 0 FROM content WHERE hash = d.hash))
     OR EXISTS (SELECT 1 FROM chunks c WHERE c.content_hash = d.hash AND NOT EXISTS
       (SELECT 1 FROM embeddings e WHERE e.model = ? AND e.chunk_hash = c.hash))`,
  model,
);
time(
  'texts never chunked (first half of needsEmbedding)',
  `SELECT count(*) AS n FROM (SELECT DISTINCT hash FROM documents) d
     WHERE NOT EXISTS (SELECT 1 FROM chunks c WHERE c.content_hash = d.hash)
       AND (SELECT length(trim(body, ' \n\r\t')) > 0 FROM content WHERE hash = d.hash)`,
);
time(
  'chunk hashes with no vector (0: the second half is 0)',
  `SELECT count(*) AS n FROM (SELECT DISTINCT hash FROM chunks) c
     WHERE NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.model = ? AND e.chunk_hash = c.hash)`,
  model,
);
time(
  'chunk counts (Vectors.chunkCounts)',
  `SELECT (SELECT count(DISTINCT hash) FROM chunks) AS chunks,
     (SELECT count(*) FROM embeddings e WHERE e.model = ?
        AND EXISTS (SELECT 1 FROM chunks c WHERE c.hash = e.chunk_hash)) AS embedded`,
  model,
);
time(
  'documents and newest per collection',
  `SELECT c.name, count(d.id) AS documents, max(d.mtime_ms) AS newest FROM collections c
     LEFT JOIN documents d ON d.collection = c.name GROUP BY c.name`,
);
