/**
 * What a folder filter costs BM25 (`Searcher`, `SearchOptions.folder`): the query plan SQLite
 * picks for the filtered ranking, and p50 of `store.search` without a filter, with a large
 * folder (1/7 of the notes), a small one (1/350), and a folder with a collection, for a common
 * word (thousands of matches) and a planted rare one (2 to 5 matches).
 *
 *   npx tsx bench/experiments/folder-bm25.ts [--n 20000] [--runs 15]
 *
 * The corpus is test/support/corpus.ts's (notes under area-NN/topic-NN/), in two collections
 * of N/2 notes each. Prints a table; nothing is written.
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
const N = arg('--n', 20_000);
const RUNS = arg('--runs', 15);
const log = (line: string) => process.stderr.write(`[folder-bm25] ${line}\n`);

const dir = mkdtempSync(join(tmpdir(), 'qmd-folder-bm25-'));
try {
  const a = generateCorpus(join(dir, 'a'), { files: N / 2, seed: 21 });
  const b = generateCorpus(join(dir, 'b'), { files: N / 2, seed: 22 });
  const index = join(dir, 'index.sqlite');
  const writer = openStore(index);
  let started = performance.now();
  await writer.addCollection(a.dir, { name: 'a' });
  await writer.addCollection(b.dir, { name: 'b' });
  await writer.close();
  log(`indexed ${N} notes in ${((performance.now() - started) / 1000).toFixed(1)} s`);

  const common = a.common[0] as string;
  // A planted word with a note in collection a: the folders are that note's, so it answers.
  const [rare, owners] = [...a.rare.entries()][0] as [string, string[]];
  const [area, topic] = (owners[0] as string).split('/') as [string, string];
  const db = new Sqlite(index, { readOnly: true });
  for (const [label, where] of [
    ['folder', 'd.path >= ? AND d.path < ?'],
    ['collection+folder', 'd.collection IN (SELECT value FROM json_each(\'["a"]\')) AND d.path >= ? AND d.path < ?'],
  ] as const) {
    const plan = db
      .prepare<string[], { detail: string }>(
        `EXPLAIN QUERY PLAN SELECT d.id FROM documents_fts JOIN documents d ON d.id = documents_fts.rowid
         WHERE documents_fts MATCH ? AND ${where} ORDER BY bm25(documents_fts) LIMIT 10`,
      )
      .all(common, `${area}/`, `${area}0`);
    console.log(`plan (${label}): ${plan.map((row) => row.detail).join(' | ')}`);
  }
  db.close();

  const store = openStore(index, { readonly: true });
  const cases: Array<[string, { folder?: string; collections?: string[] }]> = [
    ['no filter', {}],
    [`folder ${area} (1/7)`, { folder: area }],
    [`folder ${area}/${topic} (1/350)`, { folder: `${area}/${topic}` }],
    [`collection a + folder ${area}`, { folder: area, collections: ['a'] }],
  ];
  console.log(
    `\n${N} notes, p50 of ${RUNS} runs of store.search (limit 10); load ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  console.log('| filter | common word: hits, p50 ms | rare word: hits, p50 ms |');
  console.log('|---|---|---|');
  for (const [label, options] of cases) {
    const cells: string[] = [];
    for (const word of [common, rare]) {
      const times: number[] = [];
      let hits = 0;
      for (let run = 0; run < RUNS; run++) {
        started = performance.now();
        hits = store.search(word, { ...options, limit: 10 }).length;
        times.push(performance.now() - started);
      }
      times.sort((x, y) => x - y);
      cells.push(`${hits}, ${(times[Math.floor(times.length / 2)] as number).toFixed(2)}`);
    }
    console.log(`| ${label} | ${cells.join(' | ')} |`);
  }
  await store.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
