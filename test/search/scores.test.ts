/**
 * Scores people can read: every result's score is its strength as a
 * fraction of the query's best result (`src/search/scores.ts`), in [0, 1], the best at 1, in
 * exactly the order the engine ranked — and `minScore` keeps what comes within that fraction.
 * BM25 is checked against FTS5's own `bm25()` read straight from the index file, over random
 * corpora and queries; fusion against reciprocal ranks computed here; vector and hybrid
 * through a real store with the tiny generated model.
 */

import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatHits } from '../../src/cli/formats/hits.js';
import { showHit } from '../../src/cli/formats/snippet.js';
import { openStore, type SearchHit, type Store } from '../../src/core/index.js';
import { formatQuery } from '../../src/mcp/format.js';
import { bodyWeight, titleWeight } from '../../src/search/bm25.js';
import { toFtsQuery } from '../../src/search/fts-query.js';
import { fuseRankings, RRF_K } from '../../src/search/hybrid.js';
import { Sqlite } from '../../src/store/sqlite.js';
import { type Sandbox, sandbox } from '../store/helpers.js';
import { tinyModelPath } from '../support/gguf.js';
import { DEFAULT_NOTES } from '../support/notes.js';

/** A small vocabulary, so terms land in most notes: the case where FTS5 floors the IDF. */
const VOCABULARY = ['alpha', 'beta', 'gamma', 'delta', 'kappa', 'sigma', 'omega', 'zeta'] as const;

/** FTS5's own ranking of `query`, as the store's all-terms-then-any-term passes ask it. */
function engineRanking(index: string, query: string): Array<{ file: string; s: number }> {
  const fts = toFtsQuery(query);
  if (fts === undefined) return [];
  const db = new Sqlite(index, { readOnly: true });
  try {
    const rank = db.prepare<[string], { file: string; bm25: number }>(
      `SELECT d.collection || '/' || d.path AS file, bm25(documents_fts, ${titleWeight}, ${bodyWeight}) AS bm25
       FROM documents_fts JOIN documents d ON d.id = documents_fts.rowid
       WHERE documents_fts MATCH ? ORDER BY bm25`,
    );
    let rows = rank.all(fts.all);
    if (rows.length === 0 && fts.terms > 1) rows = rank.all(fts.any);
    return rows.map((row) => ({ file: row.file, s: -row.bm25 }));
  } finally {
    db.close();
  }
}

const words = (min: number, max: number) =>
  fc.array(fc.constantFrom(...VOCABULARY), { minLength: min, maxLength: max }).map((w) => w.join(' '));

const corpusAndQuery = fc.record({
  notes: fc.array(fc.record({ title: words(1, 3), body: words(1, 40) }), { minLength: 1, maxLength: 12 }),
  query: words(1, 3),
  limit: fc.integer({ min: 1, max: 15 }),
  minScore: fc.double({ min: 0, max: 1, noNaN: true }),
});

describe('BM25 scores', () => {
  it('keep the engine’s order, are s / s_best in [0, 1] with the best at 1, and minScore keeps s ≥ minScore · s_best', async () => {
    let runs = 0;
    let clamped = 0;
    await fc.assert(
      fc.asyncProperty(corpusAndQuery, async ({ notes, query, limit, minScore }) => {
        const box = sandbox();
        const store = openStore(box.index);
        try {
          const files = Object.fromEntries(notes.map((n, i) => [`n${i}.md`, `# ${n.title}\n\n${n.body}\n`]));
          await store.addCollection(box.notes('c', files), { name: 'c' });
          const engine = engineRanking(box.index, query);
          const hits = store.search(query, { limit });
          runs++;
          expect(hits.length).toBe(Math.min(limit, engine.length));
          if (hits.length === 0) return;
          const s = new Map(engine.map((e) => [e.file, e.s]));
          const of = (hit: SearchHit): number => s.get(hit.file) as number;
          const best = engine[0]?.s as number;
          if (best < 1e-3) clamped++;
          // The order before this change: FTS5's, i.e. by s (and by s / (1 + s), the old score).
          for (let i = 1; i < hits.length; i++) {
            expect(of(hits[i - 1] as SearchHit)).toBeGreaterThanOrEqual(of(hits[i] as SearchHit));
          }
          // The top `limit` of the engine: nothing left out beats what was kept.
          expect(engine[hits.length]?.s ?? 0).toBeLessThanOrEqual(of(hits.at(-1) as SearchHit));
          expect(hits[0]?.score).toBe(1);
          for (const hit of hits) {
            expect(hit.score).toBeGreaterThanOrEqual(0);
            expect(hit.score).toBeLessThanOrEqual(1);
            expect(hit.score).toBeCloseTo(of(hit) / best, 12);
          }
          const kept = store.search(query, { limit, minScore });
          expect(kept.map((h) => h.file)).toEqual(hits.filter((h) => h.score >= minScore).map((h) => h.file));
          for (const hit of hits) {
            const ratio = of(hit) / best;
            if (Math.abs(ratio - minScore) < 1e-9) continue; // on the boundary, rounding decides
            expect(kept.some((k) => k.file === hit.file)).toBe(ratio >= minScore);
          }
        } finally {
          await store.close();
          box.cleanup();
        }
      }),
      { numRuns: 60, seed: 14 },
    );
    expect(runs).toBe(60);
    // The generator does reach the case this is about: every term in most notes.
    expect(clamped).toBeGreaterThan(0);
  }, 120_000);
});

describe('a 3-note corpus', () => {
  let box: Sandbox;
  let store: Store;
  beforeAll(async () => {
    box = sandbox();
    store = openStore(box.index);
    await store.addCollection(box.notes('notes', DEFAULT_NOTES), { name: 'notes' });
  });
  afterAll(async () => {
    await store.close();
    box.cleanup();
  });

  for (const [query, count] of [
    ['and', 2],
    ['a', 3],
  ] as const) {
    it(`"${query}" (in ${count} of 3 notes: IDF floored by FTS5) no longer shows 0%: best 100%, the rest above 0`, () => {
      // The case itself: FTS5 gives these hits ~1e-6, which the old s / (1 + s) showed as 0%.
      const engine = engineRanking(box.index, query);
      expect(engine).toHaveLength(count);
      for (const e of engine) expect(e.s).toBeLessThan(1e-3);

      const hits = store.search(query);
      expect(hits).toHaveLength(count);
      const mcp = formatQuery(query, { mode: 'bm25', hits, searches: [], reranked: false });
      const percents = [...mcp.matchAll(/^#[0-9a-f]{8} (\d+)% /gm)].map((m) => Number(m[1]));
      expect(percents).toHaveLength(count);
      expect(percents[0]).toBe(100);
      for (const p of percents) expect(p).toBeGreaterThan(0);
      const shown = hits.map((hit) => showHit(hit, store.get(hit.file).text));
      const cli = [...formatHits(shown, 'cli').matchAll(/^Score: +(\d+)%$/gm)].map((m) => Number(m[1]));
      expect(cli).toHaveLength(count);
      expect(cli[0]).toBe(100);
      for (const p of cli) expect(p).toBeGreaterThan(0);
      const files = [...formatHits(shown, 'files').matchAll(/^#[0-9a-f]{8},(\d\.\d\d),/gm)].map((m) => m[1]);
      expect(files[0]).toBe('1.00');
      expect(files).not.toContain('0.00');
    });
  }
});

describe('hybrid scores (reciprocal rank fusion)', () => {
  const hit = (file: string): SearchHit => ({
    file,
    docid: `#${file}`,
    collection: 'c',
    path: file,
    title: file,
    score: 0,
    snippet: '',
  });
  const lists = fc
    .tuple(
      fc.uniqueArray(fc.integer({ min: 0, max: 40 }), { maxLength: 30 }),
      fc.uniqueArray(fc.integer({ min: 0, max: 40 }), { maxLength: 30 }),
    )
    .filter(([a, b]) => a.length + b.length > 0);

  it('keep the fused order and are rrf / rrf(best), the best at 1', () => {
    fc.assert(
      fc.property(lists, ([lexical, semantic]) => {
        const rrf = new Map<string, number>();
        const bestRank = new Map<string, number>();
        for (const list of [lexical, semantic]) {
          list.forEach((n, i) => {
            const file = `f${n}`;
            rrf.set(file, (rrf.get(file) ?? 0) + 1 / (RRF_K + i + 1));
            bestRank.set(file, Math.min(bestRank.get(file) ?? i, i));
          });
        }
        // The order before this change: by rrf, then best single rank, then file.
        const expected = [...rrf.keys()].sort(
          (a, b) =>
            (rrf.get(b) as number) - (rrf.get(a) as number) ||
            (bestRank.get(a) as number) - (bestRank.get(b) as number) ||
            (a < b ? -1 : 1),
        );
        const fused = fuseRankings(
          lexical.map((n) => hit(`f${n}`)),
          semantic.map((n) => hit(`f${n}`)),
        );
        expect(fused.map((h) => h.file)).toEqual(expected);
        const top = rrf.get(expected[0] as string) as number;
        expect(fused[0]?.score).toBe(1);
        for (const h of fused) {
          expect(h.score).toBeGreaterThan(0);
          expect(h.score).toBeLessThanOrEqual(1);
          expect(h.score).toBeCloseTo((rrf.get(h.file) as number) / top, 12);
        }
      }),
      { numRuns: 300, seed: 14 },
    );
  });
});

describe('vector and hybrid scores through the store (tiny model)', () => {
  let box: Sandbox;
  let store: Store;
  beforeAll(async () => {
    box = sandbox();
    store = openStore(box.index, { embedModel: tinyModelPath(), embedThreads: 1 });
    await store.addCollection(box.notes('notes', DEFAULT_NOTES), { name: 'notes' });
    await store.embed();
  });
  afterAll(async () => {
    await store.close();
    box.cleanup();
  });

  for (const mode of ['vsearch', 'query'] as const) {
    it(`${mode}: the best at 1, all in [0, 1], minScore keeps exactly the hits scoring at least it`, async () => {
      for (const query of ['wal checkpoint', 'a', 'bread and server']) {
        const all = await store[mode](query);
        expect(all.mode).toBe(mode === 'vsearch' ? 'vector' : 'hybrid');
        expect(all.hits.length).toBeGreaterThan(1);
        expect(all.hits[0]?.score).toBe(1);
        const scores = all.hits.map((h) => h.score);
        expect(scores).toEqual([...scores].sort((a, b) => b - a));
        for (const score of scores) expect(score).toBeGreaterThanOrEqual(0);
        for (const minScore of [0, ...scores, 1]) {
          const kept = await store[mode](query, { minScore });
          expect(kept.hits.map((h) => h.file)).toEqual(all.hits.filter((h) => h.score >= minScore).map((h) => h.file));
        }
      }
    });
  }
});
