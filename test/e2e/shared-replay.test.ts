/**
 * A shared server that dies under its clients (`qmd mcp --shared`, real processes): every
 * request it never answered is sent again by the relay to the next server (docs/design.md
 * §2.2), so a client of read-only tools sees no error. The clients are the SDK's real `Client`
 * over each relay's pipes; the server is SIGKILLed at moments picked by a seeded random count
 * of answers, so the kills land between, during and right after requests.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChildTransport } from '../support/child-transport.js';
import { qmdEnv, runQmd, spawnMcp, tempWorkspace, textOf } from '../support/qmd.js';
import { type Spawned, waitForExit } from '../support/spawn.js';
import { eventually, isAlive, serverLog, sharedServerPids } from './fixtures/shared.js';

const NOTES: Record<string, string> = {
  'bread.md': '# Bread\n\nSourdough needs a starter, flour, water and salt. Bake it hot.\n',
  'server.md': '# Server\n\nA server must never outlive its client. Orphans hold RAM and the index.\n',
  'sqlite.md': '# SQLite\n\nWAL mode lets readers and a writer share the index. Checkpoint on close.\n',
};

/** A seeded generator (mulberry32): the same kill moments on every run, a new seed to explore. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Connected {
  relay: Spawned;
  transport: ChildTransport;
  client: Client;
}

async function connect(env: NodeJS.ProcessEnv): Promise<Connected> {
  const relay = spawnMcp(env, ['--shared']);
  const transport = new ChildTransport(relay.child);
  const client = new Client({ name: 'replay-test', version: '1' });
  await client.connect(transport);
  return { relay, transport, client };
}

/** One read-only request of each kind a client makes, checked against the notes. */
const REQUESTS: Array<(c: Client) => Promise<boolean>> = [
  async (c) => textOf(await c.callTool({ name: 'query', arguments: { query: 'sourdough' } })).includes('bread.md'),
  async (c) => textOf(await c.callTool({ name: 'get', arguments: { file: 'notes/server.md' } })).includes('Orphans'),
  async (c) => {
    const result = await c.callTool({ name: 'multi_get', arguments: { pattern: '*.md' } });
    return JSON.stringify(result.content).includes('Checkpoint on close');
  },
  async (c) => textOf(await c.callTool({ name: 'status', arguments: {} })).includes('3 documents'),
  async (c) => (await c.listTools()).tools.length === 4,
  async (c) => {
    await c.ping();
    return true;
  },
  async (c) => {
    const read = await c.readResource({ uri: 'qmd://notes/sqlite.md' });
    return JSON.stringify(read.contents).includes('WAL mode');
  },
];

describe('a shared server killed under its clients', () => {
  const ws = tempWorkspace(NOTES);
  const runtime = mkdtempSync(join(tmpdir(), 'qmd-run-'));
  let env: NodeJS.ProcessEnv;
  beforeAll(async () => {
    env = qmdEnv(ws.index, { XDG_RUNTIME_DIR: runtime, QMD_SHARED_IDLE_MS: '60000' });
    expect((await runQmd(['collection', 'add', ws.notesDir, '--name', 'notes'], env)).code).toBe(0);
  });
  afterAll(() => {
    for (const pid of sharedServerPids(ws.index)) process.kill(pid, 'SIGKILL');
    ws.cleanup();
    rmSync(runtime, { recursive: true, force: true });
  });

  it('3 clients of read-only requests, the server SIGKILLed 6 times at random moments: every answer right, no error', async () => {
    const next = random(34);
    const clients: Connected[] = [];
    try {
      for (let i = 0; i < 3; i++) clients.push(await connect(env));
      const kills = 6;
      const perClient = 70;
      let answered = 0;
      const errors: string[] = [];
      const killed: number[] = [];
      // The next kill comes after this many more answers (1-8): between requests and during them.
      let killAt = 1 + Math.floor(next() * 8);
      // And only once every client has had an answer since the last kill: each request meets at
      // most one kill (a request that servers keep dying under gets an error after three,
      // `MAX_SENDS`, which test/relay/relay.test.ts checks; here the server is killed from outside).
      const sinceKill = new Set<number>();
      const onAnswer = (c: number): void => {
        answered++;
        sinceKill.add(c);
        if (killed.length >= kills || answered < killAt || sinceKill.size < clients.length) return;
        const [server] = sharedServerPids(ws.index);
        // Only a server that serves (a relay waiting on one still starting would wait out its bound).
        if (server === undefined || !serverLog(ws.index, env).includes(`(pid ${server})`)) return;
        process.kill(server, 'SIGKILL');
        killed.push(server);
        sinceKill.clear();
        killAt = answered + 1 + Math.floor(next() * 8);
      };
      await Promise.all(
        clients.map(async ({ client }, c) => {
          for (let i = 0; i < perClient; i++) {
            const request = REQUESTS[(i + c) % REQUESTS.length]!;
            try {
              if (!(await request(client))) errors.push(`client ${c} request ${i}: a wrong answer`);
            } catch (error) {
              errors.push(`client ${c} request ${i}: ${(error as Error).message}`);
            }
            onAnswer(c);
          }
        }),
      );
      expect(errors).toEqual([]);
      expect(killed).toHaveLength(kills);
      // Each kill was seen by the relays, which sent again what the dead server owed.
      const stderr = clients.map(({ relay }) => relay.stderr()).join('');
      expect(stderr.match(/the shared server went away; connecting to a new one/g)?.length).toBeGreaterThanOrEqual(
        kills,
      );
      expect(stderr).toMatch(/connecting to a new one \(\d+ request\(s\) to send again\)/);
      for (const { transport } of clients) await transport.close();
      for (const { relay } of clients) expect(await waitForExit(relay)).toEqual({ code: 0, signal: null });
    } finally {
      for (const { relay } of clients) relay.kill();
    }
  });

  it('a request written the moment the server is gone (before the relay has seen its socket close) is answered by the next one', async () => {
    const a = await connect(env);
    try {
      // Answered once: the relay and its server are connected.
      expect(textOf(await a.client.callTool({ name: 'query', arguments: { query: 'orphans' } }))).toContain(
        'server.md',
      );
      const [server] = sharedServerPids(ws.index);
      expect(server).toBeDefined();
      process.kill(server!, 'SIGKILL');
      await eventually(() => !isAlive(server!), 'the server gone');
      // At once: written to the dead socket, most often before its close reaches the relay.
      const answer = await a.client.callTool({ name: 'query', arguments: { query: 'sourdough' } });
      expect(answer.isError).not.toBe(true);
      expect(textOf(answer)).toContain('bread.md');
      const now = sharedServerPids(ws.index);
      expect(now).toHaveLength(1);
      expect(now[0]).not.toBe(server);
      await a.transport.close();
      expect(await waitForExit(a.relay)).toEqual({ code: 0, signal: null });
    } finally {
      a.relay.kill();
    }
  });

  it('a request in flight on the killed server (its handler delayed) is answered by the next one, once', async () => {
    // A server of its own, started with the failpoint (the relay's environment is its server's).
    for (const pid of sharedServerPids(ws.index)) process.kill(pid, 'SIGKILL');
    await eventually(() => sharedServerPids(ws.index).length === 0, 'no server');
    const slow = { ...env, QMD_FAILPOINTS: 'tool.status=delay(1500)' };
    const a = await connect(slow);
    try {
      const [first] = sharedServerPids(ws.index);
      const owed = a.client.callTool({ name: 'status', arguments: {} });
      await eventually(
        () => serverLog(ws.index, env).includes('QMD Debug: failpoint tool.status hit'),
        'the status call in flight',
      );
      if (first !== undefined) process.kill(first, 'SIGKILL');
      const answer = await owed;
      expect(answer.isError).not.toBe(true);
      expect(textOf(answer)).toContain('3 documents');
      // One reply per request reached the client: the SDK client would throw on an unknown id,
      // and the transport saw exactly one line with the status call's id.
      const ids = a.transport.lines.map((line) => (JSON.parse(line) as { id?: unknown }).id);
      expect(new Set(ids).size).toBe(ids.length);
      await a.transport.close();
      expect(await waitForExit(a.relay)).toEqual({ code: 0, signal: null });
    } finally {
      a.relay.kill();
    }
  });
});
