/**
 * Does the hand-built keyword reranker (test/support/gguf-models.ts) score by the word's
 * density? Ranks documents with 0–4 mentions of the word among the same filler.
 * Run: `npx tsx bench/experiments/models/keyword-reranker.ts`
 */
import { getLlama } from 'node-llama-cpp';
import { keywordRerankerPath, tinyRerankerPath } from '../../../test/support/gguf-models.js';

const llama = await getLlama({ gpu: false, build: 'never', skipDownload: true, maxThreads: 1 });
for (const path of [keywordRerankerPath('sourdough'), tinyRerankerPath()]) {
  const model = await llama.loadModel({ modelPath: path });
  const ctx = await model.createRankingContext({ contextSize: 4096, threads: 1 });
  const filler = 'the oven and the bread and the water in the kitchen.';
  const docs = [0, 1, 2, 4, 8].map((k) => `${'sourdough '.repeat(k)}${filler}`);
  docs.push(`sourdough ${filler} ${filler} ${filler} ${filler}`);
  const scores = await ctx.rankAll('sourdough', docs);
  console.log(
    path.split('/').pop(),
    scores.map((s) => s.toFixed(4)).join(' '),
    'tokens:',
    model.tokenize(docs[1] as string).length,
  );
  await ctx.dispose();
  await model.dispose();
}
await llama.dispose();
