/**
 * What a result's `score` means, in every mode: its strength as a fraction of the best result
 * of the same query, by that mode's own measure — BM25 relevance (`search`), cosine similarity
 * (`vsearch`), fused reciprocal rank (`query`). The best result scores 1; a result that scores
 * 0.5 is half as strong as it. `minScore` compares against this number, so it means "keep what
 * comes within this fraction of the best", whichever mode answers (the MCP `query` tool is
 * BM25 or hybrid depending on what is embedded, and a client cannot tell in advance).
 *
 * Why relative (`npx tsx bench/scores.ts`, bench/results-scores.md): BM25 has
 * no absolute scale to show. FTS5 floors a negative IDF — a term in more than half the notes —
 * to 1e-6, so the absolute `s / (1 + s)` read 0% for every hit of `and` on 3 notes and of the
 * most common word on 10,000, while a rare word on 10,000 notes put every hit at 0.86–0.89.
 * Dividing by the best hit's value is one positive divisor per query: the order is exactly the
 * one the engine returned. The price: a score does not compare across queries, and the best
 * hit of a poor query still reads 1 (the hit count and snippets say more there).
 */
export function fractionOfBest(value: number, best: number): number {
  // Nothing to compare with: only cosine similarity can be ≤ 0 (orthogonal or opposite).
  if (!(best > 0)) return 0;
  return Math.min(1, Math.max(0, value / best));
}
