import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generateCorpus } from '../../test/support/corpus.js';
import { TMP } from './paths.js';

/** A generated corpus kept under `bench/.tmp/` between runs (generation is deterministic). */
export interface CachedCorpus {
  dir: string;
  files: number;
  bytes: number;
  /** Planted words found in 2–5 notes each. */
  rare: string[];
  /** The most frequent made-up words, most frequent first. */
  common: string[];
}

const SEED = 7;

/**
 * The corpus of `files` notes (seed 7), generated once: `meta.json` is written last, so a
 * run interrupted mid-generation is regenerated.
 */
export function cachedCorpus(files: number): CachedCorpus {
  const root = join(TMP, `corpus-${files}-s${SEED}`);
  const meta = join(root, 'meta.json');
  if (existsSync(meta)) return JSON.parse(readFileSync(meta, 'utf8')) as CachedCorpus;
  rmSync(root, { recursive: true, force: true });
  const dir = join(root, 'notes');
  const corpus = generateCorpus(dir, { files, seed: SEED });
  const cached: CachedCorpus = {
    dir,
    files,
    bytes: corpus.bytes,
    rare: [...corpus.rare.keys()],
    common: corpus.common,
  };
  writeFileSync(meta, JSON.stringify(cached));
  return cached;
}

/**
 * Queries of the kinds an agent sends, the same for every run: single common words (long
 * posting lists), pairs of them, planted rare words (a handful of hits), and a three-word
 * query where the all-terms pass finds nothing and the any-term pass answers.
 */
export function querySet(corpus: CachedCorpus): string[] {
  const common = (i: number) => corpus.common[i % corpus.common.length] as string;
  const rare = (i: number) => corpus.rare[i % corpus.rare.length] as string;
  const queries: string[] = [];
  for (let i = 0; i < 5; i++) {
    queries.push(common(i));
    queries.push(`${common(i)} ${common(i + 7)}`);
    queries.push(rare(i));
    queries.push(`${common(i + 3)} ${rare(i + 5)} ${common(i + 11)}`);
  }
  return queries;
}
