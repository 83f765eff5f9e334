/**
 * The vector layer without a model: synthetic vectors in a real index, the int8 codes' coarse
 * pass plus re-score against a brute force in the test, filters answered inside the index,
 * the codes kept in step across writers with and without the extension, and a change of model
 * (and dimension) that must not corrupt anything. Plus the fusion.
 */

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { SearchHit } from '../../../src/core/types.js';
import { silentLog } from '../../../src/log.js';
import { fuseRankings, RRF_K } from '../../../src/search/hybrid.js';
import { openDatabase } from '../../../src/store/database.js';
import type { Sqlite } from '../../../src/store/sqlite.js';
import { Cells } from '../../../src/store/vectors/cells.js';
import {
  type Candidates,
  fromBlob,
  type Neighbour,
  normalize,
  prefixRange,
  toCode,
  type VectorFilter,
  Vectors,
} from '../../../src/store/vectors/vectors.js';
import { recordingLog } from '../../support/recording-log.js';
import { type Sandbox, sandbox } from '../helpers.js';

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

/**
 * `n` notes, one chunk each, as documents of `collections` in turn (note i in
 * `collections[i % length]`, at `dir-(i % 3)/note-i.md`), so the vectors have chunks and
 * documents to be found in.
 */
function chunks(db: Sqlite, n: number, collections: string[] = ['c']): string[] {
  const hashes: string[] = [];
  // As `adopt` records it, so adopting the test model keeps these chunks.
  db.prepare("UPDATE embedding_state SET chunker = 'test'").run();
  for (const name of collections) {
    db.prepare("INSERT INTO collections (name, root, mask, updated_at) VALUES (?, ?, '**/*.md', 'now')").run(
      name,
      `/notes/${name}`,
    );
  }
  const content = db.prepare('INSERT INTO content (hash, body) VALUES (?, ?)');
  const chunk = db.prepare(
    'INSERT INTO chunks (content_hash, seq, hash, start_offset, end_offset, line) VALUES (?, 0, ?, 0, 4, 1)',
  );
  const document = db.prepare(
    `INSERT INTO documents (collection, path, docid, title, hash, mtime_ms, size, indexed_at)
     VALUES (?, ?, ?, 't', ?, 0, 4, 'now')`,
  );
  for (let i = 0; i < n; i++) {
    content.run(`content-${i}`, `body ${i}`);
    chunk.run(`content-${i}`, `chunk-${i}`);
    document.run(collections[i % collections.length]!, `dir-${i % 3}/note-${i}.md`, `d${i}`, `content-${i}`);
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

const ids = (found: Candidates) => found.neighbours.map((n) => n.id);
const count = (db: Sqlite, sql: string) => db.value<number>(sql);

/** The exact top `k` by brute force in the test: every stored vector, dot product in JS. */
function bruteForce(db: Sqlite, query: Float32Array, k: number, where = 'TRUE'): Neighbour[] {
  const rows = db
    .prepare<[], { id: number; vector: Uint8Array }>(
      `SELECT DISTINCT e.id, e.vector FROM embeddings e JOIN chunks c ON c.hash = e.chunk_hash
       JOIN documents d ON d.hash = c.content_hash WHERE ${where}`,
    )
    .all();
  return rows
    .map((row) => {
      const v = fromBlob(row.vector);
      let dot = 0;
      for (let i = 0; i < v.length; i++) dot += v[i]! * query[i]!;
      return { id: row.id, similarity: dot };
    })
    .sort((a, b) => b.similarity - a.similarity || a.id - b.id)
    .slice(0, k);
}

describe('Vectors', () => {
  it('the coarse pass over int8 codes plus the re-score finds the exact top 10, with exact similarities', () => {
    const db = database();
    const hashes = chunks(db, 300);
    const withVec = new Vectors(db, { extension: true, log: silentLog });
    embedAll(db, withVec, 'fp-a', 16, hashes);
    expect(withVec.backend()).toBe('sqlite-vec');
    expect(count(db, 'SELECT count(*) FROM chunk_codes')).toBe(300);

    for (let seed = 1000; seed < 1020; seed++) {
      const query = unit(seed, 16);
      const truth = bruteForce(db, query, 10);
      const knn = withVec.nearest(query, 'fp-a', 40);
      expect(knn.complete).toBe(false);
      expect(ids(knn).slice(0, 10)).toEqual(truth.map((n) => n.id));
      // Re-scored from the float copy: the similarity is the float dot product, not the
      // int8 codes' cosine (which differs in the third decimal).
      for (const [i, n] of truth.entries()) expect(knn.neighbours[i]!.similarity).toBeCloseTo(n.similarity, 6);
    }
    // The exact answer without the extension is the same ranking.
    const scan = new Vectors(db, { extension: false, log: silentLog });
    expect(scan.backend()).toBe('fallback');
    const query = unit(42, 16);
    expect(ids(scan.nearest(query, 'fp-a', 10))).toEqual(bruteForce(db, query, 10).map((n) => n.id));
    // A stored vector is its own nearest neighbour, similarity 1.
    const self = withVec.nearest(unit(7, 16), 'fp-a', 40).neighbours[0];
    expect(self?.similarity).toBeCloseTo(1, 5);
  });

  it('a filter is answered inside the index: partitions by collection, a path range by folder', () => {
    const db = database();
    const hashes = chunks(db, 240, ['a', 'b', 'c']);
    const vectors = new Vectors(db, { extension: true, log: silentLog });
    embedAll(db, vectors, 'fp-a', 16, hashes);
    expect(vectors.backend()).toBe('sqlite-vec');
    const cases: { filter: VectorFilter; where: string }[] = [
      { filter: { collections: '["b"]' }, where: "d.collection = 'b'" },
      { filter: { collections: '["a","c"]' }, where: "d.collection IN ('a', 'c')" },
      { filter: { pathPrefix: 'dir-1' }, where: "d.path LIKE 'dir-1/%'" },
      {
        filter: { collections: '["c"]', pathPrefix: '/dir-2/' },
        where: "d.collection = 'c' AND d.path LIKE 'dir-2/%'",
      },
    ];
    for (const { filter, where } of cases) {
      for (let seed = 500; seed < 510; seed++) {
        const query = unit(seed, 16);
        const truth = bruteForce(db, query, 10, where);
        expect(truth).toHaveLength(10);
        const found = vectors.nearest(query, 'fp-a', 40, filter);
        expect(ids(found).slice(0, 10), JSON.stringify(filter)).toEqual(truth.map((n) => n.id));
        // Every candidate is inside the filter, not only the ten best.
        const allowed = new Set(bruteForce(db, query, 1000, where).map((n) => n.id));
        for (const id of ids(found)) expect(allowed.has(id)).toBe(true);
      }
    }
    // A folder is whole segments: `dir` is no prefix of `dir-1/…`.
    expect(vectors.nearest(unit(1, 16), 'fp-a', 40, { pathPrefix: 'dir' }).neighbours).toEqual([]);
    // Fewer rows than asked for: the answer is complete.
    expect(vectors.nearest(unit(1, 16), 'fp-a', 200, { collections: '["a"]' })).toMatchObject({ complete: true });
  });

  it('a folder filter works whatever the paths: sqlite-vec refuses comparisons on 12-byte metadata', () => {
    const db = database();
    const hashes = chunks(db, 60, ['a']);
    // Paths of 11, 12 and 13 bytes, inside and outside the folder `2024`.
    const paths = ['2024/ab.md', '2024/abc.md', '2024/abcd.md', '2024x/ab.md', 'other/ab.md', '2024/q/é.md'];
    for (const [i, path] of paths.entries()) {
      db.prepare('UPDATE documents SET path = ? WHERE id = ?').run(path, i + 1);
    }
    expect(paths.map((p) => Buffer.byteLength(p))).toContain(12);
    const vectors = new Vectors(db, { extension: true, log: silentLog });
    embedAll(db, vectors, 'fp-a', 16, hashes);
    expect(vectors.backend()).toBe('sqlite-vec');
    const stored = db
      .prepare<[], { path: string }>('SELECT path FROM chunk_codes')
      .all()
      .map((r) => r.path);
    expect(stored).toContain('2024/abcd.md\u0001');
    expect(stored).toContain('2024/q/é.md\u0001');
    expect(stored).toContain('2024/abc.md');
    for (let seed = 900; seed < 905; seed++) {
      const query = unit(seed, 16);
      const found = vectors.nearest(query, 'fp-a', 40, { pathPrefix: '2024' });
      const truth = bruteForce(db, query, 10, "d.path LIKE '2024/%'");
      expect(truth.length).toBe(4);
      expect(ids(found)).toEqual(truth.map((n) => n.id));
    }
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
    expect(count(db, 'SELECT count(*) FROM embeddings')).toBe(3);
    expect(count(db, 'SELECT count(*) FROM chunk_codes')).toBe(3);
    expect(db.prepare("SELECT name FROM sqlite_schema WHERE name = 'chunk_vectors'").get()).toBeUndefined();
  });

  it('a writer without the extension leaves its changes queued: readers get the exact answer until a writer applies them', () => {
    const db = database();
    const hashes = chunks(db, 20);
    const withVec = new Vectors(db, { extension: true, log: silentLog });
    embedAll(db, withVec, 'fp-a', 8, hashes.slice(0, 10));
    expect(withVec.backend()).toBe('sqlite-vec');

    const without = new Vectors(db, { extension: false, log: silentLog });
    const rest = hashes.slice(10).map((chunkHash, i) => ({ chunkHash, vector: unit(i + 11, 8) }));
    db.transaction(() => without.write('fp-a', 8, rest, 'now'));
    // The new vectors have no codes: a KNN would miss them, so it is not used.
    expect(count(db, 'SELECT count(*) FROM code_queue')).toBe(10);
    expect(withVec.backend()).toBe('fallback');
    expect(withVec.nearest(unit(15, 8), 'fp-a', 1).neighbours[0]?.similarity).toBeCloseTo(1, 5);

    expect(db.transaction(() => withVec.syncCodes())).toBe(true);
    expect(withVec.backend()).toBe('sqlite-vec');
    expect(count(db, 'SELECT count(*) FROM chunk_codes')).toBe(20);
    expect(count(db, 'SELECT count(*) FROM code_queue')).toBe(0);
    expect(withVec.nearest(unit(15, 8), 'fp-a', 40).neighbours[0]?.similarity).toBeCloseTo(1, 5);
  });

  it('another model of another dimension replaces the vectors; nothing of the old one is left or mixed in', () => {
    const db = database();
    const hashes = chunks(db, 10);
    const vectors = new Vectors(db, { extension: true, log: silentLog });
    embedAll(db, vectors, 'fp-a', 8, hashes);
    expect(vectors.hasEmbeddings('fp-a')).toBe(true);

    embedAll(db, vectors, 'fp-b', 12, hashes.slice(0, 4));
    expect(vectors.hasEmbeddings('fp-a')).toBe(false);
    expect(vectors.state()).toMatchObject({ fingerprint: 'fp-b', dims: 12, vec_dims: 12 });
    expect(db.column('SELECT DISTINCT dims FROM embeddings').all()).toEqual([12]);
    expect(vectors.backend()).toBe('sqlite-vec');
    expect(count(db, 'SELECT count(*) FROM chunk_codes')).toBe(4);
    const hits = vectors.nearest(unit(2, 12), 'fp-b', 10).neighbours;
    expect(hits).toHaveLength(4);
    expect(hits[0]?.similarity).toBeCloseTo(1, 5);
    expect(db.value('PRAGMA quick_check')).toBe('ok');
  });

  it('collects the vectors of chunks that are gone, their codes too', () => {
    const db = database();
    const hashes = chunks(db, 5);
    const vectors = new Vectors(db, { extension: true, log: silentLog });
    embedAll(db, vectors, 'fp-a', 8, hashes);
    db.prepare("DELETE FROM documents WHERE hash IN ('content-0', 'content-1')").run();
    db.prepare("DELETE FROM content WHERE hash IN ('content-0', 'content-1')").run(); // cascades to chunks
    expect(db.transaction(() => vectors.collectOrphans('fp-a'))).toBe(2);
    expect(count(db, 'SELECT count(*) FROM chunk_codes')).toBe(3);
    expect(count(db, 'SELECT count(*) FROM vector_rows')).toBe(3);
    expect(vectors.backend()).toBe('sqlite-vec');
  });

  it('an extension that cannot load is one warning, and the exact scan answers', () => {
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
    expect(vectors.nearest(unit(3, 8), 'fp-a', 1).neighbours[0]?.similarity).toBeCloseTo(1, 5);
    expect(log.warnings).toEqual([
      expect.stringMatching(/^sqlite-vec could not load \(cannot open shared object file\)/),
    ]);
  });
});

describe('Vectors with cells (an inverted file)', () => {
  /** The cell each code row sits in, and the cell its vector belongs to by the stored centroids. */
  function placements(db: Sqlite): { id: number; stored: number; expected: number }[] {
    const dims = db.value<number>('SELECT vec_dims FROM embedding_state') as number;
    const stored = db
      .prepare<[], { grp: number; centroid: Uint8Array }>('SELECT grp, centroid FROM vector_cells ORDER BY id')
      .all();
    const centroids = new Float32Array(stored.length * dims);
    for (const [c, row] of stored.entries()) centroids.set(fromBlob(row.centroid), c * dims);
    const cells = new Cells(
      dims,
      centroids,
      Int32Array.from(stored, (row) => row.grp),
    );
    return db
      .prepare<[], { id: number; cell: number; vector: Uint8Array }>(
        `SELECT k.rowid AS id, k.cell, e.vector FROM chunk_codes k
         JOIN vector_rows r ON r.id = k.rowid JOIN embeddings e ON e.id = r.embedding_id`,
      )
      .all()
      .map((row) => ({ id: row.id, stored: row.cell, expected: cells.assign(fromBlob(row.vector)) }));
  }

  it('codes sit in their vector cell; a search reads only the probed cells, and reading all of them is exact', () => {
    const db = database();
    const hashes = chunks(db, 600, ['a', 'b', 'c']);
    let probes = 2;
    const vectors = new Vectors(db, {
      extension: true,
      log: silentLog,
      cellsFor: (rows) => (rows >= 100 ? 8 : 0),
      probes: (cells) => Math.min(cells, probes),
    });
    embedAll(db, vectors, 'fp-a', 16, hashes);
    expect(vectors.backend()).toBe('sqlite-vec');
    const cellCount = count(db, 'SELECT count(*) FROM vector_cells') as number;
    expect(cellCount).toBeGreaterThan(2);
    expect(count(db, 'SELECT cell_rows FROM embedding_state')).toBe(600);
    const placed = placements(db);
    expect(placed).toHaveLength(600);
    for (const row of placed) expect(row.stored).toBe(row.expected);
    expect(new Set(placed.map((row) => row.stored)).size).toBeGreaterThan(2);

    // Two cells read: every candidate is a code of those two cells, and the answer is not complete.
    const cellOf = new Map(
      db
        .prepare<[], { id: number; cell: number }>(
          'SELECT r.embedding_id AS id, k.cell FROM chunk_codes k JOIN vector_rows r ON r.id = k.rowid',
        )
        .all()
        .map((row) => [row.id, row.cell]),
    );
    const centroids = db.prepare<[], { centroid: Uint8Array }>('SELECT centroid FROM vector_cells ORDER BY id').all();
    for (let seed = 700; seed < 710; seed++) {
      const query = unit(seed, 16);
      const nearestTwo = centroids
        .map((row, cell) => ({ cell, score: fromBlob(row.centroid).reduce((sum, x, d) => sum + x * query[d]!, 0) }))
        .sort((x, y) => y.score - x.score)
        .slice(0, 2)
        .map((c) => c.cell);
      const found = vectors.nearest(query, 'fp-a', 400);
      expect(found.complete).toBe(false);
      expect(found.neighbours.length).toBeGreaterThan(0);
      for (const id of ids(found)) expect(nearestTwo).toContain(cellOf.get(id));
    }

    // Every cell read: the exact top 10, with and without filters, as before cells.
    probes = cellCount;
    for (const where of [
      { filter: {}, sql: 'TRUE' },
      { filter: { collections: '["b"]' }, sql: "d.collection = 'b'" },
      {
        filter: { collections: '["a","c"]', pathPrefix: 'dir-1' },
        sql: "d.collection IN ('a','c') AND d.path LIKE 'dir-1/%'",
      },
    ] as { filter: VectorFilter; sql: string }[]) {
      for (let seed = 800; seed < 810; seed++) {
        const query = unit(seed, 16);
        const truth = bruteForce(db, query, 10, where.sql);
        expect(ids(vectors.nearest(query, 'fp-a', 40, where.filter)).slice(0, 10)).toEqual(truth.map((n) => n.id));
      }
    }
    expect(vectors.nearest(unit(1, 16), 'fp-a', 4000, { collections: '["a"]' }).complete).toBe(true);
  });

  it('trains the cells again as the rows grow, keeps new codes in their cells, and drops the cells when the rows shrink', () => {
    const db = database();
    const hashes = chunks(db, 500, ['a', 'b']);
    const vectors = new Vectors(db, {
      extension: true,
      log: silentLog,
      cellsFor: (rows) => (rows < 100 ? 0 : rows < 400 ? 4 : 16),
    });
    const cellCount = () => count(db, 'SELECT count(*) FROM vector_cells');
    const write = (from: number, to: number) =>
      db.transaction(() =>
        vectors.write(
          'fp-a',
          16,
          hashes.slice(from, to).map((chunkHash, i) => ({ chunkHash, vector: unit(from + i + 1, 16) })),
          'now',
        ),
      );
    db.transaction(() => vectors.adopt(model('fp-a', 16)));
    write(0, 60);
    expect(cellCount()).toBe(0);
    expect(count(db, 'SELECT cell_rows FROM embedding_state')).toBeNull();
    expect(count(db, 'SELECT count(DISTINCT cell) FROM chunk_codes')).toBe(1);
    write(60, 150);
    expect(cellCount()).toBeGreaterThanOrEqual(3);
    expect(cellCount()).toBeLessThanOrEqual(5);
    expect(count(db, 'SELECT cell_rows FROM embedding_state')).toBe(150);
    // Added under these cells, not trained again: each new code in its vector's cell.
    write(150, 300);
    expect(count(db, 'SELECT cell_rows FROM embedding_state')).toBe(150);
    for (const row of placements(db)) expect(row.stored).toBe(row.expected);
    write(300, 500);
    expect(cellCount()).toBeGreaterThanOrEqual(12);
    expect(count(db, 'SELECT cell_rows FROM embedding_state')).toBe(500);
    expect(count(db, 'SELECT count(*) FROM chunk_codes')).toBe(500);
    // 450 chunks go: 50 rows are left, too few for cells at all.
    db.transaction(() => {
      db.exec('DELETE FROM chunks WHERE CAST(substr(hash, 7) AS INTEGER) >= 50');
      vectors.collectOrphans('fp-a');
    });
    expect(cellCount()).toBe(0);
    expect(count(db, 'SELECT cell_rows FROM embedding_state')).toBeNull();
    expect(count(db, 'SELECT count(*) FROM chunk_codes')).toBe(50);
    const query = unit(7, 16);
    expect(ids(vectors.nearest(query, 'fp-a', 40)).slice(0, 10)).toEqual(bruteForce(db, query, 10).map((n) => n.id));
  });
});

describe('Vectors: more rows than a page (vectors.ts codes 512 at a time, read then written)', () => {
  /** Every vector row has exactly one code, in its collection, with its path (as `codePath` stores it). */
  function codesMatchRows(db: Sqlite): void {
    const rows = db.value<number>('SELECT count(*) FROM vector_rows') as number;
    expect(count(db, 'SELECT count(*) FROM chunk_codes')).toBe(rows);
    expect(
      count(
        db,
        `SELECT count(*) FROM vector_rows r JOIN chunk_codes k ON k.rowid = r.id
         WHERE k.collection = r.collection AND k.path = r.path`,
      ),
    ).toBe(rows);
    expect(count(db, 'SELECT count(*) FROM code_queue')).toBe(0);
  }

  it('a rebuild codes two collections of exactly two pages each; a drain of 612 queued rows codes them all', () => {
    const db = database();
    const hashes = chunks(db, 2048 + 612, ['a', 'b']);
    const vectors = new Vectors(db, { extension: true, log: silentLog, cellsFor: () => 0 });
    // The table is built by the first write: 1,024 rows a collection, read in pages of 512.
    embedAll(db, vectors, 'fp-a', 8, hashes.slice(0, 2048));
    expect(count(db, "SELECT count(*) FROM vector_rows WHERE collection = 'a'")).toBe(1024);
    codesMatchRows(db);
    // Built: the next write queues its rows, and the drain reads the queue in pages.
    db.transaction(() =>
      vectors.write(
        'fp-a',
        8,
        hashes.slice(2048).map((chunkHash, i) => ({ chunkHash, vector: unit(2048 + i + 1, 8) })),
        'now',
      ),
    );
    expect(count(db, 'SELECT count(*) FROM vector_rows')).toBe(2660);
    codesMatchRows(db);
    const query = unit(2100, 8);
    expect(ids(vectors.nearest(query, 'fp-a', 40)).slice(0, 10)).toEqual(bruteForce(db, query, 10).map((n) => n.id));
  });
});

describe('Vectors with cells: an index upgraded without them', () => {
  it('gets its cells from the next writer, even with nothing queued', () => {
    const db = database();
    const hashes = chunks(db, 200, ['a', 'b']);
    // As the version 5 step builds the codes: no cells.
    embedAll(db, new Vectors(db, { extension: true, log: silentLog, cellsFor: () => 0 }), 'fp-a', 16, hashes);
    expect(count(db, 'SELECT count(*) FROM vector_cells')).toBe(0);
    expect(count(db, 'SELECT count(*) FROM code_queue')).toBe(0);
    const lines: string[] = [];
    const writer = new Vectors(db, {
      extension: true,
      log: { line: (text) => lines.push(text), warn: (text) => lines.push(text) },
      cellsFor: () => 4,
    });
    db.transaction(() => writer.syncCodes());
    expect(count(db, 'SELECT count(*) FROM vector_cells')).toBeGreaterThanOrEqual(3);
    expect(count(db, 'SELECT cell_rows FROM embedding_state')).toBe(200);
    expect(count(db, 'SELECT count(*) FROM chunk_codes')).toBe(200);
    expect(lines).toEqual([expect.stringMatching(/^Training the vector index's 4 cells on 200 vectors/)]);
  });
});

describe('toCode (int8, one scale per vector)', () => {
  it('maps the largest component to ±127 and keeps the direction', () => {
    const code = new Int8Array(toCode(Float32Array.from([0.5, -0.25, 0, 0.125])).buffer);
    // Math.round: halves go up (-63.5 → -63).
    expect([...code]).toEqual([127, -63, 0, 32]);
    expect([...new Int8Array(toCode(new Float32Array(3)).buffer)]).toEqual([0, 0, 0]);
  });

  it('a folder prefix is a range of whole segments', () => {
    expect(prefixRange('/notes/2024/')).toEqual({ low: 'notes/2024/', high: 'notes/20240' });
    expect(prefixRange('')).toBeUndefined();
    expect(prefixRange(undefined)).toBeUndefined();
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
