import { copyFileSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createEmbedder, DEFAULT_EMBED_MODEL, type LlamaModule } from '../../src/llm/index.js';
import { silentLog } from '../../src/log.js';
import { TINY_DIMENSIONS, tinyModelPath } from '../support/gguf.js';

const UNAVAILABLE = { name: 'LlmError', code: 'MODEL_UNAVAILABLE' };

// One llama.cpp start for the file: the tests' embedders share the keeper's (src/llm/llama.ts).
const keeper = createEmbedder({ model: tinyModelPath(), log: silentLog, maxThreads: 2 });
beforeAll(() => keeper.dimensions());
afterAll(() => keeper.dispose());

/** A loopback port nothing listens on: connecting is refused at once, with or without network. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('a model that is not there', () => {
  let imports = 0;
  const importLlama = (): Promise<LlamaModule> => {
    imports++;
    return import('node-llama-cpp');
  };
  beforeEach(() => {
    imports = 0;
  });

  it('a missing file is MODEL_UNAVAILABLE, found out before loading llama.cpp', async () => {
    const e = createEmbedder({ model: '/nonexistent/model.gguf', log: silentLog, importLlama });
    await expect(e.embed('the note')).rejects.toMatchObject({
      ...UNAVAILABLE,
      message: expect.stringContaining('/nonexistent/model.gguf'),
    });
    await expect(e.dimensions()).rejects.toMatchObject(UNAVAILABLE);
    await expect(e.fingerprint()).rejects.toMatchObject(UNAVAILABLE);
    await e.dispose();
    expect(imports).toBe(0);
  });

  it('a file llama.cpp cannot read is MODEL_UNAVAILABLE, and later calls get the same error', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'qmd-llm-bad-')), 'bad.gguf');
    writeFileSync(file, 'this is not a GGUF file');
    const e = createEmbedder({ model: file, log: silentLog, importLlama });
    const first = await e.embed('the note').catch((error: unknown) => error);
    expect(first).toMatchObject({ ...UNAVAILABLE, message: expect.stringContaining('could not load') });
    await expect(e.embed('the note')).rejects.toBe(first);
    await e.dispose();
  });
});

describe('hf: models', () => {
  const saved = { HF_ENDPOINT: process.env.HF_ENDPOINT, MODEL_ENDPOINT: process.env.MODEL_ENDPOINT };
  let modelsDir: string;
  beforeEach(async () => {
    modelsDir = mkdtempSync(join(tmpdir(), 'qmd-llm-models-'));
    // Point the Hugging Face endpoint at a refused port: the test is offline even where
    // the machine is not (it must never start a 330 MB download).
    process.env.HF_ENDPOINT = `http://127.0.0.1:${await closedPort()}/`;
    delete process.env.MODEL_ENDPOINT;
  });
  afterEach(() => {
    for (const [key, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
  });

  it('not cached and no network: MODEL_UNAVAILABLE that says so, without waiting on retries', async () => {
    const e = createEmbedder({ model: DEFAULT_EMBED_MODEL, modelsDir, log: silentLog });
    await expect(e.embed('the note')).rejects.toMatchObject({
      ...UNAVAILABLE,
      message: expect.stringMatching(/unreachable.*no network\?.*BM25/s),
    });
    await e.dispose();
  });

  it('not cached and downloads off: MODEL_UNAVAILABLE', async () => {
    const e = createEmbedder({ model: DEFAULT_EMBED_MODEL, modelsDir, download: false, log: silentLog });
    await expect(e.embed('the note')).rejects.toMatchObject({
      ...UNAVAILABLE,
      message: expect.stringContaining('downloads are off'),
    });
    await e.dispose();
  });

  it('cached: resolves from the models directory without the network', async () => {
    // node-llama-cpp's file name for the URI (the peer qmd's cache has the same name).
    copyFileSync(tinyModelPath(), join(modelsDir, 'hf_ggml-org_embeddinggemma-300M-Q8_0.gguf'));
    const e = createEmbedder({ model: DEFAULT_EMBED_MODEL, modelsDir, log: silentLog, maxThreads: 2 });
    try {
      expect(await e.embed('the note')).toHaveLength(TINY_DIMENSIONS);
    } finally {
      await e.dispose();
    }
  });
});
