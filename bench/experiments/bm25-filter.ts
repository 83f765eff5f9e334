/**
 * A filtered BM25 ranking, two ways (`Searcher.rank`): the statement that joins every FTS5
 * match to `documents` before ranking (the only way before), against ranking the best 200
 * matches overall and keeping those inside the filter (what `rank` tries first). Interleaved,
 * on one index of N notes in two collections (test/support/corpus.ts), for common words
 * (thousands of matches), a collection filter of half the notes.
 *
 *   npx tsx bench/experiments/bm25-filter.ts [--n 100000] [--runs 15]
 *
 * Prints a table; nothing is written.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../../src/core/index.js';
import { Sqlite } from '../../src/store/sqlite.js';
import { generateCorpus } from '../../test/support/corpus.js';

const arg = (name: string, fallback: number): number => {
  const i = process.argv.indexOf(name);
  return i === -1 ? fallback : Number(process.argv[i + 1]);
};
const N = arg('--n', 100_000);
const RUNS = arg('--runs', 15);
const log = (line: string) => process.stderr.write(`[bm25-filter] ${line}\n`);
const load = () =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(' / ');

const dir = mkdtempSync(join(tmpdir(), 'qmd-bm25-filter-'));
try {
  const a = generateCorpus(join(dir, 'a'), { files: N / 2, seed: 21 });
  const b = generateCorpus(join(dir, 'b'), { files: N / 2, seed: 22 });
  const index = join(dir, 'index.sqlite');
  const writer = openStore(index);
  const started = performance.now();
  await writer.addCollection(a.dir, { name: 'a' });
  await writer.addCollection(b.dir, { name: 'b' });
  await writer.close();
  log(`indexed ${N} notes in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  const loadStart = load();
  const db = new Sqlite(index, { readOnly: true });
  const bm25 = 'bm25(documents_fts, 10.0, 1.0)';
  const joinAll = db.prepare<[string], { id: number }>(
    `SELECT d.id, ${bm25} AS bm25 FROM documents_fts JOIN documents d ON d.id = documents_fts.rowid
     WHERE documents_fts MATCH ? AND d.collection IN (SELECT value FROM json_each('["a"]')) ORDER BY bm25 LIMIT 10`,
  );
  const best = db.prepare<[string], { id: number; collection: string }>(
    `SELECT d.id, d.collection, r.bm25 FROM (
       SELECT rowid AS id, ${bm25} AS bm25 FROM documents_fts WHERE documents_fts MATCH ? ORDER BY bm25 LIMIT 200
     ) r JOIN documents d ON d.id = r.id ORDER BY r.bm25`,
  );
  const time = (fn: () => unknown): number => {
    const t = performance.now();
    fn();
    return performance.now() - t;
  };
  const p50 = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)] as number;
  console.log(`| word | matches | join every match, p50 ms | best 200 then filter, p50 ms | same top 10 |`);
  console.log('|---|---:|---:|---:|---|');
  for (const word of a.common.slice(0, 4)) {
    const matches = db.value<number>('SELECT count(*) FROM documents_fts WHERE documents_fts MATCH ?', word);
    const old: number[] = [];
    const now: number[] = [];
    for (let r = 0; r < RUNS; r++) {
      old.push(time(() => joinAll.all(word)));
      now.push(
        time(() =>
          best
            .all(word)
            .filter((row) => row.collection === 'a')
            .slice(0, 10),
        ),
      );
    }
    const same =
      JSON.stringify(joinAll.all(word).map((row) => row.id)) ===
      JSON.stringify(
        best
          .all(word)
          .filter((row) => row.collection === 'a')
          .slice(0, 10)
          .map((row) => row.id),
      );
    console.log(`| ${word} | ${matches} | ${p50(old).toFixed(1)} | ${p50(now).toFixed(1)} | ${same ? 'yes' : 'no'} |`);
  }
  db.close();
  console.log(
    `\n${N} notes, ${RUNS} runs each, interleaved; Node ${process.version}; load ${loadStart} at start, ${load()} at end.`,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
