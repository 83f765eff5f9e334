/**
 * The scores a reader sees: for a few queries on a 3-note corpus and on a
 * generated 10,000-note corpus, in each mode (BM25 `search`, vector `vsearch`, hybrid
 * `query`), the top hits' scores as `qmd search` prints them (0.00) and as the MCP `query`
 * tool shows them (NN%).
 *
 *   npx tsx bench/scores.ts [--files 10000] [--save FILE] [--before FILE]
 *
 * In process, on `src/` through tsx, with real SQLite files and the tiny generated model
 * (random weights: its vector rankings mean nothing, but the scores it is given are real).
 * The indexes are cached under `bench/.tmp/` (embedding 10,000 notes with one thread takes
 * about ten minutes here), so a run after a change to scoring reuses them. `--save FILE`
 * writes this run's hits as JSON; `--before FILE` reads such a file (a run of the previous
 * scoring) and prints it beside this run, and checks that every list is in the same order.
 * Prints a table and writes `bench/results-scores.md`.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { openStore, type SearchHit, type Store } from '../src/core/index.js';
import { DEFAULT_NOTES } from '../test/support/notes.js';
import { cachedCorpus } from './lib/corpus.js';
import { tinyModel } from './lib/fixture.js';
import { ROOT, TMP } from './lib/paths.js';

const { values } = parseArgs({
  options: {
    files: { type: 'string', default: '10000' },
    save: { type: 'string' },
    before: { type: 'string' },
  },
});
const FILES = Number(values.files);
const SHOWN = 5;
const MODES = ['bm25', 'vector', 'hybrid'] as const;
type Mode = (typeof MODES)[number];

/** Query → mode → the top hits (file and score), per corpus. */
type Run = Record<string, Record<string, Record<Mode, Array<{ file: string; score: number }>>>>;

interface Corpus {
  name: string;
  dir: string;
  queries: string[];
}

function smallCorpus(): Corpus {
  const dir = join(TMP, 'scores-3-notes');
  for (const [file, text] of Object.entries(DEFAULT_NOTES)) {
    mkdirSync(join(dir, file, '..'), { recursive: true });
    writeFileSync(join(dir, file), text);
  }
  // `wal` is in one note; `and` in two of three (FTS5 floors its IDF, negative here, to 1e-6);
  // `a` in all three; the last needs the any-term pass.
  return { name: '3 notes', dir, queries: ['wal', 'and', 'a', 'readers and writer', 'sqlite server'] };
}

function largeCorpus(files: number): Corpus {
  const corpus = cachedCorpus(files);
  const common = (i: number): string => corpus.common[i] as string;
  const rare = corpus.rare[0] as string;
  return {
    name: `${files.toLocaleString('en-US')} notes`,
    dir: corpus.dir,
    // As bench/lib/corpus.ts's query set: a common word, a pair, a planted rare word (2–5
    // notes), and three words no note has together (the any-term pass answers).
    queries: [common(0), `${common(1)} ${common(8)}`, rare, `${common(3)} ${corpus.rare[5]} ${common(11)}`],
  };
}

/** The corpus's index, embedded with the tiny model; built once and reused. */
async function openIndexed(corpus: Corpus, model: string, log: (line: string) => void): Promise<Store> {
  const index = join(TMP, `scores-${corpus.name.replace(/\W+/g, '-')}.sqlite`);
  const fresh = !existsSync(index);
  const store = openStore(index, { embedModel: model, embedThreads: 1 });
  if (fresh) {
    log(`${corpus.name}: indexing`);
    await store.addCollection(corpus.dir, { name: 'notes' });
  }
  const started = performance.now();
  let last = 0;
  const report = await store.embed({
    onProgress: ({ done, total }) => {
      if (performance.now() - last > 10_000) {
        last = performance.now();
        log(`${corpus.name}: embedded ${done}/${total} chunks`);
      }
    },
  });
  if (report.embedded > 0) {
    log(`${corpus.name}: embedded ${report.embedded} chunks in ${((performance.now() - started) / 1000).toFixed(0)} s`);
  }
  return store;
}

async function hitsOf(store: Store, mode: Mode, query: string): Promise<SearchHit[]> {
  if (mode === 'bm25') return store.search(query, { limit: SHOWN });
  if (mode === 'vector') return (await store.vsearch(query, { limit: SHOWN })).hits;
  return (await store.query(query, { limit: SHOWN })).hits;
}

const cli = (scores: number[]): string => scores.map((s) => s.toFixed(2)).join(' ');
const mcp = (scores: number[]): string => scores.map((s) => `${Math.round(s * 100)}%`).join(' ');

async function main(): Promise<void> {
  mkdirSync(TMP, { recursive: true });
  const log = (line: string): void => console.error(line);
  const before = values.before === undefined ? undefined : (JSON.parse(readFileSync(values.before, 'utf8')) as Run);
  const model = tinyModel();
  const run: Run = {};
  const lines: string[] = [];
  const say = (line = ''): void => {
    console.log(line);
    lines.push(line);
  };
  const load = (): string => loadavg()[0]?.toFixed(2) ?? '?';
  say('# Scores as shown');
  say();
  say(`${new Date().toISOString()}, node ${process.version}, ${availableParallelism()} cores, load average ${load()}.`);
  say(
    `Command: \`npx tsx bench/scores.ts --files ${FILES}${values.save ? ` --save ${values.save}` : ''}${values.before ? ` --before ${values.before}` : ''}\`.`,
  );
  say(
    `Top ${SHOWN} hits of each query. "CLI" is \`qmd search|vsearch|query\` (score to 2 decimals), "MCP" the \`query\` tool's text (rounded percent). Vector and hybrid use the tiny random-weight test model: their rankings mean nothing, their scores are computed as for a real model.`,
  );
  say();
  let reordered = 0;
  // Both stores stay open until the end: their embedders share one llama.cpp instance, and a
  // process that makes a second one after disposing the first gets llama.cpp's lines on
  // stdout (src/llm/llama.ts).
  const corpora = [smallCorpus(), largeCorpus(FILES)];
  const stores: Store[] = [];
  try {
    for (const corpus of corpora) stores.push(await openIndexed(corpus, model, log));
    for (const [i, corpus] of corpora.entries()) {
      const store = stores[i] as Store;
      const mine: Run[string] = {};
      run[corpus.name] = mine;
      say(`## ${corpus.name}`);
      say();
      say(
        before === undefined
          ? '| query | mode | hits | CLI | MCP |\n|---|---|---:|---|---|'
          : '| query | mode | hits | before: CLI | before: MCP | after: CLI | after: MCP | same order |\n|---|---|---:|---|---|---|---|---|',
      );
      for (const query of corpus.queries) {
        const perMode = {} as Record<Mode, Array<{ file: string; score: number }>>;
        mine[query] = perMode;
        for (const mode of MODES) {
          const hits = (await hitsOf(store, mode, query)).map(({ file, score }) => ({ file, score }));
          perMode[mode] = hits;
          const scores = hits.map((h) => h.score);
          if (before === undefined) {
            say(`| ${query} | ${mode} | ${hits.length} | ${cli(scores)} | ${mcp(scores)} |`);
            continue;
          }
          const old = before[corpus.name]?.[query]?.[mode] ?? [];
          const same = old.map((h) => h.file).join('\n') === hits.map((h) => h.file).join('\n');
          if (!same) reordered++;
          const oldScores = old.map((h) => h.score);
          say(
            `| ${query} | ${mode} | ${hits.length} | ${cli(oldScores)} | ${mcp(oldScores)} | ${cli(scores)} | ${mcp(scores)} | ${same ? 'yes' : 'NO'} |`,
          );
        }
      }
      say();
    }
  } finally {
    for (const store of stores) await store.close();
  }
  if (before !== undefined) say(`Lists in a different order than before: ${reordered}.`);
  if (values.save !== undefined) writeFileSync(values.save, `${JSON.stringify(run, null, 1)}\n`);
  writeFileSync(join(ROOT, 'bench', 'results-scores.md'), `${lines.join('\n')}\n`);
  console.log('\nwrote bench/results-scores.md');
}

await main();
