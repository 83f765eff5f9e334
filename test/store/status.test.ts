/**
 * `status()` with qmd 2.8's fields beside ours, on a real index and the tiny model.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/core/index.js';
import { createEmbedder } from '../../src/llm/index.js';
import { silentLog } from '../../src/log.js';
import { Sqlite } from '../../src/store/sqlite.js';
import { tinyModelPath } from '../support/gguf.js';
import { type Sandbox, sandbox } from './helpers.js';

const keeper = createEmbedder({ model: tinyModelPath(), log: silentLog, maxThreads: 1 });
beforeAll(() => keeper.dimensions());
afterAll(() => keeper.dispose());

let box: Sandbox;
let notes: string;
let store: Store;

beforeEach(async () => {
  box = sandbox();
  notes = box.notes('notes', {
    'a.md': '# A\n\nFirst note.\n',
    'b.md': '# B\n\nSecond note.\n',
    'copy-of-a.md': '# A\n\nFirst note.\n', // the same text as a.md: one text to embed
    'blank.md': '   \n', // nothing to embed, ever
  });
  fs.utimesSync(path.join(notes, 'b.md'), new Date('2024-03-01T10:00:00Z'), new Date('2024-03-01T10:00:00Z'));
  fs.utimesSync(path.join(notes, 'a.md'), new Date('2023-01-01T00:00:00Z'), new Date('2023-01-01T00:00:00Z'));
  fs.utimesSync(path.join(notes, 'copy-of-a.md'), new Date('2023-01-01T00:00:00Z'), new Date('2023-01-01T00:00:00Z'));
  fs.utimesSync(path.join(notes, 'blank.md'), new Date('2022-01-01T00:00:00Z'), new Date('2022-01-01T00:00:00Z'));
  fs.mkdirSync(path.join(box.dir, 'empty'));
  store = openStore(box.index, { embedModel: tinyModelPath(), embedThreads: 1 });
  await store.addCollection(notes, { name: 'notes', mask: '**/*.md' });
  await store.addCollection(path.join(box.dir, 'empty'), { name: 'empty' });
});

afterEach(async () => {
  await store.close();
  box.cleanup();
});

describe('status()', () => {
  it('reports qmd 2.8’s fields: totalDocuments, needsEmbedding, hasVectorIndex, path, pattern, lastUpdated', () => {
    const status = store.status();
    expect(status).toMatchObject({ documents: 4, totalDocuments: 4, needsEmbedding: 2, hasVectorIndex: false });
    const byName = Object.fromEntries(status.collections.map((c) => [c.name, c]));
    expect(byName.notes).toMatchObject({
      root: fs.realpathSync(notes),
      path: fs.realpathSync(notes),
      mask: '**/*.md',
      pattern: '**/*.md',
      documents: 4,
      // The newest file's modification time, not the time of the scan.
      lastUpdated: '2024-03-01T10:00:00.000Z',
    });
    // No documents: the last scan is the only date there is.
    expect(byName.empty?.lastUpdated).toBe(byName.empty?.updatedAt);
  });

  it('needsEmbedding counts texts qmd embed would work on: none after it, one after an edit', async () => {
    await store.embed();
    expect(store.status()).toMatchObject({ needsEmbedding: 0, hasVectorIndex: true });
    fs.writeFileSync(path.join(notes, 'b.md'), '# B\n\nSecond note, edited.\n');
    fs.writeFileSync(path.join(notes, 'c.md'), '# C\n\nA new note.\n');
    await store.update();
    expect(store.status().needsEmbedding).toBe(2);
    await store.embed();
    expect(store.status().needsEmbedding).toBe(0);
  });

  it('needsEmbedding counts a text chunked but not wholly embedded (a run killed mid-embed)', async () => {
    await store.embed();
    expect(store.status().embeddings).toMatchObject({ chunks: 2, embeddedChunks: 2 });
    const db = new Sqlite(box.index, { timeoutMs: 5000 });
    try {
      db.prepare('DELETE FROM embeddings WHERE id = (SELECT min(id) FROM embeddings)').run();
    } finally {
      db.close();
    }
    // Its chunk is still there without a vector: the count that reads every chunk says so.
    expect(store.status()).toMatchObject({ needsEmbedding: 1, embeddings: { chunks: 2, embeddedChunks: 1 } });
  });

  it('lists the contexts', () => {
    store.setContext('notes', 'Two notes and a copy.');
    expect(store.status().contexts).toEqual([
      expect.objectContaining({ path: 'notes', text: 'Two notes and a copy.' }),
    ]);
  });
});
