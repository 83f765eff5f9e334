/**
 * What a client sees of the watcher, through the server `qmd mcp` builds (`openServing`) over
 * the stdio connection it runs, with a real SDK `Client` and a hand-written engine: notes
 * appearing or going are `notifications/resources/list_changed` in both protocol eras (2025:
 * unsolicited; 2026-07-28: on the subscription the client's `listChanged` opens), `status`
 * says what is watched, and a search that used vectors says when they are catching up.
 */
import type { ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createContext } from '../../src/cli/context.js';
import type { QueryResult } from '../../src/core/reader-types.js';
import { serveStdioConnection } from '../../src/mcp/stdio/connection.js';
import { catchingUpNote, withCatchingUp } from '../../src/mcp/watch-status.js';
import { openServing, type Serving } from '../../src/serve/serve-mcp.js';
import { within } from '../support/bounded.js';
import { ChildTransport } from '../support/child-transport.js';
import { deferred } from '../support/deferred.js';
import { FakeWatcher } from '../support/fake-watcher.js';
import { probedGate } from '../support/gate-probe.js';
import { recordingLog } from '../support/recording-log.js';
import { type Harness, startHarness, textOf } from './harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

/** What `qmd mcp` serves for this index, with `watcher` as its engine, started. */
async function serving(watcher: FakeWatcher, env: NodeJS.ProcessEnv = {}): Promise<Serving> {
  const ctx = createContext({ index: join(h.dir, 'index.sqlite') }, { QMD_QUERY_WORKER: '0', ...env });
  const served = openServing(ctx, { watchIndex: async () => () => watcher });
  served.watching.start();
  await served.watching.ready;
  return served;
}

/** A client of one stdio connection (the one `qmd mcp` runs) over in-memory pipes. */
async function connect(served: Serving, era: '2025-11-25' | '2026-07-28') {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  const { gate } = probedGate();
  const connection = serveStdioConnection({
    createServer: () => served.createServer(gate.uncounted()),
    stdin,
    stdout,
    log: recordingLog(),
    gate,
    onClosed: () => {},
  });
  const transport = new ChildTransport(Object.assign(new EventEmitter(), { stdin, stdout }) as unknown as ChildProcess);
  const refreshed: string[][] = [];
  const firstRefresh = deferred();
  const client = new Client(
    { name: `watch-${era}`, version: '1.0.0' },
    {
      versionNegotiation: { mode: era === '2026-07-28' ? { pin: era } : 'legacy' },
      listChanged: {
        resources: {
          onChanged: (error, resources) => {
            if (error) return;
            refreshed.push((resources ?? []).map((r) => r.uri));
            firstRefresh.resolve();
          },
        },
      },
    },
  );
  await client.connect(transport);
  return {
    client,
    transport,
    refreshed,
    /** Settles when the client, told, has listed the resources again (its `listChanged` handler). */
    refreshedOnce: () => within(firstRefresh.promise, 'the client refreshing its resource list'),
    /** The list_changed notifications the server wrote, as written. */
    notifications: () => transport.lines.filter((l) => l.includes('"notifications/resources/list_changed"')),
    async close() {
      await client.close().catch(() => {});
      await connection.release();
    },
  };
}

describe('notes that appear or go reach every client as list_changed', () => {
  it.each(['2025-11-25', '2026-07-28'] as const)(
    'era %s: an added note is told, and the client lists again',
    async (era) => {
      const watcher = new FakeWatcher();
      const served = await serving(watcher);
      const c = await connect(served, era);
      try {
        expect(c.client.getNegotiatedProtocolVersion()).toBe(era);
        watcher.indexed({ added: ['new.md'] });
        await c.transport.waitForLine((line) => line.includes('"notifications/resources/list_changed"'));
        // The client heard it, and asked for the list again.
        await within(
          new Promise<void>((resolve) => {
            const check = setInterval(() => {
              if (c.refreshed.length > 0) {
                clearInterval(check);
                resolve();
              }
            }, 5);
          }),
          'the client refreshing its resource list',
        );
      } finally {
        await c.close();
        await served.watching.close();
        await served.store.close();
      }
    },
  );

  it('two clients are both told; after teardown closes the watching, nothing more is sent', async () => {
    const watcher = new FakeWatcher();
    const served = await serving(watcher);
    const a = await connect(served, '2025-11-25');
    const b = await connect(served, '2025-11-25');
    try {
      watcher.indexed({ removed: ['old.md'] });
      await a.transport.waitForLine((line) => line.includes('list_changed'));
      await b.transport.waitForLine((line) => line.includes('list_changed'));
      await served.watching.close();
      expect(watcher.closeCalls).toBe(1);
      watcher.indexed({ added: ['late.md'] });
      await a.client.ping();
      expect(a.notifications().length).toBe(1);
    } finally {
      await a.close();
      await b.close();
      await served.store.close();
    }
  });
});

describe('status says what is watched', () => {
  it('each collection, how it is heard, what is pending, the last change', async () => {
    const watcher = new FakeWatcher({
      report: {
        role: 'writer',
        collections: [
          { collection: 'notes', root: join(h.dir, 'notes'), via: 'events', folders: 2 },
          {
            collection: 'journal',
            root: join(h.dir, 'journal'),
            via: 'polling',
            reason: 'the OS limit on watches was reached',
            folders: 0,
            intervalMs: 5000,
          },
        ],
        pending: 3,
        vectorsPending: 1,
        lastChangeAt: Date.parse('2026-12-05T10:00:00Z'),
        lastIndexedAt: null,
      },
    });
    const served = await serving(watcher);
    const c = await connect(served, '2025-11-25');
    try {
      await c.client.listTools();
      const result = await c.client.callTool({ name: 'status', arguments: {} });
      expect(result.structuredContent).toMatchObject({
        watch: {
          role: 'writer',
          collections: [
            { collection: 'notes', via: 'events', folders: 2 },
            { collection: 'journal', via: 'polling', reason: 'the OS limit on watches was reached', intervalMs: 5000 },
          ],
          pending: 3,
          vectorsPending: 1,
          lastChangeAt: '2026-12-05T10:00:00.000Z',
          lastIndexedAt: null,
        },
      });
      const text = textOf(result as never);
      expect(text).toContain('Watching: this server writes the index as notes change');
      expect(text).toContain('  journal: polled every 5 s (the OS limit on watches was reached)');
      expect(text).toContain('  pending: 3 paths, vectors pending: 1 note;');
    } finally {
      await c.close();
      await served.watching.close();
      await served.store.close();
    }
  });

  it('another process writes: this one is a reader, and names it', async () => {
    const watcher = new FakeWatcher({ report: { role: 'reader', writerPid: 4242 } });
    const served = await serving(watcher);
    const c = await connect(served, '2026-07-28');
    try {
      await c.client.listTools();
      const result = await c.client.callTool({ name: 'status', arguments: {} });
      expect(result.structuredContent).toMatchObject({ watch: { role: 'reader', writerPid: 4242 } });
      expect(textOf(result as never)).toContain('Watching: pid 4242 writes the index as notes change');
    } finally {
      await c.close();
      await served.watching.close();
      await served.store.close();
    }
  });

  it('QMD_WATCH=0: off, and why; the engine is never asked', async () => {
    const watcher = new FakeWatcher();
    const served = await serving(watcher, { QMD_WATCH: '0' });
    const c = await connect(served, '2025-11-25');
    try {
      await c.client.listTools();
      const result = await c.client.callTool({ name: 'status', arguments: {} });
      expect(result.structuredContent).toMatchObject({ watch: { role: 'off', off: 'QMD_WATCH=0' } });
      expect(textOf(result as never)).toContain('Watching: off in this server (QMD_WATCH=0)');
      expect(watcher.started).toBe(false);
    } finally {
      await c.close();
      await served.watching.close();
      await served.store.close();
    }
  });
});

describe('a search says when vectors are catching up', () => {
  const result = (mode: QueryResult['mode'], note?: string): QueryResult =>
    ({ mode, ...(note !== undefined && { note }), searches: [], reranked: false, hits: [] }) as QueryResult;

  it('a search that used vectors carries the note; BM25 alone used none', () => {
    expect(withCatchingUp(result('hybrid'), 12).note).toBe(
      'vectors are catching up: 12 notes changed since they were embedded',
    );
    expect(withCatchingUp(result('vector'), 1).note).toBe(
      'vectors are catching up: 1 note changed since it was embedded',
    );
    expect(withCatchingUp(result('bm25', 'nothing is embedded yet'), 12).note).toBe('nothing is embedded yet');
    expect(withCatchingUp(result('hybrid'), 0).note).toBeUndefined();
    expect(withCatchingUp(result('hybrid', 'expansion off'), 2).note).toBe(`expansion off; ${catchingUpNote(2)}`);
  });
});
