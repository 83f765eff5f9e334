/**
 * Experiment (not a test): does disposing llama.cpp objects under a running embedding crash
 * the process, and does `Embedder.dispose()` prevent it?
 *
 * N child processes per mode. Each loads the tiny test model, embeds a short text in a loop
 * (hundreds of calls per second, as a batch does), and after a random 0–30 ms disposes:
 * - naive-all: llama, model and context disposed at once, not waiting for the running call;
 * - naive-ordered: context → model → llama, each awaited, not waiting for the running call;
 * - safe: `Embedder.dispose()` (rejects queued calls, waits for the running one, then the same).
 * The parent counts how the children exited.
 *
 * Measured on 2 busy cores (load average 3–12), node-llama-cpp 3.21.1, 2 threads:
 *   short texts, N=20:     naive-all SIGSEGV 4/20, naive-ordered SIGSEGV 6/20, safe 0/20
 *                          (a call was running at dispose in 20/20 safe runs);
 *   361-token texts, N=10: naive-all SIGSEGV 4/10, naive-ordered SIGSEGV 1/10, safe 0/10.
 * node-llama-cpp guards its decode with a DisposeGuard, yet disposing under a running
 * `getEmbeddingFor` still crashes; the exact window was not pinned down. `--long` uses the
 * 361-token text.
 *
 * Run: `npx tsx scripts/experiments/dispose-order.ts [N=20] [PARALLEL=2] [--long]`
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { tinyModelPath } from '../../test/support/gguf.js';

const MODES = ['naive-all', 'naive-ordered', 'safe'] as const;
type Mode = (typeof MODES)[number];
const LONG = 'search the notes zq xv '.repeat(30); // 361 tokens
const quiet = { line() {}, warn() {} };

/** A loop that ended for another reason than disposal would make the run meaningless: say so. */
const unexpected = (expected: string) => (error: unknown) => {
  if ((error as Error).name !== expected) process.stderr.write(`unexpected loop error: ${String(error)}\n`);
};

async function naive(ordered: boolean, modelPath: string, delayMs: number, text: string): Promise<void> {
  const { getLlama } = await import('node-llama-cpp');
  const llama = await getLlama({ gpu: false, build: 'never', maxThreads: 2, logger: () => {} });
  const model = await llama.loadModel({ modelPath });
  const context = await model.createEmbeddingContext({ threads: 2 });
  let stop = false;
  const loop = (async () => {
    while (!stop) await context.getEmbeddingFor(text);
  })().catch(unexpected('DisposedError')); // expected once disposal starts
  await new Promise((resolve) => setTimeout(resolve, delayMs));
  stop = true;
  if (ordered) {
    await context.dispose();
    await model.dispose();
    await llama.dispose();
  } else {
    await Promise.all([llama.dispose(), model.dispose(), context.dispose()]);
  }
  await loop;
}

async function safe(modelPath: string, delayMs: number, text: string): Promise<void> {
  const { createEmbedder } = await import('../../src/llm/index.js');
  const embedder = createEmbedder({ model: modelPath, maxThreads: 2, log: quiet });
  await embedder.dimensions();
  const loop = (async () => {
    for (;;) await embedder.embed(text);
  })().catch(unexpected('LlmError')); // DISPOSED, expected once disposal starts
  await new Promise((resolve) => setTimeout(resolve, delayMs));
  process.stderr.write(`running at dispose: ${embedder.running}\n`);
  await embedder.dispose();
  await loop;
}

interface Outcome {
  code: number | null;
  signal: NodeJS.Signals | null;
  runningAtDispose: boolean;
}

function child(mode: Mode, modelPath: string, long: boolean): Promise<Outcome> {
  const delay = String(Math.floor(Math.random() * 30));
  const args = [...process.execArgv, fileURLToPath(import.meta.url), '--child', mode, modelPath, delay];
  if (long) args.push('--long');
  return new Promise((resolve) => {
    const proc = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    proc.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    const bound = setTimeout(() => proc.kill('SIGKILL'), 120_000);
    proc.on('close', (code, signal) => {
      clearTimeout(bound);
      if (stderr.includes('unexpected loop error')) console.error(stderr.trim());
      resolve({ code, signal, runningAtDispose: stderr.includes('running at dispose: 1') });
    });
  });
}

async function main(n: number, parallel: number, long: boolean): Promise<void> {
  const modelPath = tinyModelPath();
  const text = long ? '361-token' : 'short';
  console.log(`dispose-order: ${n} children per mode, ${parallel} at a time, ${text} texts, dispose after 0–30 ms`);
  console.log('mode          | exit 0 | exit ≠0 | by signal           | call running at dispose');
  for (const mode of MODES) {
    const outcomes: Outcome[] = [];
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < n) {
        next++;
        outcomes.push(await child(mode, modelPath, long));
      }
    };
    await Promise.all(Array.from({ length: parallel }, worker));
    const signals = new Map<string, number>();
    for (const o of outcomes) if (o.signal) signals.set(o.signal, (signals.get(o.signal) ?? 0) + 1);
    const bySignal = [...signals].map(([s, c]) => `${s} ${c}`).join(', ') || '0';
    const clean = outcomes.filter((o) => o.code === 0).length;
    const failed = outcomes.filter((o) => o.code !== null && o.code !== 0).length;
    const running = mode === 'safe' ? `${outcomes.filter((o) => o.runningAtDispose).length}/${n}` : 'n/a';
    console.log(
      `${mode.padEnd(13)} | ${String(clean).padStart(6)} | ${String(failed).padStart(7)} | ${bySignal.padEnd(19)} | ${running}`,
    );
  }
}

const [flag, mode, modelPath, delay] = process.argv.slice(2);
const long = process.argv.includes('--long');
if (flag === '--child' && modelPath !== undefined) {
  const text = long ? LONG : 'the note';
  if (mode === 'safe') await safe(modelPath, Number(delay), text);
  else await naive(mode === 'naive-ordered', modelPath, Number(delay), text);
} else {
  const [n = '20', parallel = '2'] = process.argv.slice(2).filter((arg) => !arg.startsWith('--'));
  await main(Number(n), Number(parallel), long);
}
