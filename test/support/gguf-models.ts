/**
 * The two other tiny random-weight models a `query` runs, generated like the embedding model
 * (`gguf.ts`; nothing is downloaded), in the architecture of the peer's defaults (Qwen3):
 *
 * - a reranker (`buildTinyReranker`): Qwen3 with a classification head of two rows, "yes" and
 *   "no", pooling type RANK and the `tokenizer.chat_template.rerank` template, as llama.cpp's
 *   converter writes Qwen3-Reranker-0.6B: llama.cpp scores the last token and softmaxes the
 *   two, node-llama-cpp's ranking context reads P(yes);
 * - a causal LM with a chat template (`buildTinyGenerator`): Qwen3 with ChatML's
 *   `<|im_start|>`/`<|im_end|>` control tokens (`<|im_end|>` ends a turn), as the peer's query
 *   expansion model (a Qwen3-1.7B fine-tune) is.
 *
 * Their outputs mean nothing (random weights): they exercise the native paths, the lifecycle
 * and the pipeline's plumbing, not retrieval quality. The SentencePiece vocabulary of the
 * embedding model is reused (llama.cpp takes any tokenizer with any architecture).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CONTROL,
  encodeGguf,
  type GgufFile,
  type GgufTensor,
  type GgufValue,
  NORMAL,
  prng,
  vocabulary,
} from './gguf.js';

/** Qwen's ChatML turn markers and the pieces a query expansion writes, so they are single tokens. */
const CHAT_TOKENS = [
  { piece: '<|im_start|>', type: CONTROL },
  { piece: '<|im_end|>', type: CONTROL },
  { piece: '<think>', type: NORMAL },
  { piece: '</think>', type: NORMAL },
  ...['▁lex', '▁vec', '▁hyde', 'lex', 'vec', 'hyde', ':', '▁yes', 'yes'].map((piece) => ({
    piece,
    type: NORMAL,
  })),
];

/** ChatML, the template Qwen models carry (node-llama-cpp recognises it). */
export const CHATML_TEMPLATE =
  "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}" +
  "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

/** What llama.cpp's converter writes for Qwen3-Reranker (conversion/qwen.py). */
export const QWEN3_RERANK_TEMPLATE =
  '<|im_start|>system\nJudge whether the Document meets the requirements based on the Query and the Instruct provided. ' +
  'Note that the answer can only be "yes" or "no".<|im_end|>\n' +
  '<|im_start|>user\n<Instruct>: Given a web search query, retrieve relevant passages that answer the query\n' +
  '<Query>: {query}\n<Document>: {document}<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n';

export interface Qwen3Shape {
  dims: number;
  layers: number;
  heads: number;
  ff: number;
  /** The training context the file declares (what node-llama-cpp sizes contexts from). */
  ctx: number;
}

export const TINY_QWEN3: Qwen3Shape = { dims: 64, layers: 2, heads: 4, ff: 128, ctx: 4096 };

/** A Qwen3 model with random weights; `head` adds the reranker's metadata and tensor. */
export function buildQwen3(
  seed: number,
  name: string,
  shape: Qwen3Shape,
  head: 'lm' | 'rank',
  extraTokens: ReadonlyArray<{ piece: string; type: number }> = [],
): GgufFile {
  const vocab = vocabulary([...CHAT_TOKENS, ...extraTokens]);
  const id = (piece: string): number => vocab.tokens.indexOf(piece);
  const { dims: n, layers, heads, ff, ctx } = shape;
  const headDim = n / heads;
  const meta = new Map<string, GgufValue>([
    ['general.architecture', { type: 'string', value: 'qwen3' }],
    ['general.name', { type: 'string', value: name }],
    ['general.alignment', { type: 'u32', value: 32 }],
    ['general.file_type', { type: 'u32', value: 0 }],
    ['qwen3.context_length', { type: 'u32', value: ctx }],
    ['qwen3.embedding_length', { type: 'u32', value: n }],
    ['qwen3.block_count', { type: 'u32', value: layers }],
    ['qwen3.feed_forward_length', { type: 'u32', value: ff }],
    ['qwen3.attention.head_count', { type: 'u32', value: heads }],
    ['qwen3.attention.head_count_kv', { type: 'u32', value: heads }],
    ['qwen3.attention.key_length', { type: 'u32', value: headDim }],
    ['qwen3.attention.value_length', { type: 'u32', value: headDim }],
    ['qwen3.attention.layer_norm_rms_epsilon', { type: 'f32', value: 1e-6 }],
    ['qwen3.rope.freq_base', { type: 'f32', value: 1_000_000 }],
    ['tokenizer.ggml.model', { type: 'string', value: 'llama' }],
    ['tokenizer.ggml.tokens', { type: 'strings', value: vocab.tokens }],
    ['tokenizer.ggml.scores', { type: 'f32s', value: vocab.scores }],
    ['tokenizer.ggml.token_type', { type: 'i32s', value: vocab.types }],
    ['tokenizer.ggml.unknown_token_id', { type: 'u32', value: 0 }],
    ['tokenizer.ggml.bos_token_id', { type: 'u32', value: 1 }],
    // Qwen ends a turn with <|im_end|>: generation stops there.
    ['tokenizer.ggml.eos_token_id', { type: 'u32', value: id('<|im_end|>') }],
    ['tokenizer.ggml.padding_token_id', { type: 'u32', value: 2 }],
    ['tokenizer.ggml.add_bos_token', { type: 'bool', value: false }],
    ['tokenizer.ggml.add_eos_token', { type: 'bool', value: false }],
    ['tokenizer.chat_template', { type: 'string', value: CHATML_TEMPLATE }],
  ]);
  if (head === 'rank') {
    meta.set('qwen3.pooling_type', { type: 'u32', value: 4 }); // LLAMA_POOLING_TYPE_RANK
    meta.set('qwen3.classifier.output_labels', { type: 'strings', value: ['yes', 'no'] });
    meta.set('tokenizer.chat_template.rerank', { type: 'string', value: QWEN3_RERANK_TEMPLATE });
  }

  const random = prng(seed);
  const weights = (rows: number, cols: number): Float32Array => {
    const scale = 1 / Math.sqrt(cols);
    return Float32Array.from({ length: rows * cols }, () => (random() * 2 - 1) * scale);
  };
  const ones = (len: number): Float32Array => new Float32Array(len).fill(1);
  const matrix = (tensor: string, cols: number, rows: number): GgufTensor => ({
    name: tensor,
    dims: [cols, rows],
    data: weights(rows, cols),
  });
  const tensors: GgufTensor[] = [
    { name: 'token_embd.weight', dims: [n, vocab.tokens.length], data: weights(vocab.tokens.length, n) },
    { name: 'output_norm.weight', dims: [n], data: ones(n) },
  ];
  // The reranker's head: the "yes" and "no" rows of an LM head (here random, scaled up so the
  // two logits differ by more than rounding: scores spread over (0, 1)).
  if (head === 'rank') tensors.push({ name: 'cls.output.weight', dims: [n, 2], data: weights(2, n).map((x) => x * 4) });
  for (let i = 0; i < layers; i++) {
    const b = `blk.${i}`;
    tensors.push(
      { name: `${b}.attn_norm.weight`, dims: [n], data: ones(n) },
      matrix(`${b}.attn_q.weight`, n, n),
      matrix(`${b}.attn_k.weight`, n, n),
      matrix(`${b}.attn_v.weight`, n, n),
      matrix(`${b}.attn_output.weight`, n, n),
      { name: `${b}.attn_q_norm.weight`, dims: [headDim], data: ones(headDim) },
      { name: `${b}.attn_k_norm.weight`, dims: [headDim], data: ones(headDim) },
      { name: `${b}.ffn_norm.weight`, dims: [n], data: ones(n) },
      matrix(`${b}.ffn_gate.weight`, n, ff),
      matrix(`${b}.ffn_up.weight`, n, ff),
      matrix(`${b}.ffn_down.weight`, ff, n),
    );
  }
  return { metadata: meta, tensors };
}

/**
 * A reranker built to prefer documents that say `word` often: still a Qwen3 ranking model that
 * llama.cpp runs like any other, but with weights set by hand instead of at random, so a test
 * can know which way it will move a ranking. `word` (lowercase letters) is one token, `▁word`
 * or `word`; only its embeddings have a component on dimension 0. Attention is uniform (Q = K = 0) and passes the normalized
 * embeddings through (V = O = identity), the feed-forward adds nothing, so the last token, the
 * one the reranker scores, carries the mean of dimension 0 over the input: the word's share of
 * the tokens. The head's "yes" row reads that dimension, "no" reads nothing: P(yes) rises with
 * the word's density in the document (the template and the query add the same for every one).
 */
export function buildKeywordReranker(word: string, seed = 5): GgufFile {
  // SentencePiece reaches a piece only by merging two pieces it has: every prefix is one. The
  // word after a space is `▁word`; first in a text (a query, a document) it is `word`.
  const known = new Set(vocabulary(CHAT_TOKENS).tokens);
  const prefixesOf = (piece: string): string[] =>
    [...piece].map((_, i, chars) => chars.slice(0, i + 1).join('')).filter((p) => [...p].length > 1);
  const prefixes = [...new Set([...prefixesOf(`▁${word}`), ...prefixesOf(word)])].filter((p) => !known.has(p));
  const file = buildQwen3(
    seed,
    `qmd-keyword-reranker-${word}`,
    { ...TINY_QWEN3, layers: 1 },
    'rank',
    prefixes.map((piece) => ({ piece, type: NORMAL })),
  );
  const tokens = (file.metadata.get('tokenizer.ggml.tokens') as { value: readonly string[] }).value;
  const keywords = new Set([tokens.indexOf(`▁${word}`), tokens.indexOf(word)]);
  const n = TINY_QWEN3.dims;
  const set = (name: string, fill: (data: Float32Array) => void): void => {
    const tensor = file.tensors.find((t) => t.name === name);
    if (tensor === undefined) throw new Error(`no tensor ${name}`);
    fill(tensor.data);
  };
  set('token_embd.weight', (data) => {
    for (let t = 0; t < tokens.length; t++) data[t * n] = keywords.has(t) ? 1 : 0;
    for (const keyword of keywords) for (let i = 1; i < n; i++) data[keyword * n + i] = 0;
  });
  const identity = (data: Float32Array): void => {
    data.fill(0);
    for (let i = 0; i < n; i++) data[i * n + i] = 1;
  };
  set('blk.0.attn_q.weight', (data) => data.fill(0));
  set('blk.0.attn_k.weight', (data) => data.fill(0));
  set('blk.0.attn_v.weight', identity);
  set('blk.0.attn_output.weight', identity);
  for (const ffn of ['ffn_gate', 'ffn_up', 'ffn_down']) set(`blk.0.${ffn}.weight`, (data) => data.fill(0));
  set('cls.output.weight', (data) => {
    data.fill(0);
    data[0] = 4; // "yes" reads dimension 0; "no" (the second row) reads nothing
  });
  return file;
}

export function buildTinyReranker(seed = 2, shape: Qwen3Shape = TINY_QWEN3): GgufFile {
  return buildQwen3(seed, `qmd-tiny-reranker-${seed}`, shape, 'rank');
}

export function buildTinyGenerator(seed = 3, shape: Qwen3Shape = TINY_QWEN3): GgufFile {
  return buildQwen3(seed, `qmd-tiny-generator-${seed}`, shape, 'lm');
}

/** Writes `file`; returns its size in bytes. */
export function writeGguf(file: string, model: GgufFile): number {
  const bytes = encodeGguf(model);
  writeFileSync(file, bytes);
  return bytes.length;
}

const cached = new Map<string, string>();

function cachedModel(name: string, build: () => GgufFile): string {
  const known = cached.get(name);
  if (known !== undefined) return known;
  const dir = mkdtempSync(join(tmpdir(), `qmd-${name}-`));
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, `${name}.gguf`);
  writeGguf(file, build());
  cached.set(name, file);
  return file;
}

/** The tiny reranker, generated once per process into a temp dir removed at exit. */
export function tinyRerankerPath(): string {
  return cachedModel('tiny-reranker', () => buildTinyReranker());
}

/** The reranker that prefers `word` (`buildKeywordReranker`), generated once per process. */
export function keywordRerankerPath(word: string): string {
  return cachedModel(`keyword-reranker-${word}`, () => buildKeywordReranker(word));
}

/** The tiny chat model (query expansion), generated once per process. */
export function tinyGeneratorPath(): string {
  return cachedModel('tiny-generator', () => buildTinyGenerator());
}
