import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { modelChangeLine } from '../../src/cli/commands/embed-commands.js';
import { embeddingModelLine } from '../../src/cli/model-status.js';
import { DEFAULT_EMBED_MODEL } from '../../src/llm/index.js';

const FINGERPRINT = `sha256:${'0123456789abcdef'.repeat(4)}`;
const embedded = (model: string | null) => ({
  model,
  fingerprint: model === null ? null : FINGERPRINT,
  chunks: 2,
  embeddedChunks: model === null ? 0 : 2,
  vectorBackend: 'sqlite-vec' as const,
});

describe("qmd status's line about the embedding model", () => {
  const dir = mkdtempSync(join(tmpdir(), 'qmd-model-status-'));
  const file = join(dir, 'mine.gguf');
  writeFileSync(file, 'GGUF');

  it('nothing embedded: which model qmd embed would use', () => {
    expect(embeddingModelLine(embedded(null), {})).toBe(
      `Embedding model: none yet; qmd embed uses ${DEFAULT_EMBED_MODEL}`,
    );
    expect(embeddingModelLine(embedded(null), { model: file, modelSource: 'env' })).toBe(
      `Embedding model: none yet; qmd embed uses ${file}`,
    );
  });

  it('the index’s model with a short fingerprint; a file gone says how to name its new place', () => {
    expect(embeddingModelLine(embedded(file), {})).toBe(`Embedding model: ${file} (sha256:0123456789ab…)`);
    expect(embeddingModelLine(embedded(join(dir, 'gone.gguf')), {})).toMatch(
      /: the file is gone \(moved or deleted\?\): name its new place with --embed-model PATH or QMD_EMBED_MODEL=PATH$/,
    );
  });

  it('a model named by the flag or the variable that searches would use instead', () => {
    expect(embeddingModelLine(embedded(file), { model: '/other.gguf', modelSource: 'env' })).toBe(
      `Embedding model: ${file} (sha256:0123456789ab…); QMD_EMBED_MODEL names /other.gguf: searches use it instead`,
    );
    expect(embeddingModelLine(embedded(file), { model: file, modelSource: 'flag' })).not.toContain('instead');
  });

  it('an hf: model: cached at its file, or not downloaded', () => {
    const env = { XDG_CACHE_HOME: join(dir, 'cache') };
    const models = join(dir, 'cache', 'qmd', 'models');
    const cached = join(models, 'hf_ggml-org_embeddinggemma-300M-Q8_0.gguf');
    expect(embeddingModelLine(embedded(DEFAULT_EMBED_MODEL), {}, env)).toMatch(
      new RegExp(`: not downloaded \\(${cached} is missing\\): run qmd embed when online$`),
    );
    mkdirSync(models, { recursive: true });
    writeFileSync(cached, 'GGUF');
    expect(embeddingModelLine(embedded(DEFAULT_EMBED_MODEL), {}, env)).toMatch(new RegExp(`, cached at ${cached}$`));
  });
});

describe('what qmd embed says before it moves the index to another model', () => {
  it('another model: every chunk re-embedded; the same file moved: remembered, nothing re-embedded', () => {
    expect(modelChangeLine({ from: '/a.gguf', to: '/b.gguf', reembed: true })).toBe(
      'Re-embedding every chunk with /b.gguf: the index was embedded with /a.gguf (its vectors are replaced)',
    );
    expect(modelChangeLine({ from: '/a.gguf', to: '/moved/a.gguf', reembed: false })).toBe(
      "The index's embedding model is now at /moved/a.gguf (was /a.gguf; the same model, nothing to re-embed)",
    );
  });
});
