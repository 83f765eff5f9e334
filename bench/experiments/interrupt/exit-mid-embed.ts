/**
 * Is `process.exit(130)` safe at any moment of `qmd embed`'s native work? The second Ctrl-C
 * exits at once (issue 31), which can land while llama.cpp loads the model, computes an
 * embedding on its thread, or is being disposed. Each run: a child loads the tiny model and
 * embeds in a loop, and exits 130 from a timer after a random delay; the parent records how
 * the child ended. A native crash shows as a signal (SIGSEGV, SIGABRT) or another code.
 *
 *   npx tsx bench/experiments/interrupt/exit-mid-embed.ts [--runs 40] [--max-ms 1500]
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { tinyModelPath } from '../../../test/support/gguf.js';

const args = process.argv.slice(2);
const flag = (name: string, fallback: number) => {
  const i = args.indexOf(name);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};

if (args[0] === '--child') {
  const [, model, delay, phase] = args;
  const { getLlama } = await import('node-llama-cpp');
  setTimeout(() => process.exit(130), Number(delay));
  const llama = await getLlama({ gpu: false, build: 'never', logLevel: 'error' as never });
  const loaded = await llama.loadModel({ modelPath: model as string });
  const context = await loaded.createEmbeddingContext({ threads: 1 } as never);
  if (phase === 'dispose') {
    await context.getEmbeddingFor('warm up');
    for (;;) {
      const c = await loaded.createEmbeddingContext({ threads: 1 } as never);
      await c.getEmbeddingFor('one');
      await c.dispose();
    }
  }
  for (let i = 0; ; i++) await context.getEmbeddingFor(`chunk ${i} `.repeat(40));
} else {
  const runs = flag('--runs', 40);
  const maxMs = flag('--max-ms', 1500);
  const model = tinyModelPath();
  const self = fileURLToPath(import.meta.url);
  const outcomes = new Map<string, number>();
  for (let i = 0; i < runs; i++) {
    const phase = i % 2 === 0 ? 'embed' : 'dispose';
    const delay = Math.floor(Math.random() * maxMs);
    const r = spawnSync(process.execPath, ['--import', 'tsx', self, '--child', model, String(delay), phase], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    const key = `${phase}: ${r.signal ? `signal ${r.signal}` : `exit ${r.status}`}`;
    outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
    if (r.status !== 130) process.stderr.write(`run ${i} (${phase}, ${delay} ms): ${key}\n${r.stderr.slice(-400)}\n`);
  }
  console.log(`| outcome | runs |\n| --- | --- |`);
  for (const [key, n] of [...outcomes].sort()) console.log(`| ${key} | ${n} |`);
}
