/**
 * The index remembers its embedding model: `embed()` with a model named once, then every
 * reader without one uses it; a reader named another model says so in one line and never mixes
 * vectors of two models; a model file that moved is named as gone. Real tiny models
 * (generated), real node-llama-cpp, real SQLite.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openStore, type Store, type StoreOptions } from '../../src/core/index.js';
import type { ModelChange } from '../../src/core/types.js';
import { createEmbedder } from '../../src/llm/index.js';
import { silentLog } from '../../src/log.js';
import { expectQmdError, type Sandbox, sandbox } from '../store/helpers.js';
import { tinyModelPath, writeTinyModel } from '../support/gguf.js';
import { recordingLog } from '../support/recording-log.js';

// Holds the process's one Llama for the file (src/llm/llama.ts).
const keeper = createEmbedder({ model: tinyModelPath(), log: silentLog, maxThreads: 1 });
beforeAll(() => keeper.dimensions());
afterAll(() => keeper.dispose());

const NOTES = {
  'bread.md': '# Bread\n\nSourdough needs a starter, flour, water and salt.\n',
  'garden.md': '# Garden\n\nTomatoes and basil grow together in summer.\n',
};
/** Never found: a reader that fell back to it instead of the index's model would fail. */
const UNREACHABLE_DEFAULT = 'hf:nobody/nothing-GGUF/nothing.gguf';

let box: Sandbox;
let model: string;
const stores: Store[] = [];

function open(options: StoreOptions = {}): Store {
  const store = openStore(box.index, { embedThreads: 1, defaultEmbedModel: UNREACHABLE_DEFAULT, ...options });
  stores.push(store);
  return store;
}

beforeEach(async () => {
  box = sandbox();
  model = path.join(box.dir, 'models', 'mine.gguf');
  fs.mkdirSync(path.dirname(model));
  fs.copyFileSync(tinyModelPath(), model);
  const store = openStore(box.index);
  await store.addCollection(box.notes('notes', NOTES), { name: 'notes' });
  await store.close();
  await open({ embedModel: model }).embed();
});

afterEach(async () => {
  await Promise.all(stores.splice(0).map((s) => s.close()));
  box.cleanup();
});

describe('a reader given no model uses the index’s', () => {
  it('query, vsearch and status: the model named once, by absolute path, with its fingerprint', async () => {
    const reader = open({ readonly: true });
    expect(reader.embeddingModel()).toEqual({ spec: model, source: 'index' });
    expect((await reader.query('sourdough starter')).mode).toBe('hybrid');
    const found = await reader.vsearch(NOTES['bread.md'], { limit: 1 });
    expect(found.hits[0]).toMatchObject({ file: 'notes/bread.md', score: 1 });
    expect(reader.status().embeddings).toMatchObject({ model, fingerprint: expect.stringMatching(/^sha256:/) });
  });

  it('a relative path is stored absolute, so the index means the same file from any directory', async () => {
    const fresh = path.join(box.dir, 'fresh.sqlite');
    const cwd = process.cwd();
    process.chdir(path.dirname(model));
    try {
      const writer = openStore(fresh, { embedModel: 'mine.gguf', embedThreads: 1 });
      stores.push(writer);
      await writer.addCollection(path.join(box.dir, 'notes'), { name: 'notes' });
      expect((await writer.embed()).model).toBe(model);
    } finally {
      process.chdir(cwd);
    }
    const reader = openStore(fresh, { readonly: true, embedThreads: 1, defaultEmbedModel: UNREACHABLE_DEFAULT });
    stores.push(reader);
    expect(reader.status().embeddings.model).toBe(model);
    expect((await reader.query('sourdough')).mode).toBe('hybrid');
  });

  it('embed() with no model goes on with the index’s: nothing re-embedded, no change said', async () => {
    const changes: ModelChange[] = [];
    const report = await open().embed({ onModelChange: (c) => changes.push(c) });
    expect(report).toMatchObject({ model, embedded: 0 });
    expect(report.previousModel).toBeUndefined();
    expect(changes).toEqual([]);
  });
});

describe('a reader named another model', () => {
  let other: string;
  beforeEach(() => {
    other = path.join(box.dir, 'models', 'other.gguf');
    writeTinyModel(other, { seed: 2 });
  });

  it('query: BM25, one warning naming both models and the fix, a note; nothing mixed', async () => {
    const log = recordingLog();
    const reader = open({ readonly: true, embedModel: other, log });
    const first = await reader.query('sourdough starter');
    await reader.query('tomatoes');
    expect(first.mode).toBe('bm25');
    expect(first.note).toMatch(/^the index is embedded with another model: BM25 only \(the index is embedded with /);
    expect(log.warnings).toEqual([
      `the index is embedded with ${model}, and --embed-model names another model (${other}): leave --embed-model ` +
        `out to search with the index's model, or re-embed the index with it (qmd embed --embed-model ${other}); ` +
        'searching with BM25 only',
    ]);
  });

  it('vsearch: refused with MODEL_MISMATCH, one line; named by QMD_EMBED_MODEL, it says so', async () => {
    const reader = open({ readonly: true, embedModel: other, embedModelGivenAs: 'QMD_EMBED_MODEL' });
    const error = await expectQmdError(() => reader.vsearch('sourdough'), 'MODEL_MISMATCH');
    expect(error.message).toBe(
      `the index is embedded with ${model}, and QMD_EMBED_MODEL names another model (${other}): leave ` +
        "QMD_EMBED_MODEL out to search with the index's model, or re-embed the index with it (qmd embed)",
    );
  });

  it('the same model under another path is no other model: its vectors are searched', async () => {
    const copy = path.join(box.dir, 'copy.gguf');
    fs.copyFileSync(model, copy);
    expect((await open({ readonly: true, embedModel: copy }).query('sourdough')).mode).toBe('hybrid');
  });

  it('embed() with it re-embeds everything and says so first; the index then remembers it', async () => {
    const changes: ModelChange[] = [];
    const report = await open({ embedModel: other }).embed({ onModelChange: (c) => changes.push(c) });
    const change = { from: model, to: other, reembed: true };
    expect(changes).toEqual([change]);
    expect(report).toMatchObject({ model: other, previousModel: change, skipped: 0 });
    expect(report.embedded).toBe(report.chunks);
    expect(open({ readonly: true }).embeddingModel()).toEqual({ spec: other, source: 'index' });
  });
});

describe('the index’s model file is gone or changed', () => {
  it('moved: query is BM25 with one line saying where it was and how to name its new place; vsearch refuses', async () => {
    const moved = path.join(box.dir, 'elsewhere.gguf');
    fs.renameSync(model, moved);
    const log = recordingLog();
    const result = await open({ readonly: true, log }).query('sourdough');
    expect(result.mode).toBe('bm25');
    const gone =
      `the index's embedding model ${model} is gone (moved or deleted?): name its new place with --embed-model PATH ` +
      'or QMD_EMBED_MODEL=PATH (qmd embed --embed-model PATH remembers it, nothing re-embedded)';
    expect(log.warnings).toEqual([`${gone}; searching with BM25 only`]);
    const error = await expectQmdError(() => open({ readonly: true }).vsearch('sourdough'), 'MODEL_UNAVAILABLE');
    expect(error.message).toBe(gone);
    // Named at its new place, it searches; `embed` remembers the place and re-embeds nothing.
    expect((await open({ readonly: true, embedModel: moved }).query('sourdough')).mode).toBe('hybrid');
    const changes: ModelChange[] = [];
    const report = await open({ embedModel: moved }).embed({ onModelChange: (c) => changes.push(c) });
    expect(changes).toEqual([{ from: model, to: moved, reembed: false }]);
    expect(report.embedded).toBe(0);
    expect((await open({ readonly: true }).query('sourdough')).mode).toBe('hybrid');
  });

  it('rewritten with another model: BM25, and the line says the file changed', async () => {
    writeTinyModel(model, { seed: 3 });
    const log = recordingLog();
    expect((await open({ readonly: true, log }).query('sourdough')).mode).toBe('bm25');
    expect(log.warnings).toEqual([
      `the model file ${model} has changed since the index was embedded with it: re-embed with it (qmd embed), ` +
        'or put the original file back; searching with BM25 only',
    ]);
  });

  it('re-embedded by another process after this one loaded its model: says to restart', async () => {
    const reader = open({ readonly: true });
    expect((await reader.query('sourdough')).mode).toBe('hybrid');
    const other = path.join(box.dir, 'other.gguf');
    writeTinyModel(other, { seed: 4 });
    await open({ embedModel: other }).embed();
    const error = await expectQmdError(() => reader.vsearch('sourdough'), 'MODEL_MISMATCH');
    expect(error.message).toBe(
      `the index was re-embedded with ${other} after this process loaded ${model}: restart it to search with the new model`,
    );
  });
});
