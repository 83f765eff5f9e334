/**
 * Throughput of qmd's three models beside raw node-llama-cpp at the same settings: embedding
 * (chunks/s), ranking (documents/s) and generation (query expansions/s), for each llama.cpp
 * thread count and backend asked for. qmd's side is `src/llm/` as the store uses it (one
 * runtime, each call through its queue and hook); the raw side is the same model file loaded
 * into the same `Llama`, with the same context size, batch and threads, called directly. The
 * two alternate round by round (A B A B), so load drifts hit both alike. Generated models
 * (test/support/gguf*.ts): `tiny` are the tests' models, `big` are wider and deeper random
 * models (768-dim, 8 layers; a 1024-dim, 8-layer Qwen3 for ranking and generation).
 *
 *   npx tsx bench/llm-throughput.ts [--models tiny|big] [--threads 1,2] [--gpu off|auto|vulkan]
 *                                   [--rounds 3] [--chunks 40] [--docs 20] [--expansions 2] [--out FILE.md]
 *                                   [--kinds embedding,ranking,generation] [--dir MODELS]
 *
 * `--dir` takes the models from MODELS (embed.gguf, rerank.gguf, generate.gguf: what
 * bench/device/gen-models.ts writes) instead of generating them. The report is rewritten after
 * each configuration, so a run cut short keeps what it measured.
 *
 * Each (backend, threads) runs in its own process (one `Llama` per process: `src/llm/llama.ts`).
 * The device script (bench/device/run.sh) runs the bundled build of this file on the GPU machine.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { LlamaChatSession } from 'node-llama-cpp';
import { createEmbedder } from '../src/llm/embedder.js';
import { createExpander, EXPANSION_GRAMMAR } from '../src/llm/expander.js';
import { createReranker } from '../src/llm/reranker.js';
import { LlmRuntime } from '../src/llm/runtime.js';
import { silentLog } from '../src/log.js';
import { buildTinyModel, encodeGguf, writeTinyModel } from '../test/support/gguf.js';
import { buildQwen3, buildTinyGenerator, buildTinyReranker, TINY_QWEN3 } from '../test/support/gguf-models.js';

const { values } = parseArgs({
  options: {
    models: { type: 'string', default: 'tiny' },
    threads: { type: 'string', default: [...new Set([1, availableParallelism()])].join(',') },
    gpu: { type: 'string', default: 'off' },
    rounds: { type: 'string', default: '3' },
    chunks: { type: 'string', default: '40' },
    docs: { type: 'string', default: '20' },
    expansions: { type: 'string', default: '2' },
    kinds: { type: 'string', default: 'embedding,ranking,generation' },
    out: { type: 'string' },
    dir: { type: 'string' },
    child: { type: 'string' },
  },
});

interface Row {
  kind: 'embedding' | 'ranking' | 'generation';
  gpu: string;
  backend: string;
  threads: number;
  unit: string;
  qmd: number;
  raw: number;
  gpuLayers: number;
  layers: number;
}

// ~1,700 bytes, varied so nothing is cached: the size of qmd's largest chunks.
const WORDS = 'alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa'.split(
  ' ',
);
const text = (i: number, bytes = 1700): string => {
  let s = `note ${i}:`;
  for (let j = 0; s.length < bytes; j++) s += ` ${WORDS[(i * 7 + j * 3 + ((j * j) % 11)) % WORDS.length]}`;
  return s;
};

/** Items per second of `run` over `n` items, best of the rounds, A and B alternating. */
async function race(
  rounds: number,
  a: () => Promise<number>,
  b: () => Promise<number>,
): Promise<{ a: number; b: number }> {
  const best = { a: 0, b: 0 };
  for (let r = 0; r < rounds; r++) {
    for (const [key, run] of r % 2 === 0
      ? ([
          ['a', a],
          ['b', b],
        ] as const)
      : ([
          ['b', b],
          ['a', a],
        ] as const)) {
      const started = performance.now();
      const items = await run();
      best[key] = Math.max(best[key], items / ((performance.now() - started) / 1000));
    }
  }
  return best;
}

async function child(config: { gpu: string; threads: number; dir: string }): Promise<Row[]> {
  const rounds = Number(values.rounds);
  const { gpu, threads, dir } = config;
  const runtime = new LlmRuntime({ gpu: gpu as 'off', threads, log: silentLog });
  const rows: Row[] = [];
  const llama = await runtime.llama();
  const backend = llama.gpu === false ? 'cpu' : llama.gpu;
  const row = (
    kind: Row['kind'],
    unit: string,
    result: { a: number; b: number },
    model: { gpuLayers: number; fileInsights: { totalLayers: number } },
  ): Row => ({
    kind,
    gpu,
    backend,
    threads,
    unit,
    qmd: result.a,
    raw: result.b,
    gpuLayers: model.gpuLayers,
    layers: model.fileInsights.totalLayers,
  });

  /** qmd's embedder against the raw embedding context on the same file. */
  async function embedding(): Promise<void> {
    const file = join(dir, 'embed.gguf');
    const embedder = createEmbedder({ model: file, runtime });
    const maxTokens = await embedder.maxTokens();
    const raw = await llama.loadModel({ modelPath: file });
    const size = Math.min(raw.trainContextSize, 2048);
    const context = await raw.createEmbeddingContext({ contextSize: size, batchSize: size, threads });
    const chunks = Array.from({ length: Number(values.chunks) }, (_, i) => text(i));
    // What qmd sends: the tokens, cut to what the context holds.
    const rawEmbed = (chunk: string) => context.getEmbeddingFor(raw.tokenize(chunk).slice(0, maxTokens));
    await embedder.embed(chunks[0] as string);
    await rawEmbed(chunks[0] as string);
    const result = await race(
      rounds,
      async () => {
        for (const chunk of chunks) await embedder.embed(chunk);
        return chunks.length;
      },
      async () => {
        for (const chunk of chunks) await rawEmbed(chunk);
        return chunks.length;
      },
    );
    rows.push(row('embedding', 'chunks/s', result, raw));
    await context.dispose();
    await raw.dispose();
  }

  /** qmd's reranker (one queued call per document) against rankAll on the same file. */
  async function ranking(): Promise<void> {
    const file = join(dir, 'rerank.gguf');
    const reranker = createReranker({ model: file, runtime });
    await reranker.load();
    const raw = await llama.loadModel({ modelPath: file });
    const size = Math.min(raw.trainContextSize, 4096);
    const context = await raw.createRankingContext({ contextSize: size, batchSize: size, threads });
    const docs = Array.from({ length: Number(values.docs) }, (_, i) => text(i + 1000, 1200));
    await reranker.rank('alpha bravo', docs.slice(0, 1));
    await context.rankAll('alpha bravo', docs.slice(0, 1));
    const result = await race(
      rounds,
      async () => (await reranker.rank('alpha bravo', docs)).length,
      async () => (await context.rankAll('alpha bravo', docs)).length,
    );
    rows.push(row('ranking', 'documents/s', result, raw));
    await context.dispose();
    await raw.dispose();
  }

  /** qmd's expander against a raw chat session with the same grammar, prompt and sampling. */
  async function generation(): Promise<void> {
    const file = join(dir, 'generate.gguf');
    const expander = createExpander({ model: file, runtime });
    await expander.load();
    const raw = await llama.loadModel({ modelPath: file });
    const context = await raw.createContext({ contextSize: Math.min(raw.trainContextSize, 2048), threads });
    const sequence = context.getSequence();
    const grammar = await llama.createGrammar({ grammar: EXPANSION_GRAMMAR });
    const { LlamaChatSession: Session, resolveChatWrapper } = await import('node-llama-cpp');
    const chatWrapper = resolveChatWrapper(raw); // once, as qmd does (src/llm/expander.ts)
    const n = Number(values.expansions);
    const result = await race(
      rounds,
      async () => {
        for (let i = 0; i < n; i++) await expander.expand(`alpha bravo ${i}`);
        return n;
      },
      async () => {
        for (let i = 0; i < n; i++) {
          const session: LlamaChatSession = new Session({
            contextSequence: sequence,
            autoDisposeSequence: false,
            chatWrapper,
          });
          await session.prompt(`/no_think Expand this search query: alpha bravo ${i}`, {
            grammar,
            maxTokens: 600,
            temperature: 0.7,
            topK: 20,
            topP: 0.8,
            repeatPenalty: { lastTokens: 64, presencePenalty: 0.5 },
            seed: 42,
          });
          session.dispose({ disposeSequence: false });
          await sequence.clearHistory();
        }
        return n;
      },
    );
    rows.push(row('generation', 'expansions/s', result, raw));
    await context.dispose();
    await raw.dispose();
  }

  const kinds = new Set((values.kinds as string).split(','));
  if (kinds.has('embedding')) await embedding();
  if (kinds.has('ranking')) await ranking();
  if (kinds.has('generation')) await generation();
  await runtime.dispose();
  return rows;
}

function models(dir: string): void {
  if (values.models === 'big') {
    const wide = buildTinyModel(1, 768, { layers: 8, heads: 12, ff: 3072, ctx: 2048 });
    writeFileSync(join(dir, 'embed.gguf'), encodeGguf(wide));
    const shape = { dims: 1024, layers: 8, heads: 16, ff: 3072, ctx: 4096 };
    writeFileSync(join(dir, 'rerank.gguf'), encodeGguf(buildQwen3(2, 'big-reranker', shape, 'rank')));
    writeFileSync(join(dir, 'generate.gguf'), encodeGguf(buildQwen3(3, 'big-generator', shape, 'lm')));
    return;
  }
  writeTinyModel(join(dir, 'embed.gguf'));
  writeFileSync(join(dir, 'rerank.gguf'), encodeGguf(buildTinyReranker(2, TINY_QWEN3)));
  writeFileSync(join(dir, 'generate.gguf'), encodeGguf(buildTinyGenerator(3, TINY_QWEN3)));
}

function report(rows: Row[]): string {
  return [
    `# qmd's models beside raw node-llama-cpp (${values.models} models)`,
    '',
    `${new Date().toISOString()}, node ${process.version}, ${cpus().length} cores (${cpus()[0]?.model ?? '?'}), ` +
      `load average ${loadavg()[0]?.toFixed(2)}; best of ${values.rounds} alternating rounds.`,
    `Command: \`npx tsx bench/llm-throughput.ts ${process.argv.slice(2).join(' ')}\``,
    '',
    '| call | asked | backend | threads | layers on GPU | qmd | raw node-llama-cpp | qmd ÷ raw |',
    '|---|---|---|---|---|---|---|---|',
    ...rows.map(
      (r) =>
        `| ${r.kind} | ${r.gpu} | ${r.backend} | ${r.threads} | ${r.gpuLayers}/${r.layers} | ${r.qmd.toFixed(2)} ${r.unit} | ` +
        `${r.raw.toFixed(2)} ${r.unit} | ${(r.qmd / r.raw).toFixed(2)} |`,
    ),
    '',
  ].join('\n');
}

if (values.child !== undefined) {
  // A parent killed by its time budget must not leave this child computing (it owns the GPU).
  const parent = process.ppid;
  setInterval(() => {
    if (process.ppid !== parent) process.exit(1);
  }, 1000).unref();
  const rows = await child(JSON.parse(values.child));
  process.stdout.write(`${JSON.stringify(rows)}\n`);
} else {
  const dir = values.dir ?? mkdtempSync(join(tmpdir(), 'qmd-llm-throughput-'));
  try {
    if (values.dir === undefined) models(dir);
    const rows: Row[] = [];
    const self = fileURLToPath(import.meta.url);
    const runner = self.endsWith('.ts') ? ['--import', 'tsx', self] : [self];
    const args = process.argv
      .slice(2)
      .filter((a, i, all) => !['--out', '--dir'].includes(a) && !['--out', '--dir'].includes(all[i - 1] as string));
    for (const gpu of (values.gpu as string).split(',')) {
      for (const threads of (values.threads as string).split(',').map(Number)) {
        const run = spawnSync(
          process.execPath,
          [...runner, ...args, '--child', JSON.stringify({ gpu, threads, dir })],
          {
            encoding: 'utf8',
            stdio: ['ignore', 'pipe', 'inherit'],
            timeout: 20 * 60_000,
          },
        );
        const line = run.stdout.trim().split('\n').at(-1) ?? '';
        if (run.status !== 0 || !line.startsWith('[')) {
          console.error(`gpu ${gpu}, ${threads} threads: failed (${run.status ?? run.signal})`);
          continue;
        }
        rows.push(...(JSON.parse(line) as Row[]));
        if (values.out !== undefined) writeFileSync(values.out, report(rows));
      }
    }
    console.log(report(rows));
  } finally {
    if (values.dir === undefined) rmSync(dir, { recursive: true, force: true });
  }
}
