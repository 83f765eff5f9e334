/**
 * Does the batch size of a ranking or embedding context change its speed (node-llama-cpp
 * 3.21.1, CPU, the tiny generated models)? Each context's batch is the most tokens one
 * evaluation takes; an input longer than the batch must still fit one for pooled outputs.
 * Alternating rounds, best of each. Run: `npx tsx bench/experiments/models/batch.ts [--threads 1]`
 */
import { parseArgs } from 'node:util';
import { getLlama } from 'node-llama-cpp';
import { tinyModelPath } from '../../../test/support/gguf.js';
import { tinyRerankerPath } from '../../../test/support/gguf-models.js';

const { values } = parseArgs({
  options: { threads: { type: 'string', default: '1' }, rounds: { type: 'string', default: '4' } },
});
const threads = Number(values.threads);
const llama = await getLlama({
  gpu: false,
  build: 'never',
  skipDownload: true,
  maxThreads: threads,
  progressLogs: false,
});
const words = 'alpha bravo charlie delta echo foxtrot golf hotel india juliet'.split(' ');
const doc = (i: number, n: number): string =>
  Array.from({ length: n }, (_, j) => words[(i + j * 3) % words.length]).join(' ');

async function best(label: string, runs: Array<[string, () => Promise<number>]>): Promise<void> {
  const rates = new Map<string, number>();
  for (let r = 0; r < Number(values.rounds); r++) {
    for (const [name, run] of r % 2 ? [...runs].reverse() : runs) {
      const t = performance.now();
      const n = await run();
      rates.set(name, Math.max(rates.get(name) ?? 0, n / ((performance.now() - t) / 1000)));
    }
  }
  console.log(label, [...rates].map(([k, v]) => `${k}: ${v.toFixed(1)}/s`).join(', '));
}

const ranker = await llama.loadModel({ modelPath: tinyRerankerPath() });
const docs = Array.from({ length: 12 }, (_, i) => doc(i, 60)); // ~300 tokens each with the tiny vocabulary
console.log(
  'tokens per ranked input:',
  (await ranker.createRankingContext({ contextSize: 4096, threads })).calculateInputLength(
    'alpha bravo',
    docs[0] as string,
  ),
);
const rankContexts = await Promise.all(
  [512, 1024, 4096].map(
    async (b) => [b, await ranker.createRankingContext({ contextSize: 4096, batchSize: b, threads })] as const,
  ),
);
await best(
  `ranking, ${threads} thread(s), docs/s by batch`,
  rankContexts.map(([b, c]) => [`batch ${b}`, async () => (await c.rankAll('alpha bravo', docs)).length]),
);

const embedder = await llama.loadModel({ modelPath: tinyModelPath() });
const chunks = Array.from({ length: 20 }, (_, i) => doc(i, 80));
const embedContexts = await Promise.all(
  [128, 256, 512].map(
    async (b) => [b, await embedder.createEmbeddingContext({ contextSize: 512, batchSize: b, threads })] as const,
  ),
);
await best(
  `embedding, ${threads} thread(s), chunks/s by batch`,
  embedContexts.map(([b, c]) => [
    `batch ${b}`,
    async () => {
      for (const chunk of chunks) await c.getEmbeddingFor(embedder.tokenize(chunk).slice(0, 120));
      return chunks.length;
    },
  ]),
);
await llama.dispose();
