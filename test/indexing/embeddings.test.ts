/**
 * The store's embeddings end to end in one process: the real tiny model (64 dimensions,
 * generated), real node-llama-cpp, real SQLite with and without sqlite-vec. No mocks; the
 * only fakes are hand-written failpoints and logs passed through options.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openStore, type Store, type StoreOptions } from '../../src/core/index.js';
import type { Failpoints } from '../../src/failpoints.js';
import { createEmbedder } from '../../src/llm/index.js';
import { silentLog } from '../../src/log.js';
import { Sqlite } from '../../src/store/sqlite.js';
import { chunkNote, promptFormat } from '../../src/text/chunks.js';
import { expectQmdError, type Sandbox, sandbox } from '../store/helpers.js';
import { TINY_DIMENSIONS, tinyModelPath, writeTinyModel } from '../support/gguf.js';
import { recordingLog } from '../support/recording-log.js';

// Holds the process's one Llama for the whole file (src/llm/llama.ts): each store's embedder
// shares it instead of starting llama.cpp again.
const keeper = createEmbedder({ model: tinyModelPath(), log: silentLog, maxThreads: 1 });
beforeAll(() => keeper.dimensions());
afterAll(() => keeper.dispose());

const sentences = (topic: string, n: number): string =>
  Array.from({ length: n }, (_, i) => `The ${topic} note ${i} tells about ${topic} and more ${topic}.`).join(' ');

/** One single-chunk note per topic, and one long note of several chunks. */
const NOTES: Record<string, string> = {
  'bread.md': `# Bread\n\nSourdough needs a starter, flour, water and salt. ${sentences('bread', 3)}\n`,
  'garden.md': `# Garden\n\nTomatoes and basil grow together in summer. ${sentences('garden', 3)}\n`,
  'server.md': `# Server\n\nA server must never outlive its client. ${sentences('server', 3)}\n`,
  'sqlite.md': `# SQLite\n\nWAL mode lets readers and one writer share the index. ${sentences('sqlite', 3)}\n`,
  'long.md': [
    '# Long',
    '## One',
    sentences('first', 12),
    '## Two',
    sentences('second', 12),
    '## Three',
    sentences('third', 12),
  ].join('\n\n'),
};

let box: Sandbox;
let notes: string;
const stores: Store[] = [];

function open(options: StoreOptions = {}): Store {
  const store = openStore(box.index, { embedModel: tinyModelPath(), embedThreads: 1, ...options });
  stores.push(store);
  return store;
}

beforeEach(async () => {
  box = sandbox();
  notes = box.notes('notes', NOTES);
  const store = openStore(box.index);
  await store.addCollection(notes, { name: 'notes' });
  await store.close();
});

afterEach(async () => {
  await Promise.allSettled(stores.splice(0).map((s) => s.close()));
  box.cleanup();
});

function rows(sql: string): unknown[] {
  const db = new Sqlite(box.index, { readOnly: true });
  try {
    return db.prepare(sql).all();
  } finally {
    db.close();
  }
}

describe('embed()', () => {
  it('stores 64-dimension vectors; the same text always gets the same vector', async () => {
    const store = open();
    const report = await store.embed();
    expect(report).toMatchObject({ documents: 5, embedded: report.chunks, skipped: 0, vectorBackend: 'sqlite-vec' });
    expect(report.chunks).toBeGreaterThan(5); // long.md has several
    const stored = rows('SELECT chunk_hash, dims, vector FROM embeddings') as Array<{
      chunk_hash: string;
      dims: number;
      vector: Uint8Array;
    }>;
    expect(new Set(stored.map((r) => r.dims))).toEqual(new Set([TINY_DIMENSIONS]));
    for (const r of stored) expect(r.vector.byteLength).toBe(TINY_DIMENSIONS * 4);

    // Another index, the same notes: byte-identical vectors for each chunk.
    const other = openStore(path.join(box.dir, 'other.sqlite'), { embedModel: tinyModelPath(), embedThreads: 1 });
    stores.push(other);
    await other.addCollection(notes, { name: 'notes' });
    await other.embed();
    await other.close();
    const db = new Sqlite(path.join(box.dir, 'other.sqlite'), { readOnly: true });
    const again = new Map(
      (db.prepare('SELECT chunk_hash, vector FROM embeddings').all() as typeof stored).map((r) => [
        r.chunk_hash,
        r.vector,
      ]),
    );
    db.close();
    expect(again.size).toBe(stored.length);
    for (const r of stored) expect(Buffer.from(again.get(r.chunk_hash) ?? []).equals(r.vector)).toBe(true);
  });

  it('is incremental: a second run embeds nothing; a changed note re-embeds only its changed chunks', async () => {
    const store = open();
    const first = await store.embed();
    expect(await store.embed()).toMatchObject({ documents: 0, embedded: 0, skipped: first.chunks, removed: 0 });

    const file = path.join(notes, 'long.md');
    const before = chunkNote(fs.readFileSync(file, 'utf8'), 509, promptFormat(tinyModelPath()));
    const changed = fs.readFileSync(file, 'utf8').replace('## Three', '## Three, rewritten');
    fs.writeFileSync(file, changed);
    await store.update();
    const after = chunkNote(changed, 509, promptFormat(tinyModelPath()));
    const kept = after.filter((c) => before.some((b) => b.hash === c.hash)).length;
    expect(kept).toBeGreaterThan(0); // the first sections did not change

    const report = await store.embed();
    expect(report).toMatchObject({ documents: 1, embedded: after.length - kept, removed: before.length - kept });
    expect(report.skipped).toBe(report.chunks - report.embedded);
    expect(store.status().embeddings).toMatchObject({
      model: tinyModelPath(),
      chunks: report.chunks,
      embeddedChunks: report.chunks,
      vectorBackend: 'sqlite-vec',
    });
  });

  it('stops between chunks when its signal fires, keeps what it computed, and the next run resumes', async () => {
    const store = open();
    const controller = new AbortController();
    await expectQmdError(
      () =>
        store.embed({
          batchSize: 2,
          signal: controller.signal,
          onProgress: ({ done }) => {
            if (done === 3) controller.abort();
          },
        }),
      'ABORTED',
    );
    expect(rows('SELECT id FROM embeddings')).toHaveLength(3);
    const rest = await store.embed();
    expect(rest.embedded).toBe(rest.chunks - 3);
    expect(rest.skipped).toBe(3);
  });

  it('another model re-embeds everything and leaves no vector of the old one', async () => {
    await open().embed();
    const second = path.join(box.dir, 'tiny-seed-2.gguf');
    writeTinyModel(second, { seed: 2 });
    const store = open({ embedModel: second });
    const result = await store.query('sourdough starter');
    expect(result).toMatchObject({ mode: 'bm25', note: expect.stringContaining('embedded with another model') });
    const report = await store.embed();
    expect(report).toMatchObject({ embedded: report.chunks, skipped: 0 });
    expect(rows('SELECT DISTINCT model FROM embeddings')).toHaveLength(1);
    expect((await store.query('sourdough starter')).mode).toBe('hybrid');
  });
});

describe('vector and hybrid search', () => {
  const bread = NOTES['bread.md'] as string;

  it('vsearch returns the exact duplicate of a note first, similarity 1', async () => {
    const store = open();
    await store.embed();
    const result = await store.vsearch(bread, { limit: 3 });
    expect(result.mode).toBe('vector');
    expect(result.hits[0]).toMatchObject({ file: 'notes/bread.md', line: 1 });
    expect(result.hits[0]?.score).toBeCloseTo(1, 4);
    for (const hit of result.hits) expect(hit.score).toBeLessThanOrEqual(1);
    expect(result.hits[1]?.score).toBeLessThan(result.hits[0]?.score as number);
  });

  it('hybrid puts the note that wins both rankings first, with score 1', async () => {
    const store = open();
    await store.embed();
    // Every term is in bread.md (BM25 first) and the text is bread.md's own (nearest vector).
    const result = await store.query(bread, { limit: 5 });
    expect(result.mode).toBe('hybrid');
    expect(result.note).toBeUndefined();
    expect(result.hits[0]).toMatchObject({ file: 'notes/bread.md', score: 1 });
    expect(result.hits[0]?.snippet).toContain('**'); // BM25's highlighted snippet
    for (const hit of result.hits) expect(hit.score).toBeGreaterThan(0);
    // A collection filter applies to both rankings.
    await expectQmdError(() => store.query('bread', { collections: ['nope'] }), 'UNKNOWN_COLLECTION');
  });

  it('is BM25 alone, and says so, when nothing is embedded', async () => {
    const store = open();
    const result = await store.query('sourdough');
    expect(result).toEqual({
      mode: 'bm25',
      hits: store.search('sourdough'),
      note: 'nothing is embedded yet: BM25 only (run qmd embed)',
      // The plain query is two sub-searches; the vector one could not run.
      searches: [
        { type: 'lex', query: 'sourdough', ran: 'bm25', candidates: 1 },
        { type: 'vec', query: 'sourdough', ran: 'skipped', candidates: 0 },
      ],
      reranked: false,
    });
    // vsearch runs no BM25: its note says what it lacks, and where to search meanwhile.
    expect(await store.vsearch('sourdough')).toMatchObject({
      mode: 'vector',
      hits: [],
      note: 'nothing is embedded yet: vsearch has no vectors to search (run qmd embed; qmd search works without them)',
    });
    expect(store.status().embeddings).toEqual({
      model: null,
      fingerprint: null,
      chunks: 0,
      embeddedChunks: 0,
      vectorBackend: 'none',
    });
  });

  it('without the sqlite-vec extension, the scan gives the same ranking', async () => {
    const withVec = open();
    await withVec.embed();
    const expected = await withVec.vsearch(bread, { limit: 4 });
    const hybrid = await withVec.query('server client', { limit: 4 });
    await withVec.close();

    const fallback = open({ vectorExtension: false });
    expect(fallback.status().embeddings.vectorBackend).toBe('fallback');
    const got = await fallback.vsearch(bread, { limit: 4 });
    expect(got.hits.map((h) => h.file)).toEqual(expected.hits.map((h) => h.file));
    for (const [i, hit] of got.hits.entries()) expect(hit.score).toBeCloseTo(expected.hits[i]?.score as number, 4);
    expect((await fallback.query('server client', { limit: 4 })).hits).toEqual(hybrid.hits);
  });

  it('an index embedded without sqlite-vec is scanned until an embed run with it builds the table', async () => {
    const without = open({ vectorExtension: false });
    const report = await without.embed();
    expect(report.vectorBackend).toBe('fallback');
    await without.close();
    const store = open();
    expect(store.status().embeddings.vectorBackend).toBe('fallback');
    const scanned = await store.vsearch(bread, { limit: 3 });
    expect(await store.embed()).toMatchObject({ embedded: 0, vectorBackend: 'sqlite-vec' });
    expect(store.status().embeddings.vectorBackend).toBe('sqlite-vec');
    expect((await store.vsearch(bread, { limit: 3 })).hits.map((h) => h.file)).toEqual(scanned.hits.map((h) => h.file));
  });

  it('an unavailable model: BM25 with a note and one warning; vsearch says why', async () => {
    await open().embed();
    const log = recordingLog();
    const store = open({ embedModel: path.join(box.dir, 'missing.gguf'), log });
    for (let i = 0; i < 2; i++) {
      const result = await store.query('sourdough');
      expect(result.mode).toBe('bm25');
      expect(result.note).toMatch(/^the embedding model is unavailable: BM25 only \(no embedding model file at/);
      expect(result.hits[0]?.file).toBe('notes/bread.md');
    }
    expect(log.warnings).toHaveLength(1);
    await expectQmdError(() => store.vsearch('sourdough'), 'MODEL_UNAVAILABLE');
  });
});

describe('abort and close', () => {
  /** An `llm.embed` failpoint that holds the first call in its native section, ignoring its signal (like a running native call). */
  function holdingFailpoints() {
    let entered!: () => void;
    let release!: () => void;
    const inside = new Promise<void>((resolve) => {
      entered = resolve;
    });
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let calls = 0;
    const failpoints: Failpoints = {
      names: ['llm.embed'],
      has: (name) => name === 'llm.embed',
      carry: () => undefined,
      hit: (name) => {
        if (name !== 'llm.embed' || ++calls > 1) return undefined;
        entered();
        return gate;
      },
    };
    return { failpoints, inside, release };
  }

  it('a cancelled query settles at once; close() still waits for the running call, then closes the database', async () => {
    const first = open();
    await first.embed();
    await first.close();
    const hold = holdingFailpoints();
    const store = open({ failpoints: hold.failpoints });
    const controller = new AbortController();
    const query = store.query('sourdough', { signal: controller.signal });
    await hold.inside;
    controller.abort();
    await expectQmdError(() => query, 'ABORTED');

    let closed = false;
    const closing = store.close().then(() => {
      closed = true;
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(closed).toBe(false); // the call is still "running": nothing is disposed under it
    expect(fs.existsSync(`${box.index}-wal`)).toBe(true); // nor the database closed
    hold.release();
    await closing;
    expect(closed).toBe(true);
    expect(fs.existsSync(`${box.index}-wal`)).toBe(false);
  });

  it('after close(), embedding calls are refused with CLOSED and no model is created again', async () => {
    const store = open();
    await store.embed();
    await store.close();
    await expectQmdError(() => store.query('bread'), 'CLOSED');
    await expectQmdError(() => store.embed(), 'CLOSED');
  });
});
