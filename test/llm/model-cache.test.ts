import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cachedModel, howToGetModel } from '../../src/llm/model-cache.js';
import { DEFAULT_EMBED_MODEL } from '../../src/llm/model-file.js';

const ENDPOINT = 'https://huggingface.co/';

/**
 * The names must be node-llama-cpp's own, or a person who places the file where the message
 * says would still see the message: each is checked against its resolver, which finds a file
 * in the folder only under the name it expects (no download: `download: false`).
 */
describe('the cache file of an hf: URI is the one node-llama-cpp looks for', () => {
  it.each([
    [DEFAULT_EMBED_MODEL, 'hf_ggml-org_embeddinggemma-300M-Q8_0.gguf'],
    // The reranker and query-expansion models the peer uses (the repository is kept when the
    // file does not start with its name).
    [
      'hf:ggml-org/Qwen3-Reranker-0.6B-Q8_0-GGUF/qwen3-reranker-0.6b-q8_0.gguf',
      'hf_ggml-org_qwen3-reranker-0.6b-q8_0.gguf',
    ],
    [
      'hf:tobil/qmd-query-expansion-1.7B-gguf/qmd-query-expansion-1.7B-q4_k_m.gguf',
      'hf_tobil_qmd-query-expansion-1.7B-q4_k_m.gguf',
    ],
    ['hf:someone/models/small-embed.gguf', 'hf_someone_models_small-embed.gguf'],
    ['hf:someone/models-GGUF/sub/dir/e5.Q8_0.gguf', 'hf_someone_models-GGUF_sub__dir_e5.Q8_0.gguf'],
    ['hf:someone/bge-GGUF/bge-small/bge-small.gguf', 'hf_someone_bge-small.gguf'],
    ['hf:someone/bge-GGUF:Q8_0', 'hf_someone_bge.Q8_0.gguf'],
    ['hf:someone/bge-GGUF:q8_0', 'hf_someone_bge.Q8_0.gguf'],
    ['hf:someone/bge', 'hf_someone_bge_bge.Q4_K_M.gguf'],
  ])('%s → %s', async (uri, file) => {
    expect(cachedModel(uri, ENDPOINT)?.file).toBe(file);
    const { resolveModelFile } = await import('node-llama-cpp');
    const dir = mkdtempSync(join(tmpdir(), 'qmd-cache-name-'));
    writeFileSync(join(dir, file), 'GGUF');
    await expect(resolveModelFile(uri, { directory: dir, download: false, cli: false })).resolves.toBe(join(dir, file));
  });

  it('knows the download URL of a file URI, on the endpoint given (a mirror, or the tests’ server)', () => {
    expect(cachedModel(DEFAULT_EMBED_MODEL, ENDPOINT)?.url).toBe(
      'https://huggingface.co/ggml-org/embeddinggemma-300M-GGUF/resolve/main/embeddinggemma-300M-Q8_0.gguf',
    );
    expect(cachedModel(DEFAULT_EMBED_MODEL, 'http://127.0.0.1:9')?.url).toMatch(/^http:\/\/127\.0\.0\.1:9\/ggml-org\//);
    // A tag is resolved by asking the host: no URL to give.
    expect(cachedModel('hf:someone/bge-GGUF:Q8_0', ENDPOINT)?.url).toBeUndefined();
  });

  it('names nothing it cannot name exactly: another branch, a plain URL, a path, odd characters', () => {
    for (const spec of [
      'hf:someone/models/e5.gguf#dev',
      'https://example.com/e5.gguf',
      '/models/e5.gguf',
      'hf:someone/mo dels/e5.gguf',
      'hf:someone/models/e5.bin',
    ]) {
      expect(cachedModel(spec, ENDPOINT), spec).toBeUndefined();
    }
  });
});

describe('howToGetModel', () => {
  it('names the command, the exact file in the folder, the URL, the flag and the variable', () => {
    expect(howToGetModel(DEFAULT_EMBED_MODEL, '/c/qmd/models', ENDPOINT)).toBe(
      'run qmd embed when online to download it, or fetch it yourself into the models folder: ' +
        'curl -fL --create-dirs -o /c/qmd/models/hf_ggml-org_embeddinggemma-300M-Q8_0.gguf ' +
        'https://huggingface.co/ggml-org/embeddinggemma-300M-GGUF/resolve/main/embeddinggemma-300M-Q8_0.gguf; ' +
        'or use a local model: --embed-model PATH.gguf or QMD_EMBED_MODEL=PATH.gguf',
    );
  });

  it('without a URL, the file name; without a name, the folder', () => {
    expect(howToGetModel('hf:someone/bge-GGUF:Q8_0', '/m', ENDPOINT)).toMatch(
      /^run qmd embed when online to download it \(saved in \/m as hf_someone_bge\.Q8_0\.gguf\); or use a local model: --embed-model/,
    );
    expect(howToGetModel('https://example.com/e5.gguf', '/m', ENDPOINT)).toMatch(
      /^run qmd embed when online to download it into \/m; or use a local model: --embed-model PATH\.gguf or QMD_EMBED_MODEL=PATH\.gguf$/,
    );
  });

  it('names another kind of model by its own flag, variable and command', () => {
    const rerank = {
      noun: 'reranker',
      flag: '--rerank-model',
      env: 'QMD_RERANK_MODEL',
      downloadCommand: 'qmd pull',
      meanwhile: '',
    };
    expect(howToGetModel('hf:someone/bge-GGUF:Q8_0', '/m', ENDPOINT, rerank)).toBe(
      'run qmd pull when online to download it (saved in /m as hf_someone_bge.Q8_0.gguf); ' +
        'or use a local model: --rerank-model PATH.gguf or QMD_RERANK_MODEL=PATH.gguf',
    );
  });
});
