/**
 * The query worker (docs/design.md §8.4) on a real index, in a real `worker_threads` worker
 * running the TypeScript source (through tsx, as the bundle's `dist/query-worker.mjs` runs
 * the same code): it answers as the inline store does; an aborted call rejects at once, and
 * one still waiting behind another is never run by the worker; `close()` stops the worker after
 * the model and before the database, whether the worker is idle, busy in a loop that never
 * yields, or deaf to `close`.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Worker } from 'node:worker_threads';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { openStore } from '../../src/core/index.js';
import type { Store, StoreOptions } from '../../src/core/types.js';
import { type FailpointAction, type Failpoints, noFailpoints, parseFailpoints } from '../../src/failpoints.js';
import type { Embedder } from '../../src/llm/index.js';
import { type Log, silentLog } from '../../src/log.js';
import { QUERY_FAILPOINT } from '../../src/search/query-reads.js';
import { QueryWorker, type WorkerScript } from '../../src/search/query-worker-client.js';
import { Sqlite } from '../../src/store/sqlite.js';
import { expectQmdError, type Sandbox, sandbox } from '../store/helpers.js';
import { within } from '../support/bounded.js';
import { deferred } from '../support/deferred.js';

const SCRIPT: WorkerScript = {
  file: new URL('../../src/search/query-worker.ts', import.meta.url),
  execArgv: ['--import', 'tsx'],
};
/** The real worker, saying which calls it ran (`fixtures/counting-worker.ts`). */
const COUNTING: WorkerScript = {
  file: new URL('./fixtures/counting-worker.ts', import.meta.url),
  execArgv: ['--import', 'tsx'],
};

let box: Sandbox;
let root: string;
const open: Store[] = [];

beforeEach(async () => {
  box = sandbox();
  root = box.notes('notes', {
    'bread.md': '# Bread\n\nsourdough starter and a hot oven\n',
    'garden.md': '# Garden\n\npruning roses in spring\n',
    'sub/oven.md': '# Oven\n\nthe oven bakes sourdough loaves\n',
  });
  const writer = openStore(box.index);
  await writer.addCollection(root, { name: 'notes' });
  await writer.close();
});

afterEach(async () => {
  for (const store of open.splice(0)) await store.close();
  vi.restoreAllMocks();
  box.cleanup();
});

function store(options: StoreOptions = {}): Store {
  const opened = openStore(box.index, options);
  open.push(opened);
  return opened;
}

/** Carries `action` into the worker on the first call only, and says when it has. */
function firstCallFailpoint(action: FailpointAction) {
  const carried = deferred();
  let calls = 0;
  const failpoints: Failpoints = {
    names: [QUERY_FAILPOINT],
    has: (name) => name === QUERY_FAILPOINT,
    hit: () => undefined,
    carry: (name) => {
      if (name !== QUERY_FAILPOINT || ++calls > 1) return undefined;
      carried.resolve();
      return action;
    },
  };
  return { failpoints, carried: carried.promise };
}

function worker(
  failpoints: Failpoints = noFailpoints,
  closeTimeoutMs?: number,
  script = SCRIPT,
  log: Log = silentLog,
): QueryWorker {
  return new QueryWorker({
    path: box.index,
    busyTimeoutMs: 5000,
    vectorExtension: false,
    log,
    failpoints,
    script,
    ...(closeTimeoutMs !== undefined && { closeTimeoutMs }),
  });
}

/** The worker's thread has exited: resolves with when, as one of `events`. */
function exitOf(thread: Worker | undefined, events: string[]): Promise<void> {
  if (thread === undefined) throw new Error('no worker thread');
  return new Promise((resolve) =>
    thread.once('exit', () => {
      events.push('worker exited');
      resolve();
    }),
  );
}

describe('the query worker', () => {
  it('answers query, multiGet and status as the inline store does, errors with their codes', async () => {
    const inline = store({ readonly: true });
    const inWorker = store({ readonly: true, queryWorker: SCRIPT });
    expect(await inWorker.query('sourdough oven')).toEqual(await inline.query('sourdough oven'));
    expect(await inWorker.query('sourdough', { collections: ['notes'], limit: 1 })).toEqual(
      await inline.query('sourdough', { collections: ['notes'], limit: 1 }),
    );
    expect(await inWorker.multiGet('notes/**', { maxLines: 1 })).toEqual(
      await inline.multiGet('notes/**', { maxLines: 1 }),
    );
    // status: the worker's own StatusReader on its read-only connection, the same report.
    expect(await inWorker.readStatus()).toEqual(inline.status());
    expect(await inline.readStatus()).toEqual(inline.status());
    expect((await inWorker.readStatus()).collections.map((c) => c.documents)).toEqual([3]);
    await expectQmdError(() => inWorker.readStatus({ signal: AbortSignal.abort() }), 'ABORTED');
    await expectQmdError(() => inWorker.multiGet('notes/missing.md, ../x'), 'OUTSIDE_COLLECTIONS');
    await expectQmdError(() => inWorker.query('x', { collections: ['nope'] }), 'UNKNOWN_COLLECTION');
  });

  it('an aborted call queued behind another rejects at once and the worker never runs it', async () => {
    const hold = firstCallFailpoint({ kind: 'delay', ms: 400 });
    const ran: string[] = [];
    const log = { line: (text: string) => ran.push(text), warn: (text: string) => ran.push(text) };
    const reads = worker(hold.failpoints, undefined, COUNTING, log);
    try {
      const first = reads.lexical('sourdough', { limit: 10 });
      await hold.carried;
      const controller = new AbortController();
      const queued = reads.lexical('garden', { limit: 10 }, controller.signal);
      const thread = reads.thread;
      controller.abort();
      await expectQmdError(() => queued, 'ABORTED');
      // Not the call the worker is running: the worker is kept.
      expect(reads.thread).toBe(thread);
      expect(reads.busy).toBe(true);
      expect((await first).map((hit) => hit.file).sort()).toEqual(['notes/bread.md', 'notes/sub/oven.md']);
      // Sent after the aborted one: once it is answered, the worker has run all it was sent.
      const third = await reads.multiGet('notes/garden.md', {});
      expect(third.documents.map((doc) => doc.file)).toEqual(['notes/garden.md']);
      expect(reads.busy).toBe(false);
      expect(reads.thread).toBe(thread);
      // The worker's own account: it ran the first and the third, never the aborted second.
      expect(ran).toEqual(['runs 1 lexical', 'runs 3 multiGet']);
    } finally {
      await reads.close();
    }
  });

  it('aborting the call the worker runs terminates it: a call that never yields stops, the next call answers', async () => {
    const hold = firstCallFailpoint({ kind: 'hang' });
    const reads = worker(hold.failpoints);
    try {
      const controller = new AbortController();
      const hung = reads.lexical('sourdough', { limit: 10 }, controller.signal);
      await hold.carried;
      const events: string[] = [];
      const exited = exitOf(reads.thread, events);
      // Queued behind the hung call before the abort: it moves to the fresh worker.
      const waiting = reads.multiGet('notes/garden.md', {});
      controller.abort();
      await expectQmdError(() => hung, 'ABORTED');
      await within(exited, 'the hung worker to exit', 10_000);
      expect(events).toEqual(['worker exited']);
      const moved = await within(waiting, 'the queued call, on a fresh worker', 10_000);
      expect(moved.documents.map((doc) => doc.file)).toEqual(['notes/garden.md']);
      const next = await within(reads.lexical('sourdough', { limit: 10 }), 'the next call', 10_000);
      expect(next.map((hit) => hit.file).sort()).toEqual(['notes/bread.md', 'notes/sub/oven.md']);
      expect(reads.busy).toBe(false);
    } finally {
      await reads.close();
    }
  });

  it('a call whose signal already fired never reaches the worker', async () => {
    const reads = worker(parseFailpoints(`${QUERY_FAILPOINT}=hang`));
    try {
      await expectQmdError(() => reads.lexical('sourdough', {}, AbortSignal.abort()), 'ABORTED');
      expect(reads.busy).toBe(false);
    } finally {
      await reads.close();
    }
  });

  it('close() terminates a worker that never yields, and the waiting call rejects CLOSED', async () => {
    const reads = worker(parseFailpoints(`${QUERY_FAILPOINT}=hang`));
    const events: string[] = [];
    expect(reads.thread).toBeUndefined(); // started by the first call
    const call = reads.lexical('sourdough', {});
    const exited = exitOf(reads.thread, events);
    const closed = reads.close();
    await expectQmdError(() => call, 'CLOSED');
    await closed;
    await exited;
    expect(events).toEqual(['worker exited']);
    await expectQmdError(() => reads.lexical('sourdough', {}), 'CLOSED');
  });

  it('close() terminates an idle worker that does not exit on `close` within its bound', async () => {
    const deaf = join(box.dir, 'deaf-worker.mjs');
    // Answers every call with no rows, and ignores `close`.
    writeFileSync(
      deaf,
      "import { parentPort } from 'node:worker_threads';\nparentPort.on('message', (m) => { if (m.id !== undefined) parentPort.postMessage({ id: m.id, value: [] }); });\n",
    );
    const reads = worker(noFailpoints, 50, { file: deaf, execArgv: [] });
    const events: string[] = [];
    expect(await reads.lexical('sourdough', {})).toEqual([]);
    expect(reads.busy).toBe(false);
    const exited = exitOf(reads.thread, events);
    await reads.close();
    await exited;
    expect(events).toEqual(['worker exited']);
  });
});

describe('close() with the query worker', () => {
  /** A store whose embedder (made through its seam) and main connection say when they close. */
  function recordedStore(events: string[], failpoints: Failpoints) {
    const embedder = {
      embed: async () => new Float32Array([1, 0, 0, 0]),
      embedBatch: async (texts: string[]) => texts.map(() => new Float32Array([1, 0, 0, 0])),
      dimensions: async () => 4,
      maxTokens: async () => 512,
      fingerprint: async () => 'fake-model',
      running: 0,
      queued: 0,
      dispose: async () => {
        events.push('model disposed');
      },
    } as unknown as Embedder;
    const close = Sqlite.prototype.close;
    vi.spyOn(Sqlite.prototype, 'close').mockImplementation(function (this: Sqlite) {
      events.push('database closed');
      close.call(this);
    });
    return store({ embedModel: 'fake.gguf', createEmbedder: () => embedder, queryWorker: SCRIPT, failpoints });
  }

  it('stops the model, then the idle worker, then the database', async () => {
    const events: string[] = [];
    const s = recordedStore(events, noFailpoints);
    await s.embed(); // wakes the model, so there is one to dispose
    expect((await s.query('sourdough')).hits.length).toBeGreaterThan(0);
    const exited = exitOf((s as unknown as { reader: { reads: QueryWorker } }).reader.reads.thread, events);
    await s.close();
    await exited;
    expect(events).toEqual(['model disposed', 'worker exited', 'database closed']);
  });

  it('stops the model, then the worker running a query that never yields, then the database', async () => {
    const events: string[] = [];
    const hold = firstCallFailpoint({ kind: 'hang' });
    const s = recordedStore(events, hold.failpoints);
    await s.embed();
    const query = s.query('sourdough');
    query.catch(() => {}); // asserted below, after close
    await hold.carried;
    const exited = exitOf((s as unknown as { reader: { reads: QueryWorker } }).reader.reads.thread, events);
    await s.close();
    await exited;
    expect(events).toEqual(['model disposed', 'worker exited', 'database closed']);
    await expectQmdError(() => query, 'CLOSED');
  });
});
