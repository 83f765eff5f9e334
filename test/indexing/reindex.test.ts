/**
 * `reindexPaths`, a watcher's write (docs/design.md §9.2): exactly the paths named, written in
 * units as `update` writes (§8.5), each whole; an abort or a lost place rolls back the unit in
 * hand; the texts they left are collected, and their vectors with them.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/core/index.js';
import { openReader } from '../../src/core/open.js';
import type { Reader } from '../../src/core/reader-types.js';
import { openWatchedIndex, type WatchedIndex } from '../../src/core/watch-writer.js';
import { type Failpoints, parseFailpoints } from '../../src/failpoints.js';
import { UNIT_FILES } from '../../src/indexing/index-writer.js';
import { silentLog } from '../../src/log.js';
import { Sqlite } from '../../src/store/sqlite.js';
import { expectQmdError, type Sandbox, sandbox } from '../store/helpers.js';

/** Failpoints that tell `onUnit` of each unit's `watch.write`, inside its transaction, before COMMIT. */
function unitHits(onUnit: (unit: number) => void): Failpoints & { readonly units: number } {
  let units = 0;
  return {
    names: ['watch.write'],
    has: (name) => name === 'watch.write',
    hit(name) {
      if (name === 'watch.write') onUnit(++units);
      return undefined;
    },
    carry: () => undefined,
    get units() {
      return units;
    },
  };
}

let box: Sandbox;
let root: string;
let reader: Reader;
let index: WatchedIndex;

beforeEach(async () => {
  box = sandbox();
  root = box.notes('notes', { 'a.md': '# A\n\nalpha\n', 'b.md': '# B\n\nbravo\n', 'd/c.md': '# C\n\ncharlie\n' });
  const store: Store = openStore(box.index);
  await store.addCollection(root, { name: 'notes' });
  await store.close();
  reader = openReader(box.index, { readonly: true });
  index = openWatchedIndex(reader, { log: silentLog, failpoints: parseFailpoints(undefined) }) as WatchedIndex;
});

afterEach(async () => {
  index.close();
  await reader.close();
  box.cleanup();
});

const target = () => index.collections()[0] as NonNullable<ReturnType<WatchedIndex['collections']>[number]>;
const paths = () =>
  reader
    .listDocuments('notes')
    .map((d) => d.path)
    .sort();
const contentRows = () => {
  const db = new Sqlite(box.index, { readOnly: true });
  try {
    return db.column<[], number>('SELECT count(*) FROM content').get();
  } finally {
    db.close();
  }
};

describe('reindexPaths', () => {
  it('adds, updates and removes the paths named, and says which', async () => {
    fs.writeFileSync(path.join(root, 'a.md'), '# A\n\nalpha edited\n');
    fs.writeFileSync(path.join(root, 'new.md'), '# New\n\nnew\n');
    fs.rmSync(path.join(root, 'b.md'));
    const report = await index.reindex(target(), ['a.md', 'new.md', 'b.md', 'notes.txt'], [], {});
    expect(report).toMatchObject({ added: ['new.md'], updated: ['a.md'], removed: ['b.md'], errors: [] });
    expect(report.texts.map((t) => t.path).sort()).toEqual(['a.md', 'new.md']);
    expect(paths()).toEqual(['a.md', 'd/c.md', 'new.md']);
    // The old texts of a.md and b.md went with them; nothing else was swept.
    expect(contentRows()).toBe(3);
  });

  it('reads a folder whole, and removes what the index has under a folder gone', async () => {
    fs.mkdirSync(path.join(root, 'e/f'), { recursive: true });
    fs.writeFileSync(path.join(root, 'e/f/g.md'), '# G\n\ngolf\n');
    fs.writeFileSync(path.join(root, 'e/.hidden.md'), '# H\n\nhidden\n');
    let report = await index.reindex(target(), ['e'], [], {});
    expect(report.added).toEqual(['e/f/g.md']);
    fs.rmSync(path.join(root, 'd'), { recursive: true });
    report = await index.reindex(target(), ['d'], [], {});
    expect(report.removed).toEqual(['d/c.md']);
    // A folder named `d.md/`-like siblings are untouched: only the subtree goes.
    expect(paths()).toEqual(['a.md', 'b.md', 'e/f/g.md']);
  });

  it('treats a symlink where a note was as the note gone (links are never followed)', async () => {
    fs.rmSync(path.join(root, 'a.md'));
    fs.symlinkSync(path.join(root, 'b.md'), path.join(root, 'a.md'));
    const report = await index.reindex(target(), ['a.md'], [], {});
    expect(report.removed).toEqual(['a.md']);
  });

  it('rolls back when aborted, and when the place is lost, writing nothing', async () => {
    fs.writeFileSync(path.join(root, 'a.md'), '# A\n\nalpha edited\n');
    const controller = new AbortController();
    controller.abort();
    await expectQmdError(() => index.reindex(target(), ['a.md'], [], { signal: controller.signal }), 'ABORTED');
    const lost = await index.reindex(target(), ['a.md'], ['b.md'], { holds: () => false });
    expect(lost.lost).toBe(true);
    expect(reader.search('edited')).toEqual([]);
    expect(paths()).toEqual(['a.md', 'b.md', 'd/c.md']);
  });

  it('waits for a busy index without holding the thread', async () => {
    const other = new Sqlite(box.index);
    other.exec('BEGIN IMMEDIATE');
    fs.writeFileSync(path.join(root, 'a.md'), '# A\n\nalpha while busy\n');
    let settled = false;
    const writing = index.reindex(target(), ['a.md'], [], {}).finally(() => {
      settled = true;
    });
    // The event loop keeps turning while the write waits for the lock (a blocked thread would not).
    let turns = 0;
    await new Promise<void>((resolve) => {
      const timer = setInterval(() => {
        if (++turns < 5) return;
        clearInterval(timer);
        resolve();
      }, 5);
    });
    expect(settled).toBe(false);
    other.exec('COMMIT');
    other.close();
    const report = await writing;
    expect(report.updated).toEqual(['a.md']);
  });

  it('writes a folder of many notes in units, each whole: an abort keeps the units committed before it', async () => {
    const count = 2 * UNIT_FILES + 88;
    fs.mkdirSync(path.join(root, 'big'));
    for (let i = 0; i < count; i++) fs.writeFileSync(path.join(root, `big/n${i}.md`), `# N${i}\n\nnote ${i}\n`);
    const controller = new AbortController();
    const hits = unitHits((unit) => {
      if (unit === 2) controller.abort();
    });
    const units = openWatchedIndex(reader, { log: silentLog, failpoints: hits }) as WatchedIndex;
    try {
      await expectQmdError(() => units.reindex(target(), ['big'], [], { signal: controller.signal }), 'ABORTED');
      // The first unit committed; the second, aborted inside its transaction, left nothing.
      expect(paths().filter((p) => p.startsWith('big/'))).toHaveLength(UNIT_FILES);
      const again = await units.reindex(target(), ['big'], [], {});
      expect(again.added).toHaveLength(count - UNIT_FILES);
      expect(hits.units).toBe(2 + 2);
      expect(paths().filter((p) => p.startsWith('big/'))).toHaveLength(count);
      // A folder gone: its documents are deleted a unit at a time too.
      fs.rmSync(path.join(root, 'big'), { recursive: true });
      const gone = await units.reindex(target(), ['big'], [], {});
      expect(gone.removed).toHaveLength(count);
      expect(hits.units).toBe(4 + 3);
      expect(paths()).toEqual(['a.md', 'b.md', 'd/c.md']);
      expect(contentRows()).toBe(3);
    } finally {
      units.close();
    }
  });

  it('takes the vectors of a text no note holds any more with it, and keeps those another text shares', async () => {
    const db = new Sqlite(box.index);
    try {
      const hashOf = db.column<[string], string>('SELECT hash FROM documents WHERE path = ?');
      const addChunk = db.prepare<[string, string]>(
        'INSERT INTO chunks (content_hash, seq, hash, start_offset, end_offset, line) VALUES (?, 0, ?, 0, 1, 1)',
      );
      const addVector = db.prepare<[string]>(
        "INSERT INTO embeddings (model, chunk_hash, dims, vector, embedded_at) VALUES ('m', ?, 1, zeroblob(4), 'now')",
      );
      const a = hashOf.get('a.md') as string;
      const b = hashOf.get('b.md') as string;
      // a.md's text has a chunk of its own and one it shares with b.md's.
      addChunk.run(a, 'only-a');
      addChunk.run(b, 'shared');
      db.prepare<[string]>(
        "INSERT INTO chunks (content_hash, seq, hash, start_offset, end_offset, line) VALUES (?, 1, 'shared', 0, 1, 1)",
      ).run(a);
      addVector.run('only-a');
      addVector.run('shared');
    } finally {
      db.close();
    }
    fs.writeFileSync(path.join(root, 'a.md'), '# A\n\nalpha edited\n');
    await index.reindex(target(), ['a.md'], [], {});
    const check = new Sqlite(box.index, { readOnly: true });
    try {
      expect(check.column<[], string>('SELECT chunk_hash FROM embeddings ORDER BY chunk_hash').all()).toEqual([
        'shared',
      ]);
    } finally {
      check.close();
    }
  });
});
