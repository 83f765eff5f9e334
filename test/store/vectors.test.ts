/**
 * The vector layer without a model: synthetic vectors in a real index, sqlite-vec against the
 * scan fallback, the vec0 table kept in step across writers with and without the extension,
 * and a change of model (and dimension) that must not corrupt anything. Plus the fusion.
 */

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { silentLog } from '../../src/log.js';
import { openDatabase } from '../../src/store/database.js';
import { fuseRankings, RRF_K } from '../../src/store/hybrid.js';
import type { Sqlite } from '../../src/store/sqlite.js';
import type { SearchHit } from '../../src/store/types.js';
import { normalize, Vectors } from '../../src/store/vectors.js';
import { recordingLog } from '../support/recording-log.js';
import { type Sandbox, sandbox } from './helpers.js';

let box: Sandbox;
const open: Sqlite[] = [];

beforeEach(() => {
  box = sandbox();
});
afterEach(() => {
  for (const db of open.splice(0)) db.close();
  box.cleanup();
});

function database(): Sqlite {
  const { db } = openDatabase(box.index, { readonly: false, busyTimeoutMs: 2000, quickCheck: false });
  open.push(db);
  return db;
}

/** A deterministic pseudo-random unit vector per seed. */
function unit(seed: number, dims: number): Float32Array {
  let state = seed * 2654435761;
  const v = Float32Array.from({ length: dims }, () => {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    return state / 2 ** 31 - 0.5;
  });
  return normalize(v);
}

/** `n` chunks (one content row each) so the vectors have chunks to belong to. */
function chunks(db: Sqlite, n: number): string[] {
  const hashes: string[] = [];
  // As `adopt` records it, so adopting the test model keeps these chunks.
  db.prepare("UPDATE embedding_state SET chunker = 'test'").run();
  const content = db.prepare('INSERT INTO content (hash, body) VALUES (?, ?)');
  const chunk = db.prepare(
    'INSERT INTO chunks (content_hash, seq, hash, start_offset, end_offset, line) VALUES (?, 0, ?, 0, 4, 1)',
  );
  for (let i = 0; i < n; i++) {
    content.run(`content-${i}`, `body ${i}`);
    chunk.run(`content-${i}`, `chunk-${i}`);
    hashes.push(`chunk-${i}`);
  }
  return hashes;
}

const model = (fingerprint: string, dims: number) => ({
  spec: `/models/${fingerprint}.gguf`,
  fingerprint,
  dims,
  maxTokens: 509,
  chunker: 'test',
});

function embedAll(db: Sqlite, vectors: Vectors, fingerprint: string, dims: number, hashes: string[]) {
  db.transaction(() => {
    vectors.adopt(model(fingerprint, dims));
    vectors.write(
      fingerprint,
      dims,
      hashes.map((chunkHash, i) => ({ chunkHash, vector: unit(i + 1, dims) })),
      'now',
    );
  });
}

describe('Vectors', () => {
  it('sqlite-vec and the scan fallback rank the same neighbours in the same order', () => {
    const db = database();
    const hashes = chunks(db, 200);
    const withVec = new Vectors(db, { extension: true, log: silentLog });
    embedAll(db, withVec, 'fp-a', 16, hashes);
    expect(withVec.backend()).toBe('sqlite-vec');

    const query = unit(42, 16);
    const knn = withVec.nearest(query, 'fp-a', 10);
    const scan = new Vectors(db, { extension: false, log: silentLog });
    expect(scan.backend()).toBe('fallback');
    const scanned = scan.nearest(query, 'fp-a', 10);
    expect(knn.map((n) => n.id)).toEqual(scanned.map((n) => n.id));
    for (const [i, n] of knn.entries()) expect(n.similarity).toBeCloseTo(scanned[i]!.similarity, 5);
    // A stored vector is its own nearest neighbour, similarity 1.
    const self = withVec.nearest(unit(7, 16), 'fp-a', 1)[0];
    expect(self?.similarity).toBeCloseTo(1, 5);
    expect(scan.nearest(unit(7, 16), 'fp-a', 1)[0]?.id).toBe(self?.id);
  });

  it('stores each (model, chunk) once, and counts only the new ones', () => {
    const db = database();
    const hashes = chunks(db, 3);
    const vectors = new Vectors(db, { extension: true, log: silentLog });
    embedAll(db, vectors, 'fp-a', 8, hashes);
    const again = db.transaction(() =>
      vectors.write('fp-a', 8, [{ chunkHash: hashes[0]!, vector: unit(1, 8) }], 'now'),
    );
    expect(again).toBe(0);
    expect(db.value('SELECT count(*) FROM embeddings')).toBe(3);
    expect(db.value('SELECT count(*) FROM chunk_vectors')).toBe(3);
  });

  it('a writer without the extension puts the vec0 table out of step: readers scan until a writer rebuilds it', () => {
    const db = database();
    const hashes = chunks(db, 20);
    const withVec = new Vectors(db, { extension: true, log: silentLog });
    embedAll(db, withVec, 'fp-a', 8, hashes.slice(0, 10));
    expect(withVec.backend()).toBe('sqlite-vec');

    const without = new Vectors(db, { extension: false, log: silentLog });
    const rest = hashes.slice(10).map((chunkHash, i) => ({ chunkHash, vector: unit(i + 11, 8) }));
    db.transaction(() => without.write('fp-a', 8, rest, 'now'));
    // The new vectors are not in chunk_vectors: a KNN would miss them, so it is not used.
    expect(withVec.backend()).toBe('fallback');
    expect(withVec.nearest(unit(15, 8), 'fp-a', 1)[0]?.similarity).toBeCloseTo(1, 5);

    db.transaction(() => withVec.ensureVecTable(8, 'fp-a'));
    expect(withVec.backend()).toBe('sqlite-vec');
    expect(db.value('SELECT count(*) FROM chunk_vectors')).toBe(20);
    expect(withVec.nearest(unit(15, 8), 'fp-a', 1)[0]?.similarity).toBeCloseTo(1, 5);
  });

  it('another model of another dimension replaces the vectors; nothing of the old one is left or mixed in', () => {
    const db = database();
    const hashes = chunks(db, 10);
    const vectors = new Vectors(db, { extension: true, log: silentLog });
    embedAll(db, vectors, 'fp-a', 8, hashes);
    expect(vectors.hasEmbeddings('fp-a')).toBe(true);

    embedAll(db, vectors, 'fp-b', 12, hashes.slice(0, 4));
    expect(vectors.hasEmbeddings('fp-a')).toBe(false);
    expect(vectors.state()).toMatchObject({ fingerprint: 'fp-b', dims: 12 });
    expect(db.column('SELECT DISTINCT dims FROM embeddings').all()).toEqual([12]);
    expect(vectors.backend()).toBe('sqlite-vec');
    const hits = vectors.nearest(unit(2, 12), 'fp-b', 10);
    expect(hits).toHaveLength(4);
    expect(hits[0]?.similarity).toBeCloseTo(1, 5);
    expect(db.value('PRAGMA quick_check')).toBe('ok');
  });

  it('collects the vectors of chunks that are gone, in the vec0 table too', () => {
    const db = database();
    const hashes = chunks(db, 5);
    const vectors = new Vectors(db, { extension: true, log: silentLog });
    embedAll(db, vectors, 'fp-a', 8, hashes);
    db.prepare("DELETE FROM content WHERE hash IN ('content-0', 'content-1')").run(); // cascades to chunks
    expect(db.transaction(() => vectors.collectOrphans('fp-a'))).toBe(2);
    expect(db.value('SELECT count(*) FROM chunk_vectors')).toBe(3);
    expect(vectors.backend()).toBe('sqlite-vec');
  });

  it('an extension that cannot load is one warning, and the scan answers', () => {
    const db = database();
    const hashes = chunks(db, 3);
    const log = recordingLog();
    const vectors = new Vectors(db, { extension: true, log });
    // Simulate the failure: load into a closed handle's place by breaking loadExtension.
    (db as unknown as { loadExtension: () => void }).loadExtension = () => {
      throw new Error('cannot open shared object file');
    };
    embedAll(db, vectors, 'fp-a', 8, hashes);
    expect(vectors.backend()).toBe('fallback');
    expect(vectors.nearest(unit(3, 8), 'fp-a', 1)[0]?.similarity).toBeCloseTo(1, 5);
    expect(log.warnings).toEqual([
      expect.stringMatching(/^sqlite-vec could not load \(cannot open shared object file\)/),
    ]);
  });
});

describe('fuseRankings (reciprocal rank fusion)', () => {
  const hit = (file: string, snippet = `${file} snippet`): SearchHit => ({
    file,
    docid: `#${file}`,
    collection: 'c',
    path: file,
    title: file,
    score: 0.3,
    snippet,
  });

  it('puts a document that wins both lists first, with score 1', () => {
    const fused = fuseRankings([hit('x'), hit('a'), hit('b')], [hit('x'), hit('c'), hit('a')]);
    expect(fused[0]).toMatchObject({ file: 'x', score: 1 });
    // a is in both (2nd and 3rd) and beats c and b, each in one list only.
    expect(fused.map((h) => h.file)).toEqual(['x', 'a', 'c', 'b']);
  });

  it('scores are rrf / rrf(best): 1 for the best even when the lists disagree, always in [0, 1]', () => {
    const fused = fuseRankings([hit('lexical')], [hit('semantic')]);
    expect(fused.map((h) => h.score)).toEqual([1, 1]);
    const many = fuseRankings(
      Array.from({ length: 50 }, (_, i) => hit(`l${i}`)),
      Array.from({ length: 50 }, (_, i) => hit(`l${49 - i}`)),
    );
    for (const h of many) {
      expect(h.score).toBeGreaterThan(0);
      expect(h.score).toBeLessThanOrEqual(1);
    }
    expect(fuseRankings([hit('a'), hit('b')], [])[1]?.score).toBeCloseTo((RRF_K + 1) / (RRF_K + 2));
    // Against a best that leads both lists, a document found by one list only is under half.
    const half = fuseRankings([hit('x'), hit('l')], [hit('x'), hit('s')]);
    expect(half.map((h) => [h.file, h.score])).toEqual([
      ['x', 1],
      ['l', 1 / (RRF_K + 2) / (2 / (RRF_K + 1))],
      ['s', 1 / (RRF_K + 2) / (2 / (RRF_K + 1))],
    ]);
  });

  it('keeps the BM25 snippet (with highlights) when a document is in both lists', () => {
    const fused = fuseRankings([hit('x', 'a **term**')], [hit('x', 'chunk text')]);
    expect(fused[0]?.snippet).toBe('a **term**');
    expect(fuseRankings([], [hit('y', 'chunk text')])[0]?.snippet).toBe('chunk text');
  });
});
