import { fractionOfBest } from './scores.js';
import type { SearchHit } from './types.js';

/**
 * Reciprocal rank fusion (Cormack, Clarke & Büttcher, SIGIR 2009) of the BM25 and vector
 * rankings, per document:
 *
 *   rrf(d) = Σ over the lists L that contain d of 1 / (K + rank_L(d)),  rank from 1
 *   score(d) = rrf(d) / rrf(best)
 *
 * K = 60, the paper's constant: it damps the head of each list so one list's first place
 * cannot outvote a document both lists rank well, and needs no tuning per corpus. Ranks,
 * not scores, are fused, because BM25 scores and cosine similarities are on scales that
 * do not compare. The score is relative to the fused best, as in every mode (`scores.ts`):
 * the best is 1 even when the two rankings disagree (it used to be rrf / (2 / (K + 1)),
 * which put the best at 0.50 whenever no document led both lists: every query on 10,000
 * notes in bench/results-scores.md). Relative to a best that leads both lists, a document
 * in only one of them scores at most 0.5: half the evidence.
 *
 * A document's snippet and line come from its BM25 hit when it has one (matched terms
 * highlighted), else from its best chunk.
 */
export const RRF_K = 60;

export function fuseRankings(lexical: readonly SearchHit[], semantic: readonly SearchHit[], k = RRF_K): SearchHit[] {
  return fuseLists(
    [
      { hits: semantic, lexical: false },
      { hits: lexical, lexical: true },
    ],
    k,
  );
}

/** One ranking to fuse; a lexical one's hits carry highlighted snippets. */
export interface Ranking {
  hits: readonly SearchHit[];
  lexical: boolean;
  /** How much its ranks count (default 1): `query` gives the user's own sub-searches 2, the expansion's 1. */
  weight?: number;
}

/**
 * The same fusion over any number of rankings (`query`'s typed sub-searches), each
 * contribution times its ranking's weight: weight / (K + rank). Ties go to the document
 * ranked higher somewhere, then by path. A document's hit comes from the first lexical
 * ranking that has it, else the first ranking.
 */
export function fuseLists(rankings: readonly Ranking[], k = RRF_K): SearchHit[] {
  const fused = new Map<string, { hit: SearchHit; rrf: number; best: number; lexical: boolean }>();
  for (const { hits, lexical, weight = 1 } of rankings) {
    hits.forEach((hit, index) => {
      const contribution = weight / (k + index + 1);
      const seen = fused.get(hit.file);
      if (seen === undefined) {
        fused.set(hit.file, { hit, rrf: contribution, best: index, lexical });
        return;
      }
      seen.rrf += contribution;
      seen.best = Math.min(seen.best, index);
      if (lexical && !seen.lexical) {
        seen.hit = hit;
        seen.lexical = true;
      }
    });
  }
  const ranked = [...fused.values()].sort(
    (a, b) => b.rrf - a.rrf || a.best - b.best || (a.hit.file < b.hit.file ? -1 : 1),
  );
  const best = ranked[0]?.rrf ?? 0;
  return ranked.map(({ hit, rrf }) => ({ ...hit, score: fractionOfBest(rrf, best) }));
}

/** How many candidates each list contributes to the fusion for `limit` results. */
export function candidateDepth(limit: number): number {
  return Math.min(1000, Math.max(30, limit * 3));
}
