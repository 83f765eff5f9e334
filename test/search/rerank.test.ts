/**
 * The reranking arithmetic and the choices around it (search/rerank.ts, search/expansion.ts),
 * without a model: the peer's blend weights by rank, the chunk the reranker reads, and which
 * lines of an expansion are searched.
 */
import { describe, expect, it } from 'vitest';
import type { SearchHit } from '../../src/core/types.js';
import { parseExpansion } from '../../src/llm/expander.js';
import { keptExpansion } from '../../src/search/expansion.js';
import { bestChunk, blend, rerankQuery, retrievalWeight } from '../../src/search/rerank.js';

const hit = (file: string): SearchHit => ({
  file,
  docid: `#${file}`,
  collection: 'notes',
  path: file,
  title: file,
  score: 1,
  snippet: '',
});

describe('blend', () => {
  it('weighs the fused rank 75% at ranks 1–3, 60% at 4–10, 40% below', () => {
    expect([1, 2, 3, 4, 10, 11, 40].map(retrievalWeight)).toEqual([0.75, 0.75, 0.75, 0.6, 0.6, 0.4, 0.4]);
  });

  it('orders by w/rank + (1 − w)·reranker, scores as a fraction of the best, ties in fused order', () => {
    const candidates = Array.from({ length: 12 }, (_, i) => hit(`n${i + 1}`));
    const scores = candidates.map((_, i) => (i === 11 ? 1 : i === 3 ? 0 : 0.5));
    const blended = blend(candidates, scores);
    const value = (rank: number, score: number) => retrievalWeight(rank) / rank + (1 - retrievalWeight(rank)) * score;
    const best = value(1, 0.5);
    expect(blended[0]).toMatchObject({ file: 'n1', score: 1 });
    // n12, last fused, with the reranker's best score: .4/12 + .6 = .633, past n2 (.75/2 + .125 = .5).
    expect(blended[1]).toMatchObject({ file: 'n12', score: value(12, 1) / best });
    expect(blended.map((h) => h.file).indexOf('n4')).toBe(11);
    for (let i = 1; i < blended.length; i++) {
      expect(blended[i]?.score).toBeLessThanOrEqual(blended[i - 1]?.score as number);
    }
    // Equal reranker scores keep the fused order within each band of weight, but not across the
    // step at rank 10 → 11, where the reranker's share jumps from 40% to 60% (the peer's arithmetic).
    const flat = blend(
      candidates,
      candidates.map(() => 0.3),
    ).map((h) => h.file);
    expect(flat.slice(0, 3)).toEqual(['n1', 'n2', 'n3']);
    expect(flat.indexOf('n11')).toBeLessThan(flat.indexOf('n10'));
  });
});

describe('what the reranker reads', () => {
  it('the intent first, then the query', () => {
    expect(rerankQuery('performance', undefined)).toBe('performance');
    expect(rerankQuery('performance', 'web page load times')).toBe('web page load times\n\nperformance');
  });

  it('of a long note, the chunk with most of the query’s words, an intent word counting half', () => {
    const section = (heading: string, words: string) =>
      `## ${heading}\n\n${`${words} filler text here. `.repeat(90)}\n\n`;
    const body = section('One', 'alpha') + section('Two', 'bread oven') + section('Three', 'bread crust');
    expect(Buffer.byteLength(body)).toBeGreaterThan(3 * 1800);
    expect(bestChunk(body, 'bread oven', undefined)).toContain('## Two');
    expect(bestChunk(body, 'bread', 'crust')).toContain('## Three');
    expect(bestChunk(body, 'nothing matches', undefined)).toContain('## One');
    expect(bestChunk('# Short\n\nOne chunk.\n', 'x', undefined)).toBe('# Short\n\nOne chunk.\n');
  });
});

describe('the expansion’s lines', () => {
  it('parses typed lines and nothing else', () => {
    expect(parseExpansion('lex: bread knife\nvec:  how to slice bread \nhyde: Bread is cut.\nnote: x\nlex:\n')).toEqual(
      [
        { type: 'lex', text: 'bread knife' },
        { type: 'vec', text: 'how to slice bread' },
        { type: 'hyde', text: 'Bread is cut.' },
      ],
    );
    expect(parseExpansion('')).toEqual([]);
  });

  it('keeps new lines that share a word with the query (any script), up to the room left', () => {
    const own = [
      { type: 'lex' as const, query: 'Brot backen' },
      { type: 'vec' as const, query: 'Brot backen' },
    ];
    const lines = [
      { type: 'lex' as const, query: 'brot backen' }, // the query's own lex, in other case
      { type: 'vec' as const, query: 'wie man Brot bäckt' },
      { type: 'hyde' as const, query: 'Der Garten braucht Wasser.' },
      { type: 'lex' as const, query: 'Sauerteig Brot' },
      { type: 'lex' as const, query: 'sauerteig brot' },
      { type: 'hyde' as const, query: 'Backen braucht Zeit.' },
    ];
    expect(keptExpansion('Brot backen', lines, own, 8)).toEqual([
      { type: 'vec', query: 'wie man Brot bäckt' },
      { type: 'lex', query: 'Sauerteig Brot' },
      { type: 'hyde', query: 'Backen braucht Zeit.' },
    ]);
    expect(keptExpansion('Brot backen', lines, own, 1)).toHaveLength(1);
    expect(keptExpansion('日本語', [{ type: 'vec', query: '日本語の本' }], [], 8)).toHaveLength(1);
  });
});
