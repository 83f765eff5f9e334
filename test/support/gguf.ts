/**
 * A tiny random-weight llama embedding model, generated (nothing can be downloaded here).
 *
 * `encodeGguf` is a minimal GGUF v3 writer: header, typed metadata, tensor infos, padding to
 * the alignment, then F32 tensor data. `buildTinyModel(seed)` describes the model;
 * `writeTinyModel` writes it; `tinyModelPath()` caches one file per test process.
 *
 * What llama.cpp (node-llama-cpp 3.21.1) needs, measured by dropping one key or tensor at a
 * time (`scripts/experiments/gguf-required-keys.ts`):
 * - refused with "key not found in model": `llama.context_length`, `llama.embedding_length`,
 *   `llama.block_count`, `llama.attention.layer_norm_rms_epsilon`, `tokenizer.ggml.model`;
 *   "unknown model architecture" without `general.architecture`; "cannot find tokenizer
 *   vocab" without `tokenizer.ggml.tokens`; "missing tensor" without any tensor listed below;
 * - the process ABORTS (GGML_ASSERT(t_meta.ne[dim] >= 1), SIGABRT, no JS error) without
 *   `llama.feed_forward_length` or `llama.attention.head_count`: a tensor shape computed
 *   from a missing hyperparameter is 0;
 * - optional: `general.alignment` (32 is the default), `head_count_kv` (= head_count),
 *   `rope.dimension_count`, `rope.freq_base`, scores, special token ids and add_*_token flags.
 *   Two change the result: without `llama.pooling_type` the vector is still 64 long but a
 *   different one (not mean pooled); without `tokenizer.ggml.token_type` the `<0xNN>` tokens
 *   are not known as byte fallback, so tokenization and the vector change.
 * We write them all, as real models do.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A metadata value with its GGUF type spelled out: GGUF values carry their type. */
export type GgufValue =
  | { type: 'u32'; value: number }
  | { type: 'f32'; value: number }
  | { type: 'bool'; value: boolean }
  | { type: 'string'; value: string }
  | { type: 'strings'; value: readonly string[] }
  | { type: 'f32s'; value: readonly number[] }
  | { type: 'i32s'; value: readonly number[] };

export interface GgufTensor {
  name: string;
  /** ggml order: `dims[0]` is the row length (the fastest-moving index). */
  dims: readonly number[];
  data: Float32Array;
}

export interface GgufFile {
  metadata: ReadonlyMap<string, GgufValue>;
  tensors: readonly GgufTensor[];
}

// GGUF value type ids (gguf spec).
const T_U32 = 4;
const T_I32 = 5;
const T_F32 = 6;
const T_BOOL = 7;
const T_STRING = 8;
const T_ARRAY = 9;
const GGML_TYPE_F32 = 0;
const ALIGNMENT = 32;

/** Appends little-endian primitives to a growing list of chunks. */
class ByteWriter {
  readonly #chunks: Buffer[] = [];
  #length = 0;

  get length(): number {
    return this.#length;
  }

  bytes(buffer: Buffer): void {
    this.#chunks.push(buffer);
    this.#length += buffer.length;
  }

  u32(value: number): void {
    const b = Buffer.alloc(4);
    b.writeUInt32LE(value);
    this.bytes(b);
  }

  i32(value: number): void {
    const b = Buffer.alloc(4);
    b.writeInt32LE(value);
    this.bytes(b);
  }

  u64(value: number): void {
    const b = Buffer.alloc(8);
    b.writeBigUInt64LE(BigInt(value));
    this.bytes(b);
  }

  f32(value: number): void {
    const b = Buffer.alloc(4);
    b.writeFloatLE(value);
    this.bytes(b);
  }

  string(value: string): void {
    const utf8 = Buffer.from(value, 'utf8');
    this.u64(utf8.length);
    this.bytes(utf8);
  }

  padTo(alignment: number): void {
    const rest = this.#length % alignment;
    if (rest !== 0) this.bytes(Buffer.alloc(alignment - rest));
  }

  toBuffer(): Buffer {
    return Buffer.concat(this.#chunks, this.#length);
  }
}

function writeValue(w: ByteWriter, v: GgufValue): void {
  switch (v.type) {
    case 'u32':
      w.u32(T_U32);
      w.u32(v.value);
      return;
    case 'f32':
      w.u32(T_F32);
      w.f32(v.value);
      return;
    case 'bool':
      w.u32(T_BOOL);
      w.bytes(Buffer.from([v.value ? 1 : 0]));
      return;
    case 'string':
      w.u32(T_STRING);
      w.string(v.value);
      return;
    case 'strings':
      w.u32(T_ARRAY);
      w.u32(T_STRING);
      w.u64(v.value.length);
      for (const s of v.value) w.string(s);
      return;
    case 'f32s':
      w.u32(T_ARRAY);
      w.u32(T_F32);
      w.u64(v.value.length);
      for (const x of v.value) w.f32(x);
      return;
    case 'i32s':
      w.u32(T_ARRAY);
      w.u32(T_I32);
      w.u64(v.value.length);
      for (const x of v.value) w.i32(x);
      return;
  }
}

/** Serializes a GGUF v3 file: every tensor F32, data aligned to 32 bytes. */
export function encodeGguf(file: GgufFile): Buffer {
  const w = new ByteWriter();
  w.bytes(Buffer.from('GGUF', 'ascii'));
  w.u32(3);
  w.u64(file.tensors.length);
  w.u64(file.metadata.size);
  for (const [key, value] of file.metadata) {
    w.string(key);
    writeValue(w, value);
  }
  let offset = 0;
  for (const t of file.tensors) {
    w.string(t.name);
    w.u32(t.dims.length);
    for (const d of t.dims) w.u64(d);
    w.u32(GGML_TYPE_F32);
    w.u64(offset); // relative to the start of the data section
    offset += Math.ceil(t.data.byteLength / ALIGNMENT) * ALIGNMENT;
  }
  w.padTo(ALIGNMENT);
  for (const t of file.tensors) {
    w.bytes(Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength));
    w.padTo(ALIGNMENT);
  }
  return w.toBuffer();
}

/** mulberry32: a small seeded PRNG, so the same seed gives the same bytes on every machine. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// SentencePiece token types (llama.cpp's llama_token_type).
export const NORMAL = 1;
const UNKNOWN = 2;
export const CONTROL = 3;
const BYTE = 6;

/** A few dozen pieces, built so SentencePiece can merge up to whole words (`▁` is the space). */
const PIECES = [
  '▁',
  ...'abcdefghijklmnopqrstuvwxyz',
  ...['th', 'he', 'in', 'er', 'an', 're', 'on', 'no', 'ot', 'te', 'es', 'ar', 'ch'],
  ...['▁t', '▁th', '▁the', '▁a', '▁an', '▁and', '▁n', '▁no', '▁not', '▁note', '▁s', '▁se', '▁sea', '▁search'],
];

export const TINY_DIMENSIONS = 64;
const TINY_BLOCKS = 2;
const TINY_HEADS = 4;
const TINY_FF = 128;
const TINY_CTX = 512;

/**
 * The tiny vocabulary: `<unk>`, `<s>`, `</s>`, the 256 byte tokens, then `PIECES`, then
 * `extra` (more pieces, or control tokens such as a chat template's `<|im_start|>`).
 */
export function vocabulary(extra: ReadonlyArray<{ piece: string; type: number }> = []): {
  tokens: string[];
  scores: number[];
  types: number[];
} {
  const tokens = ['<unk>', '<s>', '</s>'];
  const scores = [0, 0, 0];
  const types = [UNKNOWN, CONTROL, CONTROL];
  for (let b = 0; b < 256; b++) {
    tokens.push(`<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`);
    scores.push(0);
    types.push(BYTE);
  }
  // Longer pieces score higher, so merges prefer whole words, as in a trained model.
  for (const piece of PIECES) {
    tokens.push(piece);
    scores.push(-10 + [...piece].length);
    types.push(NORMAL);
  }
  for (const { piece, type } of extra) {
    tokens.push(piece);
    scores.push(type === NORMAL ? -10 + [...piece].length : 0);
    types.push(type);
  }
  return { tokens, scores, types };
}

/** A deeper model's shape (the benchmarks and the GPU check; the tests use the defaults). */
export interface LlamaShape {
  layers: number;
  heads: number;
  ff: number;
  ctx: number;
}

/**
 * The tiny model as metadata and tensors; deterministic in `seed`. `dims` other than
 * TINY_DIMENSIONS makes a wider one (the benchmarks embed queries at 768 dims with it), and
 * `shape` a deeper one (bench/llm-throughput.ts, the GPU check: 768 dims, 8 layers).
 */
export function buildTinyModel(seed: number, dims = TINY_DIMENSIONS, shape?: LlamaShape): GgufFile {
  const vocab = vocabulary();
  const n = dims;
  const N_BLOCKS = shape?.layers ?? TINY_BLOCKS;
  const N_HEADS = shape?.heads ?? TINY_HEADS;
  const N_FF = shape?.ff ?? TINY_FF;
  const N_CTX = shape?.ctx ?? TINY_CTX;
  const meta = new Map<string, GgufValue>([
    ['general.architecture', { type: 'string', value: 'llama' }],
    [
      'general.name',
      {
        type: 'string',
        value:
          dims === TINY_DIMENSIONS && shape === undefined
            ? `qmd-tiny-${seed}`
            : `qmd-tiny-${seed}-${dims}${shape ? `x${shape.layers}` : ''}`,
      },
    ],
    ['general.alignment', { type: 'u32', value: ALIGNMENT }],
    ['general.file_type', { type: 'u32', value: 0 }], // all F32
    ['llama.context_length', { type: 'u32', value: N_CTX }],
    ['llama.embedding_length', { type: 'u32', value: n }],
    ['llama.block_count', { type: 'u32', value: N_BLOCKS }],
    ['llama.feed_forward_length', { type: 'u32', value: N_FF }],
    ['llama.attention.head_count', { type: 'u32', value: N_HEADS }],
    ['llama.attention.head_count_kv', { type: 'u32', value: N_HEADS }],
    ['llama.attention.layer_norm_rms_epsilon', { type: 'f32', value: 1e-5 }],
    ['llama.rope.dimension_count', { type: 'u32', value: n / N_HEADS }],
    ['llama.rope.freq_base', { type: 'f32', value: 10000 }],
    ['llama.pooling_type', { type: 'u32', value: 1 }], // mean
    ['tokenizer.ggml.model', { type: 'string', value: 'llama' }],
    ['tokenizer.ggml.tokens', { type: 'strings', value: vocab.tokens }],
    ['tokenizer.ggml.scores', { type: 'f32s', value: vocab.scores }],
    ['tokenizer.ggml.token_type', { type: 'i32s', value: vocab.types }],
    ['tokenizer.ggml.unknown_token_id', { type: 'u32', value: 0 }],
    ['tokenizer.ggml.bos_token_id', { type: 'u32', value: 1 }],
    ['tokenizer.ggml.eos_token_id', { type: 'u32', value: 2 }],
    ['tokenizer.ggml.add_bos_token', { type: 'bool', value: true }],
    ['tokenizer.ggml.add_eos_token', { type: 'bool', value: false }],
  ]);

  const random = prng(seed);
  // Uniform in ±1/sqrt(fan_in): activations stay in a sane range through two blocks.
  const weights = (rows: number, cols: number): Float32Array => {
    const scale = 1 / Math.sqrt(cols);
    return Float32Array.from({ length: rows * cols }, () => (random() * 2 - 1) * scale);
  };
  const ones = (len: number): Float32Array => new Float32Array(len).fill(1);
  const matrix = (name: string, cols: number, rows: number): GgufTensor => ({
    name,
    dims: [cols, rows],
    data: weights(rows, cols),
  });

  const tensors: GgufTensor[] = [
    { name: 'token_embd.weight', dims: [n, vocab.tokens.length], data: weights(vocab.tokens.length, n) },
    { name: 'output_norm.weight', dims: [n], data: ones(n) },
  ];
  for (let i = 0; i < N_BLOCKS; i++) {
    const b = `blk.${i}`;
    tensors.push(
      { name: `${b}.attn_norm.weight`, dims: [n], data: ones(n) },
      matrix(`${b}.attn_q.weight`, n, n),
      matrix(`${b}.attn_k.weight`, n, n),
      matrix(`${b}.attn_v.weight`, n, n),
      matrix(`${b}.attn_output.weight`, n, n),
      { name: `${b}.ffn_norm.weight`, dims: [n], data: ones(n) },
      matrix(`${b}.ffn_gate.weight`, n, N_FF),
      matrix(`${b}.ffn_up.weight`, n, N_FF),
      matrix(`${b}.ffn_down.weight`, N_FF, n),
    );
  }
  return { metadata: meta, tensors };
}

/** Writes the tiny model for `seed` (default 1) to `file`; returns its size in bytes. */
export function writeTinyModel(file: string, options: { seed?: number; dims?: number } = {}): number {
  const bytes = encodeGguf(buildTinyModel(options.seed ?? 1, options.dims));
  writeFileSync(file, bytes);
  return bytes.length;
}

let cached: string | undefined;

/**
 * The tiny model (seed 1, 417,920 bytes), generated once per process (vitest runs each test
 * file in its own process) into a temp dir removed at exit.
 */
export function tinyModelPath(): string {
  if (cached !== undefined) return cached;
  const dir = mkdtempSync(join(tmpdir(), 'qmd-tiny-model-'));
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'tiny-llama-embed.gguf');
  writeTinyModel(file);
  cached = file;
  return file;
}
