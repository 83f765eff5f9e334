import { createEmbedder, type Embedder, type EmbedderOptions } from '../../src/llm/index.js';

/**
 * A stand-in for the tiny model's `embed()` at scale: embedding 700,000 chunks (100k notes)
 * with the tiny model takes over an hour here (~170 chunks/s, bench/results-embed.md), so the
 * scale benchmark embeds through the store's own `embed()` path (chunking, batches, writes,
 * the vec0 table) with this embedder in its place. It is the real embedder for everything
 * but `embed`/`embedBatch`: the model's fingerprint, dimensions and token limit are the real
 * model's, so `qmd mcp` with `QMD_EMBED_MODEL` set to the same file accepts the index and
 * embeds queries with the real model. The vectors are a hashed bag of words (each word adds
 * ±1 at 6 of the model's dimensions, chosen by its hash): texts sharing words get similar
 * vectors, which is enough for the cost of a search; recall is measured on real embeddings
 * in bench/experiments/vector-quantization.ts.
 */
export function standInEmbedder(options: EmbedderOptions): Embedder {
  const real = createEmbedder(options);
  let dims = 0;
  const embed = async (text: string): Promise<Float32Array> => {
    if (dims === 0) dims = await real.dimensions();
    return bagOfWords(text, dims);
  };
  return {
    embed,
    embedBatch: async (texts) => Promise.all(texts.map((t) => embed(t))),
    dimensions: () => real.dimensions(),
    maxTokens: () => real.maxTokens(),
    fingerprint: () => real.fingerprint(),
    get running() {
      return 0;
    },
    get queued() {
      return 0;
    },
    dispose: () => real.dispose(),
  };
}

export function bagOfWords(text: string, dims: number): Float32Array {
  const vector = new Float32Array(dims);
  for (const word of text.toLowerCase().match(/[a-z0-9]{2,}/g) ?? []) {
    let h = 2166136261;
    for (let i = 0; i < word.length; i++) h = Math.imul(h ^ word.charCodeAt(i), 16777619);
    for (let j = 0; j < 6; j++) {
      h = Math.imul(h ^ (h >>> 13), 0x5bd1e995) >>> 0;
      const at = h % dims;
      vector[at] = (vector[at] ?? 0) + (h & 0x10000 ? 1 : -1);
    }
  }
  return vector;
}
