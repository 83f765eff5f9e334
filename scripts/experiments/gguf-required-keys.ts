/**
 * Which GGUF metadata keys and tensors llama.cpp (node-llama-cpp 3.21.1) needs to load the
 * tiny test model and embed with it: drop one at a time, try load + embed in a child process
 * (some omissions abort the process in a GGML_ASSERT rather than throw), print the verdict.
 * Run: `npx tsx scripts/experiments/gguf-required-keys.ts` (~1 s per key).
 * The results are recorded in the header comment of `test/support/gguf.ts`.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildTinyModel, encodeGguf, type GgufFile } from '../../test/support/gguf.js';

const full = buildTinyModel(1);

function without(name: string): GgufFile {
  if (name === 'none') return full;
  if (full.metadata.has(name)) {
    const metadata = new Map(full.metadata);
    metadata.delete(name);
    return { ...full, metadata };
  }
  return { ...full, tensors: full.tensors.filter((t) => t.name !== name) };
}

/** Child: load the model missing `name`, embed one text, print one line. */
async function child(name: string, dir: string): Promise<void> {
  const { getLlama } = await import('node-llama-cpp');
  const errors: string[] = [];
  const llama = await getLlama({
    gpu: false,
    build: 'never',
    maxThreads: 2,
    logger: (level, message) => {
      if (level === 'error' || level === 'fatal') errors.push(message.trim());
    },
  });
  const path = join(dir, 'model.gguf');
  writeFileSync(path, encodeGguf(without(name)));
  try {
    const model = await llama.loadModel({ modelPath: path });
    const context = await model.createEmbeddingContext({ threads: 2 });
    const { vector } = await context.getEmbeddingFor('the note');
    const head = vector.slice(0, 2).map((x) => x.toFixed(3));
    console.log(`loads, embedding length ${vector.length}, starts ${head.join(', ')}`);
  } catch (error) {
    console.log(`REFUSED: ${(error as Error).message} (${errors.slice(0, -1).join(' / ')})`);
  }
}

const [mode, name, dir] = process.argv.slice(2);
if (mode === '--child' && name !== undefined && dir !== undefined) {
  await child(name, dir);
} else {
  const tmp = mkdtempSync(join(tmpdir(), 'qmd-gguf-keys-'));
  const names = ['none', ...full.metadata.keys(), ...full.tensors.slice(0, 11).map((t) => t.name)];
  for (const n of names) {
    const run = spawnSync(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), '--child', n, tmp], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    const assert = /GGML_ASSERT\(.*\) failed|error: .*/.exec(run.stderr)?.[0];
    const verdict = run.status === 0 ? run.stdout.trim() : `CRASHED (${run.signal ?? run.status}) ${assert ?? ''}`;
    console.log(`without ${n}: ${verdict}`);
  }
  rmSync(tmp, { recursive: true, force: true });
}
