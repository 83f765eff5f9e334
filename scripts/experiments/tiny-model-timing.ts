/**
 * Experiment (not a test): what the tiny test model costs. Prints its size, the time to
 * import node-llama-cpp, to start llama.cpp (getLlama), to load the model and create the
 * context, and per-embedding times for a short and a 361-token text, for each thread count.
 *
 * Run: `npx tsx scripts/experiments/tiny-model-timing.ts [THREADS=2] [ROUNDS=50]`
 * Numbers depend on the machine's load: note `uptime` alongside.
 */
import { statSync } from 'node:fs';
import { loadavg } from 'node:os';
import { tinyModelPath } from '../../test/support/gguf.js';

const threads = Number(process.argv[2] ?? 2);
const rounds = Number(process.argv[3] ?? 50);
const file = tinyModelPath();
const ms = (from: number): string => `${(performance.now() - from).toFixed(1)} ms`;

let t = performance.now();
const { getLlama } = await import('node-llama-cpp');
console.log(`model ${statSync(file).size} bytes; load average ${loadavg()[0]?.toFixed(2)}; ${threads} threads`);
console.log(`import node-llama-cpp: ${ms(t)}`);
t = performance.now();
const llama = await getLlama({ gpu: false, build: 'never', maxThreads: threads, logger: () => {} });
console.log(`getLlama: ${ms(t)}`);
t = performance.now();
const model = await llama.loadModel({ modelPath: file });
console.log(`loadModel: ${ms(t)}`);
t = performance.now();
const context = await model.createEmbeddingContext({ threads });
console.log(`createEmbeddingContext: ${ms(t)}`);

for (const [name, text] of [
  ['short', 'the note about search'],
  ['361 tokens', 'search the notes zq xv '.repeat(30)],
] as const) {
  const times: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const start = performance.now();
    await context.getEmbeddingFor(`${text} ${i}`);
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  const at = (q: number): string => (times[Math.floor(q * (times.length - 1))] ?? Number.NaN).toFixed(1);
  console.log(`embed ${name}: median ${at(0.5)} ms, p10 ${at(0.1)} ms, p90 ${at(0.9)} ms (${rounds} runs)`);
}
await context.dispose();
await model.dispose();
await llama.dispose();
