import { copyFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEmbedder, type Embedder, type LlamaModule } from '../../src/llm/index.js';
import { silentLog } from '../../src/log.js';
import { TINY_DIMENSIONS, tinyModelPath, writeTinyModel } from '../support/gguf.js';

describe('an embedder on the tiny model', () => {
  let embedder: Embedder;
  beforeAll(() => {
    embedder = createEmbedder({ model: tinyModelPath(), log: silentLog, maxThreads: 2 });
  });
  afterAll(() => embedder.dispose());

  it('embeds into the model dimension', async () => {
    expect(await embedder.dimensions()).toBe(TINY_DIMENSIONS);
    const vector = await embedder.embed('the note');
    expect(vector).toBeInstanceOf(Float32Array);
    expect(vector).toHaveLength(TINY_DIMENSIONS);
    expect(vector.every(Number.isFinite)).toBe(true);
  });

  it('is deterministic: same text, same vector; different text, different vector', async () => {
    const a = await embedder.embed('search the notes');
    const b = await embedder.embed('search the notes');
    const c = await embedder.embed('a different note');
    expect(b).toEqual(a);
    expect(c).not.toEqual(a);
  });

  it('gives the same vectors in another embedder on the same model', async () => {
    const other = createEmbedder({ model: tinyModelPath(), log: silentLog, maxThreads: 2 });
    try {
      expect(await other.embed('the note')).toEqual(await embedder.embed('the note'));
    } finally {
      await other.dispose();
    }
  });

  it('embedBatch returns one vector per text, in order, reporting progress', async () => {
    const texts = ['the note', 'search', 'the note'];
    const progress: Array<[number, number]> = [];
    const vectors = await embedder.embedBatch(texts, { onProgress: (done, total) => progress.push([done, total]) });
    expect(vectors).toHaveLength(3);
    expect(vectors[0]).toEqual(vectors[2]);
    expect(vectors[1]).toEqual(await embedder.embed('search'));
    expect(progress).toEqual([
      [1, 3],
      [2, 3],
      [3, 3],
    ]);
  });

  it('truncates a text longer than the context instead of failing', async () => {
    const long = 'zq xv wk '.repeat(400); // ~3,600 characters, many byte-fallback tokens, context 512
    expect(await embedder.embed(long)).toHaveLength(TINY_DIMENSIONS);
  });

  it('refuses an empty text with EMPTY_INPUT', async () => {
    await expect(embedder.embed('')).rejects.toMatchObject({ name: 'LlmError', code: 'EMPTY_INPUT' });
  });
});

describe('fingerprint', () => {
  const dir = mkdtempSync(join(tmpdir(), 'qmd-llm-fp-'));
  let imports = 0;
  const importLlama = (): Promise<LlamaModule> => {
    imports++;
    return import('node-llama-cpp');
  };
  const fingerprintOf = async (file: string): Promise<string> => {
    const embedder = createEmbedder({ model: file, importLlama, log: silentLog });
    try {
      return await embedder.fingerprint();
    } finally {
      await embedder.dispose();
    }
  };

  it('follows the content: same for a copy, different for another model; never loads llama.cpp', async () => {
    const original = join(dir, 'a.gguf');
    const copy = join(dir, 'b.gguf');
    writeTinyModel(original, { seed: 1 });
    copyFileSync(original, copy);
    const first = await fingerprintOf(original);
    expect(first).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(await fingerprintOf(copy)).toBe(first);
    writeTinyModel(original, { seed: 2 });
    expect(await fingerprintOf(original)).not.toBe(first);
    expect(imports).toBe(0);
  });
});
