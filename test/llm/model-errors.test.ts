import { copyFileSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createEmbedder, DEFAULT_EMBED_MODEL, type LlamaModule } from '../../src/llm/index.js';
import { silentLog } from '../../src/log.js';
import { TINY_DIMENSIONS, tinyModelPath } from '../support/gguf.js';
import { DEFAULT_MODEL_FILE, DEFAULT_MODEL_PATH, startModelServer } from '../support/model-server.js';
import { recordingLog } from '../support/recording-log.js';

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

  it('a file that is not a model is MODEL_UNAVAILABLE naming it, before loading llama.cpp; later calls get the same error', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'qmd-llm-bad-')), 'bad.gguf');
    writeFileSync(file, 'this is not a GGUF file');
    const e = createEmbedder({ model: file, log: silentLog, importLlama });
    const first = await e.embed('the note').catch((error: unknown) => error);
    expect(first).toMatchObject({
      ...UNAVAILABLE,
      message: `the embedding model file ${file} is not usable: it is not a GGUF model (it starts with "this", not "GGUF")`,
    });
    await expect(e.embed('the note')).rejects.toBe(first);
    await e.dispose();
    expect(imports).toBe(0);
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

  it('not cached and no network: one line naming the flag, the variable, the folder, the file and the commands', async () => {
    const e = createEmbedder({ model: DEFAULT_EMBED_MODEL, modelsDir, log: silentLog });
    const error = await e.embed('the note').catch((caught: unknown) => caught as Error);
    expect(error).toMatchObject(UNAVAILABLE);
    const { message } = error as Error;
    expect(message).not.toContain('\n');
    expect(message).toMatch(/^cannot download the embedding model hf:\S+: http:\/\/127\.0\.0\.1:\d+ is unreachable/);
    const file = join(modelsDir, DEFAULT_MODEL_FILE);
    expect(message).toContain(
      `run qmd embed when online to download it, or fetch it yourself into the models folder: curl -fL --create-dirs -o ${file} ${process.env.HF_ENDPOINT}${DEFAULT_MODEL_PATH.slice(1)};`,
    );
    expect(message).toContain('or use a local model: --embed-model PATH.gguf or QMD_EMBED_MODEL=PATH.gguf');
    expect(message).toMatch(/Search works meanwhile, with BM25 only$/);
    await e.dispose();
  });

  it('not cached and downloads off (a search): says searches never download, and how to get it', async () => {
    const e = createEmbedder({ model: DEFAULT_EMBED_MODEL, modelsDir, download: false, log: silentLog });
    const error = await e.embed('the note').catch((caught: unknown) => caught as Error);
    expect(error).toMatchObject(UNAVAILABLE);
    expect((error as Error).message).toMatch(
      /^the embedding model hf:\S+ is not downloaded yet \(searches never download\): run qmd embed when online to download it, or fetch it yourself .* -o \S+hf_ggml-org_embeddinggemma-300M-Q8_0\.gguf .*--embed-model PATH\.gguf or QMD_EMBED_MODEL=PATH\.gguf$/,
    );
    await e.dispose();
  });

  it('cached but cut short, in a search (no downloads): named, kept, and the command that fetches it again', async () => {
    const cached = join(modelsDir, DEFAULT_MODEL_FILE);
    const model = readFileSync(tinyModelPath());
    writeFileSync(cached, model.subarray(0, 200_000));
    const e = createEmbedder({ model: DEFAULT_EMBED_MODEL, modelsDir, download: false, log: silentLog });
    const error = await e.embed('the note').catch((caught: unknown) => caught as Error);
    expect(error).toMatchObject({
      ...UNAVAILABLE,
      message: `the cached embedding model ${cached} is not usable: it was cut short (200000 bytes, of the ${model.length} its header describes); run qmd embed to fetch it again (searches never download)`,
    });
    expect(readFileSync(cached).length).toBe(200_000);
    await e.dispose();
  });

  it('cached: resolves from the models directory without the network', async () => {
    // node-llama-cpp's file name for the URI (the peer qmd's cache has the same name).
    copyFileSync(tinyModelPath(), join(modelsDir, DEFAULT_MODEL_FILE));
    const e = createEmbedder({ model: DEFAULT_EMBED_MODEL, modelsDir, log: silentLog, maxThreads: 2 });
    try {
      expect(await e.embed('the note')).toHaveLength(TINY_DIMENSIONS);
    } finally {
      await e.dispose();
    }
  });
});

describe('downloading an hf: model', () => {
  const saved = { HF_ENDPOINT: process.env.HF_ENDPOINT, MODEL_ENDPOINT: process.env.MODEL_ENDPOINT };
  afterEach(() => {
    for (const [key, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
  });

  it('fetches it from the host HF_ENDPOINT names into the exact cache file, reporting progress, then embeds', async () => {
    const model = readFileSync(tinyModelPath());
    const server = await startModelServer({ [DEFAULT_MODEL_PATH]: model });
    process.env.HF_ENDPOINT = server.endpoint;
    delete process.env.MODEL_ENDPOINT;
    const modelsDir = join(mkdtempSync(join(tmpdir(), 'qmd-llm-dl-')), 'models');
    const log = recordingLog();
    const progress: Array<{ downloadedBytes: number; totalBytes: number }> = [];
    const e = createEmbedder({
      model: DEFAULT_EMBED_MODEL,
      modelsDir,
      log,
      maxThreads: 2,
      onDownloadProgress: (p) => progress.push(p),
    });
    try {
      expect(await e.embed('the note')).toHaveLength(TINY_DIMENSIONS);
      expect(readFileSync(join(modelsDir, DEFAULT_MODEL_FILE)).equals(model)).toBe(true);
      expect(progress.length).toBeGreaterThan(0);
      expect(progress.every((p) => p.totalBytes === model.length)).toBe(true);
      expect(progress.at(-1)?.downloadedBytes).toBe(model.length);
      const done = progress.map((p) => p.downloadedBytes);
      expect(done).toEqual([...done].sort((a, b) => a - b));
      expect(log.lines).toEqual(
        expect.arrayContaining([
          `Downloading the embedding model ${DEFAULT_EMBED_MODEL} to ${modelsDir}...`,
          expect.stringMatching(
            new RegExp(
              `^Downloaded the embedding model to ${join(modelsDir, DEFAULT_MODEL_FILE)} \\(0\\.\\d MB in [\\d.]+ s\\)$`,
            ),
          ),
        ]),
      );
      expect(server.requests).toContain(`GET ${DEFAULT_MODEL_PATH}`);
    } finally {
      await e.dispose();
      await server.close();
    }
  });

  it('a cached web page in its place (left by an older release): deleted with a line, fetched again, embedded', async () => {
    const model = readFileSync(tinyModelPath());
    const server = await startModelServer({ [DEFAULT_MODEL_PATH]: { hub: model } });
    process.env.HF_ENDPOINT = server.endpoint;
    delete process.env.MODEL_ENDPOINT;
    const modelsDir = mkdtempSync(join(tmpdir(), 'qmd-llm-html-'));
    const cached = join(modelsDir, DEFAULT_MODEL_FILE);
    writeFileSync(cached, '<!DOCTYPE html><html>Sign in</html>');
    const log = recordingLog();
    const e = createEmbedder({ model: DEFAULT_EMBED_MODEL, modelsDir, log, maxThreads: 2 });
    try {
      expect(await e.embed('the note')).toHaveLength(TINY_DIMENSIONS);
      expect(readFileSync(cached).equals(model)).toBe(true);
      expect(log.lines).toContain(
        `The cached embedding model ${cached} was not usable (it is a web page (HTML), not a GGUF model): deleted it, fetching it again`,
      );
    } finally {
      await e.dispose();
      await server.close();
    }
  });

  it('a host that answers 404 for the file: one line with the URL and status, and the local-model way out', async () => {
    const server = await startModelServer({});
    process.env.HF_ENDPOINT = server.endpoint;
    delete process.env.MODEL_ENDPOINT;
    const modelsDir = mkdtempSync(join(tmpdir(), 'qmd-llm-404-'));
    const e = createEmbedder({ model: DEFAULT_EMBED_MODEL, modelsDir, log: silentLog });
    try {
      const error = await e.fingerprint().catch((caught: unknown) => caught as Error);
      expect(error).toMatchObject(UNAVAILABLE);
      expect((error as Error).message).toMatch(
        /^could not download the embedding model hf:\S+: .*404.* \(a local model needs no download: --embed-model PATH\.gguf or QMD_EMBED_MODEL=PATH\.gguf\)$/,
      );
      expect(existsSync(join(modelsDir, DEFAULT_MODEL_FILE))).toBe(false);
    } finally {
      await e.dispose();
      await server.close();
    }
  });
});
