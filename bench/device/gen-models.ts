/**
 * Writes the models the GPU check uses (bench/device/run.sh), generated like the tests' models
 * (random weights: their outputs mean nothing, their cost is a real model's of that shape):
 *
 *   embed.gguf     llama, 768 dims, 8 layers, ff 3072, context 2048, mean pooling (the shape the
 *                  first GPU measurement used; EmbeddingGemma 300M is 768 dims, 24 layers)
 *   rerank.gguf    Qwen3 reranker, 1024 dims, 8 layers, ff 3072, context 4096 (Qwen3-Reranker-0.6B
 *                  is 1024 dims, 28 layers)
 *   generate.gguf  Qwen3 chat model of the same shape (the expansion model is a Qwen3-1.7B)
 *   tiny-*.gguf    the tests' three tiny models
 *
 * Bundled by build-bundle.sh into the carried folder; run there by the carried Node:
 *   node tools/gen-models.mjs DIR [--tiny]     (--tiny: the tiny ones only, for a rehearsal on a CPU)
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildTinyModel, encodeGguf, writeTinyModel } from '../../test/support/gguf.js';
import { buildQwen3, buildTinyGenerator, buildTinyReranker } from '../../test/support/gguf-models.js';

const dir = process.argv[2];
if (dir === undefined) {
  console.error('usage: gen-models DIR');
  process.exit(2);
}
mkdirSync(dir, { recursive: true });
const started = performance.now();
const write = (name: string, bytes: Buffer): void => {
  writeFileSync(join(dir, name), bytes);
  console.log(`${name}: ${(bytes.length / 2 ** 20).toFixed(0)} MiB`);
};
writeTinyModel(join(dir, 'tiny-embed.gguf'));
write('tiny-rerank.gguf', encodeGguf(buildTinyReranker()));
write('tiny-generate.gguf', encodeGguf(buildTinyGenerator()));
if (process.argv.includes('--tiny')) {
  console.log(`tiny models written in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  process.exit(0);
}
write('embed.gguf', encodeGguf(buildTinyModel(1, 768, { layers: 8, heads: 12, ff: 3072, ctx: 2048 })));
const qwen = { dims: 1024, layers: 8, heads: 16, ff: 3072, ctx: 4096 };
write('rerank.gguf', encodeGguf(buildQwen3(2, 'qmd-gpu-check-reranker', qwen, 'rank')));
write('generate.gguf', encodeGguf(buildQwen3(3, 'qmd-gpu-check-generator', qwen, 'lm')));
console.log(`models written in ${((performance.now() - started) / 1000).toFixed(1)} s`);
