import * as fs from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore } from '../../src/core/index.js';
import type { StoreOptions } from '../../src/core/types.js';
import type { Embedder } from '../../src/llm/index.js';
import { Sqlite } from '../../src/store/sqlite.js';
import { expectQmdError, type Sandbox, sandbox } from '../store/helpers.js';

let box: Sandbox;
let root: string;

beforeEach(() => {
  box = sandbox();
  root = box.notes('notes', { 'a.md': '# A\n\nalpha\n', 'b.md': '# B\n\nbravo\n' });
});

afterEach(() => {
  box.cleanup();
});

const wal = (): string => `${box.index}-wal`;

/**
 * A hand-written embedder, made by the store through its `createEmbedder` seam: records when it
 * is disposed and whether the index was still open then. `dispose` is what the test says.
 */
function fakeLlm(events: string[], dispose?: () => Promise<void>) {
  let release: () => void = () => {};
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  const embedder: Embedder = {
    embed: async () => new Float32Array([1, 0, 0, 0]),
    embedBatch: async (texts) => texts.map(() => new Float32Array([1, 0, 0, 0])),
    dimensions: async () => 4,
    maxTokens: async () => 512,
    fingerprint: async () => 'fake-model',
    running: 0,
    queued: 0,
    dispose:
      dispose ??
      (async () => {
        events.push(`llm.dispose started (wal present: ${fs.existsSync(wal())})`);
        await released;
        events.push('llm.dispose finished');
      }),
  } as Embedder;
  const options: StoreOptions = { embedModel: 'fake.gguf', createEmbedder: () => embedder };
  return { release: () => release(), options };
}

/** The store makes its embedder on the first call that needs the model: `embed` does. */
async function wake(store: ReturnType<typeof openStore>): Promise<void> {
  await store.embed();
}

describe('close', () => {
  it('checkpoints and leaves no -wal or -shm', async () => {
    const store = openStore(box.index);
    await store.addCollection(root);
    expect(fs.existsSync(wal())).toBe(true);
    await store.close();
    expect(fs.existsSync(wal())).toBe(false);
    expect(fs.existsSync(`${box.index}-shm`)).toBe(false);
    const db = new Sqlite(box.index, { readOnly: true });
    expect(db.prepare('SELECT count(*) AS n FROM documents').get()).toEqual({ n: 2 });
    db.close();
  });

  it('disposes the LLM first and closes the database only after it is done', async () => {
    const events: string[] = [];
    const llm = fakeLlm(events);
    const store = openStore(box.index, llm.options);
    await store.addCollection(root);
    await wake(store);
    const closing = store.close().then(() => events.push(`closed (wal present: ${fs.existsSync(wal())})`));
    // The dispose is still pending: the database must still be open.
    await Promise.resolve();
    expect(events).toEqual(['llm.dispose started (wal present: true)']);
    expect(fs.existsSync(wal())).toBe(true);
    llm.release();
    await closing;
    expect(events).toEqual([
      'llm.dispose started (wal present: true)',
      'llm.dispose finished',
      'closed (wal present: false)',
    ]);
  });

  it('is idempotent: one teardown, however many calls', async () => {
    let disposals = 0;
    const store = openStore(
      box.index,
      fakeLlm([], async () => {
        disposals++;
      }).options,
    );
    await wake(store);
    const first = store.close();
    const second = store.close();
    expect(second).toBe(first);
    await Promise.all([first, second, store.close()]);
    expect(disposals).toBe(1);
  });

  it('still closes the database when the LLM fails to dispose, then reports the failure', async () => {
    const store = openStore(
      box.index,
      fakeLlm([], async () => {
        throw new Error('native dispose failed');
      }).options,
    );
    await store.addCollection(root);
    await wake(store);
    await expect(store.close()).rejects.toThrow('native dispose failed');
    expect(fs.existsSync(wal())).toBe(false);
  });

  it('refuses every call after close with CLOSED', async () => {
    const store = openStore(box.index);
    await store.close();
    await expectQmdError(() => store.search('alpha'), 'CLOSED');
    await expectQmdError(() => store.get('notes/a.md'), 'CLOSED');
    await expectQmdError(() => store.status(), 'CLOSED');
    await expectQmdError(() => store.update(), 'CLOSED');
    await expectQmdError(() => store.addCollection(root), 'CLOSED');
  });

  it('a read-only store that closes last still removes the -wal', async () => {
    const writer = openStore(box.index);
    await writer.addCollection(root);
    await writer.close();
    const reader = openStore(box.index, { readonly: true });
    expect(reader.search('alpha')).toHaveLength(1);
    // Another connection commits and leaves: it is not the last, so its frames stay in the WAL.
    const other = new Sqlite(box.index);
    other.prepare("UPDATE collections SET updated_at = '2020-01-01T00:00:00.000Z'").run();
    other.close();
    expect(fs.statSync(wal()).size).toBeGreaterThan(0);
    await reader.close();
    expect(fs.existsSync(wal())).toBe(false);
    const check = new Sqlite(box.index, { readOnly: true });
    expect(check.value('SELECT updated_at FROM collections')).toBe('2020-01-01T00:00:00.000Z');
    check.close();
  });
});

describe('read-only stores', () => {
  it('refuse writes with INDEX_READ_ONLY', async () => {
    const writer = openStore(box.index);
    await writer.addCollection(root);
    await writer.close();
    const reader = openStore(box.index, { readonly: true });
    try {
      await expectQmdError(() => reader.addCollection(box.notes('more', { 'c.md': 'c\n' })), 'INDEX_READ_ONLY');
      await expectQmdError(() => reader.update(), 'INDEX_READ_ONLY');
      await expectQmdError(() => reader.removeCollection('notes'), 'INDEX_READ_ONLY');
      expect(reader.status().documents).toBe(2);
    } finally {
      await reader.close();
    }
  });

  it('read while another process holds the write lock, and see only committed rows', async () => {
    const writer = openStore(box.index);
    await writer.addCollection(root);
    await writer.close();
    const other = new Sqlite(box.index);
    other.exec('BEGIN IMMEDIATE');
    other.exec("UPDATE documents SET title = 'Uncommitted'");
    const reader = openStore(box.index, { readonly: true, busyTimeoutMs: 50 });
    try {
      expect(reader.search('alpha')[0]?.title).toBe('A');
      expect(reader.get('notes/a.md').title).toBe('A');
    } finally {
      other.exec('ROLLBACK');
      other.close();
      await reader.close();
    }
  });

  it('a fresh machine: a read-only store never creates the index, and says how to make one (issue 23)', async () => {
    expect(() => openStore(box.index, { readonly: true })).toThrow(
      expect.objectContaining({ code: 'INDEX_MISSING', message: expect.stringContaining('qmd collection add DIR') }),
    );
    expect(() => openStore(box.index, { create: false })).toThrow(expect.objectContaining({ code: 'INDEX_MISSING' }));
    expect(fs.existsSync(box.index)).toBe(false);
    const writer = openStore(box.index);
    await writer.close();
    expect(fs.existsSync(box.index)).toBe(true);
  });
});
