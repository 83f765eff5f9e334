import { MAX_CHUNK_BYTES, splitMarkdown } from '../text/chunks.js';
import { fractionOfBest } from './scores.js';
import type { SearchHit } from './types.js';

/**
 * Reranking the fused candidates, as the peer (qmd 2.8) does it: the reranker reads the
 * query and one chunk of each candidate (a whole note would cost its every token), and its
 * score is blended with the candidate's fused rank:
 *
 *   score = w · 1/rank + (1 − w) · reranker,   w = 0.75 for ranks 1–3, 0.60 for 4–10, 0.40 below
 *
 * so the top of the fusion, where retrieval is surest, is the hardest for the reranker to
 * overturn, and the tail is mostly the reranker's. The score shown is then a fraction of the
 * best (`scores.ts`), as in every mode.
 */

/** The fused rank's share of the blended score at 1-based `rank`. */
export function retrievalWeight(rank: number): number {
  if (rank <= 3) return 0.75;
  if (rank <= 10) return 0.6;
  return 0.4;
}

/** `candidates` (in fused order) blended with the reranker's `scores`, best first; ties keep fused order. */
export function blend(candidates: readonly SearchHit[], scores: readonly number[]): SearchHit[] {
  const blended = candidates.map((hit, index) => {
    const rank = index + 1;
    const weight = retrievalWeight(rank);
    return { hit, rank, value: weight / rank + (1 - weight) * (scores[index] ?? 0) };
  });
  blended.sort((a, b) => b.value - a.value || a.rank - b.rank);
  const best = blended[0]?.value ?? 0;
  return blended.map(({ hit, value }) => ({ ...hit, score: fractionOfBest(value, best) }));
}

/** What the reranker is asked: the intent first when there is one (it says which sense is meant). */
export function rerankQuery(text: string, intent: string | undefined): string {
  return intent === undefined ? text : `${intent}\n\n${text}`;
}

/** Lowercased words of `text` (letters and digits, any script) longer than two characters. */
export function keywords(text: string): string[] {
  return text
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((word) => word.length > 2);
}

/**
 * The chunk of `body` the reranker reads: of the note's chunks (at most 1,800 bytes each, cut
 * as `qmd embed` cuts them), the one holding most of the query's words, an intent word
 * counting half; the first chunk on ties.
 */
export function bestChunk(body: string, query: string, intent: string | undefined): string {
  const spans = splitMarkdown(body, MAX_CHUNK_BYTES);
  if (spans.length <= 1) return body;
  const terms = keywords(query);
  const intentTerms = intent === undefined ? [] : keywords(intent);
  let best = 0;
  let bestScore = -1;
  spans.forEach((span, index) => {
    const text = body.slice(span.start, span.end).toLowerCase();
    let score = 0;
    for (const term of terms) if (text.includes(term)) score += 1;
    for (const term of intentTerms) if (text.includes(term)) score += 0.5;
    if (score > bestScore) {
      bestScore = score;
      best = index;
    }
  });
  const span = spans[best];
  return span === undefined ? body : body.slice(span.start, span.end);
}
