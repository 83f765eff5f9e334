/**
 * The vector index with the real tiny model (64 dimensions, generated) and real SQLite files:
 * filters answered inside the index agree with a brute force over `embeddings.vector` in the
 * test, the coarse pass plus re-score reaches recall@10 ≥ 0.95 on real embeddings, the codes
 * follow documents that move, collections that go and text shared by two collections, and a
 * version 3 index opens, migrates and searches (docs/design.md §8.2, §8.3).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../../src/core/index.js';
import { createEmbedder } from '../../../src/llm/index.js';
import { silentLog } from '../../../src/log.js';
import { VectorSearcher } from '../../../src/search/vector-search.js';
import { latestVersion } from '../../../src/store/schema/schema.js';
import { loadSqliteVec, Sqlite } from '../../../src/store/sqlite.js';
import { fromBlob, normalize, Vectors } from '../../../src/store/vectors/vectors.js';
import { generateCorpus } from '../../support/corpus.js';
import { tinyModelPath } from '../../support/gguf.js';
import { type Sandbox, sandbox } from '../helpers.js';
import { downgradeToVersion3 } from '../schema-v3.js';

// Holds the process's one Llama for the whole file (src/llm/llama.ts).
const keeper = createEmbedder({ model: tinyModelPath(), log: silentLog, maxThreads: 1 });
beforeAll(() => keeper.dimensions());
afterAll(() => keeper.dispose());

let box: Sandbox;
const stores: Store[] = [];
const open = (): Store => {
  const store = openStore(box.index, { embedModel: tinyModelPath(), embedThreads: 1 });
  stores.push(store);
  return store;
};

beforeEach(() => {
  box = sandbox();
});
afterEach(async () => {
  await Promise.allSettled(stores.splice(0).map((s) => s.close()));
  box.cleanup();
});

/** A connection to the index with sqlite-vec, as the store reads it. */
function connect(): { db: Sqlite; vectors: Vectors; searcher: VectorSearcher; fingerprint: string } {
  const db = new Sqlite(box.index, { allowExtension: true });
  loadSqliteVec(db);
  const vectors = new Vectors(db, { extension: true, log: silentLog });
  return { db, vectors, searcher: new VectorSearcher(db, vectors), fingerprint: vectors.state().fingerprint as string };
}

/** Every document's best chunk similarity to `query`, by brute force over the float copy. */
function exactDocuments(db: Sqlite, query: Float32Array, where: string): { file: string; score: number }[] {
  const best = new Map<string, number>();
  const rows = db
    .prepare<[], { file: string; vector: Uint8Array }>(
      `SELECT d.collection || '/' || d.path AS file, e.vector FROM documents d
       JOIN chunks c ON c.content_hash = d.hash JOIN embeddings e ON e.chunk_hash = c.hash WHERE ${where}`,
    )
    .all();
  for (const row of rows) {
    const score = dot(query, fromBlob(row.vector));
    best.set(row.file, Math.max(best.get(row.file) ?? -2, score));
  }
  return [...best.entries()]
    .map(([file, score]) => ({ file, score }))
    .sort((a, b) => b.score - a.score || (a.file < b.file ? -1 : 1));
}

function dot(a: Float32Array, b: Float32Array): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += a[i]! * b[i]!;
  return sum;
}

async function queryVectors(texts: string[]): Promise<Float32Array[]> {
  const out: Float32Array[] = [];
  for (const text of texts) out.push(normalize(await keeper.embed(text)));
  return out;
}

/** Two collections of generated notes (`a`: 60, `b`: 40), embedded with the tiny model. */
async function corpusIndex(): Promise<Store> {
  const a = generateCorpus(path.join(box.dir, 'a'), { files: 60, seed: 11 });
  const b = generateCorpus(path.join(box.dir, 'b'), { files: 40, seed: 12 });
  const store = open();
  await store.addCollection(a.dir, { name: 'a' });
  await store.addCollection(b.dir, { name: 'b' });
  await store.embed();
  expect(store.status().embeddings.vectorBackend).toBe('sqlite-vec');
  return store;
}

const QUERIES = [
  'the index of the notes and the server',
  'a list of things to do in the garden this summer',
  'how the code handles an error',
  'meeting notes from the weekly review',
  'bread and flour and water',
  'one more note about the weather',
  'what this folder holds',
  'to be or not to be',
];

describe('the vector index (tiny model)', () => {
  it('a filtered search is the exact answer: collections and a folder, against a brute force over embeddings.vector', async () => {
    await corpusIndex();
    const { db, vectors, searcher, fingerprint } = connect();
    try {
      const folder = db.value<string>(
        "SELECT substr(path, 1, instr(path, '/') - 1) FROM documents WHERE collection = 'a' AND path LIKE '%/%' LIMIT 1",
      ) as string;
      expect(folder).not.toBe('');
      const cases = [
        { collections: '["a"]', prefix: undefined, where: "d.collection = 'a'" },
        { collections: '["b"]', prefix: undefined, where: "d.collection = 'b'" },
        { collections: '["a","b"]', prefix: undefined, where: 'TRUE' },
        { collections: '["a"]', prefix: folder, where: `d.collection = 'a' AND d.path LIKE '${folder}/%'` },
      ];
      let otherCollectionNearer = 0;
      for (const query of await queryVectors(QUERIES)) {
        const unfiltered = searcher.search(query, fingerprint, 10);
        expect(unfiltered.map((h) => h.file)).toEqual(
          exactDocuments(db, query, 'TRUE')
            .slice(0, 10)
            .map((d) => d.file),
        );
        if (unfiltered.some((h) => h.collection === 'b')) otherCollectionNearer++;
        for (const { collections, prefix, where } of cases) {
          const exact = exactDocuments(db, query, where).slice(0, 10);
          const hits = searcher.search(query, fingerprint, 10, collections, prefix);
          expect(
            hits.map((h) => h.file),
            `${collections} ${prefix}`,
          ).toEqual(exact.map((d) => d.file));
          for (const [i, hit] of hits.entries()) expect(hit.score).toBeCloseTo(exact[i]!.score / exact[0]!.score, 6);
          // Inside the index: every candidate of the coarse pass is in the filter (the
          // documents step filters too, so this is what shows the KNN did).
          const allowed = new Set(
            db
              .column<[], number>(
                `SELECT e.id FROM documents d JOIN chunks c ON c.content_hash = d.hash
                 JOIN embeddings e ON e.chunk_hash = c.hash WHERE ${where}`,
              )
              .all(),
          );
          const candidates = vectors.nearest(query, fingerprint, 40, { collections, pathPrefix: prefix }).neighbours;
          expect(candidates.length).toBeGreaterThan(0);
          for (const n of candidates) expect(allowed.has(n.id)).toBe(true);
        }
      }
      // The filter matters: unfiltered, notes of `b` are among the nearest for some queries.
      expect(otherCollectionNearer).toBeGreaterThan(0);
    } finally {
      db.close();
    }
  });

  it('recall@10 of the coarse pass plus re-score against exact search on real embeddings is at least 0.95', async () => {
    await corpusIndex();
    const { db, vectors, fingerprint } = connect();
    try {
      const all = db
        .prepare<[], { id: number; vector: Uint8Array }>('SELECT id, vector FROM embeddings')
        .all()
        .map((row) => ({ id: row.id, vector: fromBlob(row.vector) }));
      expect(all.length).toBeGreaterThan(200);
      // Held-out queries: texts that are not notes, and some notes' first lines reworded.
      const texts = [...QUERIES, ...Array.from({ length: 24 }, (_, i) => `note ${i} of the ${QUERIES[i % 8]} again`)];
      let found = 0;
      let total = 0;
      for (const query of await queryVectors(texts)) {
        const truth = all
          .map((v) => ({ id: v.id, similarity: dot(query, v.vector) }))
          .sort((a, b) => b.similarity - a.similarity || a.id - b.id)
          .slice(0, 10);
        // C = 40: what VectorSearcher asks for a page of 10 documents.
        const got = vectors.nearest(query, fingerprint, 40).neighbours.slice(0, 10);
        const want = new Set(truth.map((n) => n.id));
        found += got.filter((n) => want.has(n.id)).length;
        // Skipping the re-score would leave the codes' ranking and similarities.
        total += 10;
        // Re-scored: each similarity returned is the float dot product.
        for (const n of got) expect(n.similarity).toBeCloseTo(dot(query, all.find((v) => v.id === n.id)!.vector), 6);
      }
      expect(found / total).toBeGreaterThanOrEqual(0.95);
    } finally {
      db.close();
    }
  });

  it('with cells (an inverted file) reading a third of them, recall@10 on real embeddings is still at least 0.95', async () => {
    await corpusIndex();
    const { db, fingerprint } = connect();
    try {
      // This index is far below the rows where cells start (MIN_ROWS_FOR_CELLS): force 16 and
      // rebuild the codes, as a writer does when the rows call for cells.
      const vectors = new Vectors(db, {
        extension: true,
        log: silentLog,
        cellsFor: () => 16,
        probes: (cells, widen) => Math.min(cells, Math.ceil(cells / 3) * 4 ** widen),
      });
      db.transaction(() => {
        db.exec('UPDATE embedding_state SET vec_dims = NULL');
        vectors.syncCodes();
      });
      const cells = db.value<number>('SELECT count(*) FROM vector_cells') as number;
      expect(cells).toBeGreaterThanOrEqual(12);
      expect(db.value('SELECT count(DISTINCT cell) FROM chunk_codes')).toBeGreaterThanOrEqual(8);
      const all = db
        .prepare<[], { id: number; vector: Uint8Array }>('SELECT id, vector FROM embeddings')
        .all()
        .map((row) => ({ id: row.id, vector: fromBlob(row.vector) }));
      const texts = [...QUERIES, ...Array.from({ length: 24 }, (_, i) => `note ${i} of the ${QUERIES[i % 8]} again`)];
      let found = 0;
      let total = 0;
      let partial = 0;
      for (const query of await queryVectors(texts)) {
        const want = new Set(
          all
            .map((v) => ({ id: v.id, similarity: dot(query, v.vector) }))
            .sort((a, b) => b.similarity - a.similarity || a.id - b.id)
            .slice(0, 10)
            .map((n) => n.id),
        );
        const result = vectors.nearest(query, fingerprint, 40);
        if (!result.complete) partial++;
        found += result.neighbours.slice(0, 10).filter((n) => want.has(n.id)).length;
        total += 10;
      }
      // The cells were read in part (else this would measure nothing new).
      expect(partial).toBe(texts.length);
      expect(found / total).toBeGreaterThanOrEqual(0.95);
    } finally {
      db.close();
    }
  });

  it('a note moved to another collection is found under the new filter, not the old, without embedding again', async () => {
    const a = box.notes('a', {
      'bread.md': '# Bread\n\nSourdough needs a starter, flour, water and salt.\n',
      'garden.md': '# Garden\n\nTomatoes and basil grow together in summer.\n',
    });
    const b = box.notes('b', { 'server.md': '# Server\n\nA server must never outlive its client.\n' });
    const store = open();
    await store.addCollection(a, { name: 'a' });
    await store.addCollection(b, { name: 'b' });
    await store.embed();
    const bread = 'Sourdough needs a starter, flour, water and salt.';
    const files = async (collections: string[]) =>
      (await store.vsearch(bread, { collections, limit: 10 })).hits.map((h) => h.file);
    expect((await files(['a']))[0]).toBe('a/bread.md');
    expect(await files(['b'])).not.toContain('a/bread.md');

    fs.renameSync(path.join(a, 'bread.md'), path.join(b, 'bread.md'));
    await store.update();
    expect(store.status().embeddings.vectorBackend).toBe('sqlite-vec');
    expect((await files(['b']))[0]).toBe('b/bread.md');
    expect(await files(['a'])).toEqual(['a/garden.md']);
    expect((await files(['a', 'b'])).filter((f) => f.endsWith('bread.md'))).toEqual(['b/bread.md']);

    // The collection goes: its rows and codes go with it.
    store.removeCollection('b');
    const { db } = connect();
    try {
      expect(db.value("SELECT count(*) FROM vector_rows WHERE collection = 'b'")).toBe(0);
      expect(db.value("SELECT count(*) FROM chunk_codes WHERE collection = 'b'")).toBe(0);
      expect(db.value('SELECT count(*) FROM chunk_codes')).toBe(db.value('SELECT count(*) FROM vector_rows'));
      expect(db.value('SELECT count(*) FROM code_queue')).toBe(0);
    } finally {
      db.close();
    }
    expect(await files(['a'])).toEqual(['a/garden.md']);
  });

  it('a note whose text is in two collections is found under either filter; its vector is stored once', async () => {
    const shared = '# Shared\n\nThe same checklist lives in both folders, word for word.\n';
    const a = box.notes('a', { 'list.md': shared, 'other.md': '# Other\n\nSomething else entirely.\n' });
    const b = box.notes('b', { 'copy.md': shared, 'more.md': '# More\n\nA different note in b.\n' });
    const store = open();
    await store.addCollection(a, { name: 'a' });
    await store.addCollection(b, { name: 'b' });
    await store.embed();
    const query = 'The same checklist lives in both folders, word for word.';
    const first = async (collections: string[]) =>
      (await store.vsearch(query, { collections, limit: 5 })).hits[0]?.file;
    expect(await first(['a'])).toBe('a/list.md');
    expect(await first(['b'])).toBe('b/copy.md');
    const { db } = connect();
    try {
      const sharedChunks = db.value<number>(
        "SELECT count(*) FROM embeddings e JOIN chunks c ON c.hash = e.chunk_hash JOIN documents d ON d.hash = c.content_hash WHERE d.path = 'list.md'",
      );
      expect(sharedChunks).toBeGreaterThan(0);
      // One float vector, a code per document.
      expect(db.value('SELECT count(*) FROM embeddings')).toBe(sharedChunks! + 2);
      expect(db.value('SELECT count(*) FROM chunk_codes')).toBe(db.value('SELECT count(*) FROM vector_rows'));
    } finally {
      db.close();
    }
  });

  it('a version 3 index (float vec0 copy, no codes) opens, migrates to version 4 and searches as before', async () => {
    const store = await corpusIndex();
    const query = 'a list of things to do in the garden this summer';
    const before = {
      all: (await store.vsearch(query, { limit: 10 })).hits.map((h) => h.file),
      b: (await store.vsearch(query, { collections: ['b'], limit: 10 })).hits.map((h) => h.file),
    };
    await store.close();
    downgradeToVersion3(box.index);
    {
      const db = new Sqlite(box.index, { readOnly: true });
      expect(db.pragmaValue('user_version')).toBe(3);
      expect(
        db.value("SELECT count(*) FROM sqlite_schema WHERE name IN ('chunk_vectors', 'vector_rows', 'chunk_codes')"),
      ).toBe(1);
      db.close();
    }

    // Read-only, as `qmd mcp` opens it: the migration still runs (and builds the codes).
    const reader = openStore(box.index, { embedModel: tinyModelPath(), embedThreads: 1, readonly: true });
    stores.push(reader);
    expect(reader.status().embeddings.vectorBackend).toBe('sqlite-vec');
    expect((await reader.vsearch(query, { limit: 10 })).hits.map((h) => h.file)).toEqual(before.all);
    expect((await reader.vsearch(query, { collections: ['b'], limit: 10 })).hits.map((h) => h.file)).toEqual(before.b);
    const { db } = connect();
    try {
      expect(db.pragmaValue('user_version')).toBe(latestVersion);
      expect(db.prepare("SELECT 1 FROM sqlite_schema WHERE name = 'chunk_vectors'").get()).toBeUndefined();
      expect(db.value('SELECT count(*) FROM chunk_codes')).toBe(db.value('SELECT count(*) FROM vector_rows'));
      expect(db.value('SELECT count(*) FROM vector_rows')).toBeGreaterThanOrEqual(
        db.value<number>('SELECT count(*) FROM embeddings')!,
      );
    } finally {
      db.close();
    }
  });
});
