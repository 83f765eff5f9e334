/**
 * `qmd mcp --shared` with real processes: client apps (`fixtures/shared-client.mjs`, the SDK's
 * real Client over its stdio transport) each start a relay; the relays share one server per
 * index. Every wait is for an observable fact with a generous bound; the speed figures (relay
 * exit within 1 s, spawn → initialize) are measured by `bench/`, not asserted here.
 */
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sharedPaths } from '../../src/relay/paths.js';
import { Sqlite } from '../../src/store/sqlite.js';
import { ChildTransport } from '../support/child-transport.js';
import { tinyModelPath } from '../support/gguf.js';
import { qmdEnv, runQmd, spawnMcp, tempWorkspace } from '../support/qmd.js';
import { waitForExit } from '../support/spawn.js';
import { PROC_MODES } from './fixtures/proc-modes.js';
import { eventually, isAlive, type SharedClient, serverLog, sharedServerPids, startClient } from './fixtures/shared.js';

const NOTES: Record<string, string> = {
  'bread.md': '# Bread\n\nSourdough needs a starter, flour, water and salt. Bake it hot.\n',
  'server.md': '# Server\n\nA server must never outlive its client. Orphans hold RAM and the index.\n',
  'sqlite.md': '# SQLite\n\nWAL mode lets readers and a writer share the index. Checkpoint on close.\n',
};
const IDLE_MS = 1500;

describe.each(PROC_MODES)('one shared server for every stdio client, $mode', ({ extra }) => {
  const ws = tempWorkspace(NOTES);
  const runtime = mkdtempSync(join(tmpdir(), 'qmd-run-'));
  let env: NodeJS.ProcessEnv;
  beforeAll(async () => {
    env = qmdEnv(ws.index, {
      QMD_EMBED_MODEL: tinyModelPath(),
      QMD_EMBED_THREADS: '1',
      XDG_RUNTIME_DIR: runtime,
      QMD_SHARED_IDLE_MS: String(IDLE_MS),
      ...extra,
    });
    expect((await runQmd(['collection', 'add', ws.notesDir, '--name', 'notes'], env)).code).toBe(0);
    const embedded = await runQmd(['embed'], env);
    expect(embedded.code, embedded.stderr).toBe(0);
  });
  afterAll(() => {
    for (const pid of sharedServerPids(ws.index)) process.kill(pid, 'SIGKILL');
    ws.cleanup();
    rmSync(runtime, { recursive: true, force: true });
  });

  it('5 clients, 5 relays: one server, one model load, hybrid queries from all 5 at once; SIGKILL them all, and everything leaves cleanly', async () => {
    const clients: SharedClient[] = [];
    try {
      for (let i = 0; i < 5; i++) clients.push(await startClient(ws.index, env));
      expect(sharedServerPids(ws.index)).toHaveLength(1);

      for (const [i, c] of clients.entries()) c.order({ op: 'query', query: 'sourdough starter', tag: `q${i}` });
      const results = await Promise.all(clients.map((c, i) => c.next((e) => e.tag === `q${i}`)));
      for (const result of results) {
        expect(result.event).toBe('result');
        expect(result.mode).toBe('hybrid');
        expect(result.text).toContain('bread.md');
      }
      const log = serverLog(ws.index, env);
      expect(log.match(/embedding model loaded/g)).toHaveLength(1);
      expect(log.match(/session-\d+ opened/g)).toHaveLength(5);

      const status = await runQmd(['status', '--json'], env);
      expect(JSON.parse(status.stdout).sharedServer).toMatchObject({ running: true, sessions: 5, modelLoaded: true });

      // The client apps die; their relays see EOF.
      for (const c of clients) c.p.child.kill('SIGKILL');
      await eventually(() => clients.every((c) => !isAlive(c.relayPid)), 'every relay gone');
      // The server: every session ends, then the idle bound, then a clean exit.
      await eventually(() => sharedServerPids(ws.index).length === 0, 'the shared server gone', IDLE_MS + 20_000);
      const finalLog = serverLog(ws.index, env);
      expect(finalLog).toContain(`Shutting down (idle for ${IDLE_MS} ms)...`);
      expect(finalLog).toMatch(
        /Shutdown complete in [\d.]+ ms: idle for \d+ ms: 5 session\(s\) served, drained, all steps ok, exit 0/,
      );
      // Checked before this test opens the file itself.
      expect(existsSync(`${ws.index}-wal`)).toBe(false);
      const db = new Sqlite(ws.index, { readOnly: true });
      expect(db.pragmaValue('integrity_check')).toBe('ok');
      db.close();
      expect(existsSync(sharedPaths(ws.index, env).socket)).toBe(false);
    } finally {
      for (const c of clients) c.p.kill();
    }
  });

  it('10 relays started at the same instant with no server: one server', async () => {
    const relays = Array.from({ length: 10 }, () => spawnMcp(env, ['--shared']));
    try {
      const clients = relays.map((r) => ({
        r,
        transport: new ChildTransport(r.child),
        client: new Client({ name: 'c', version: '1' }),
      }));
      await Promise.all(clients.map(({ client, transport }) => client.connect(transport)));
      expect(sharedServerPids(ws.index)).toHaveLength(1);
      const answers = await Promise.all(
        clients.map(({ client }) => client.callTool({ name: 'query', arguments: { query: 'orphans' } })),
      );
      for (const answer of answers) expect(JSON.stringify(answer.content)).toContain('server.md');
      await Promise.all(clients.map(({ transport }) => transport.close()));
      for (const r of relays) expect(await waitForExit(r)).toEqual({ code: 0, signal: null });
      await eventually(() => sharedServerPids(ws.index).length === 0, 'the shared server gone', IDLE_MS + 20_000);
    } finally {
      for (const r of relays) r.kill();
    }
  });

  it('SIGKILL the server under 2 live clients: a new server answers the request in flight, then the next queries', async () => {
    // Delayed, not hung: the relay sends it again to the next server, which has the failpoint too.
    const slow = { ...env, QMD_FAILPOINTS: 'tool.status=delay(1000)' };
    const a = await startClient(ws.index, slow);
    const b = await startClient(ws.index, slow);
    try {
      const [first] = sharedServerPids(ws.index);
      expect(first).toBeDefined();
      a.order({ op: 'call', name: 'status', tag: 'inflight' });
      await eventually(
        () => serverLog(ws.index, env).includes('QMD Debug: failpoint tool.status hit'),
        'the status call in flight',
      );
      process.kill(first!, 'SIGKILL');
      const owed = await a.next((e) => e.tag === 'inflight');
      expect(owed.event, JSON.stringify(owed)).toBe('result');
      expect(owed.text).toContain('3 documents');
      for (const [c, tag] of [
        [a, 'after-a'],
        [b, 'after-b'],
      ] as const) {
        c.order({ op: 'query', query: 'sourdough', tag });
        const again = await c.next((e) => e.tag === tag);
        expect(again.event, JSON.stringify(again)).toBe('result');
        expect(again.text).toContain('bread.md');
      }
      const now = sharedServerPids(ws.index);
      expect(now).toHaveLength(1);
      expect(now[0]).not.toBe(first);
    } finally {
      a.p.kill();
      b.p.kill();
      // Their relays first: one still alive when its server goes would start the next server
      // (that is what it is for), and the next test would find it.
      await eventually(() => !isAlive(a.relayPid) && !isAlive(b.relayPid), 'the relays gone');
      for (const pid of sharedServerPids(ws.index)) process.kill(pid, 'SIGTERM');
      await eventually(() => sharedServerPids(ws.index).length === 0, 'the shared server gone');
    }
  });

  it('a socket open to others (0666) is refused: the relay serves its client alone, with a warning', async () => {
    const paths = sharedPaths(ws.index, env);
    mkdirSync(paths.dir, { recursive: true, mode: 0o700 });
    const impostor = createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => impostor.listen(paths.socket, resolve));
    chmodSync(paths.socket, 0o666);
    const relay = spawnMcp(env, ['--shared']);
    try {
      const transport = new ChildTransport(relay.child);
      const client = new Client({ name: 'alone', version: '1' });
      await client.connect(transport);
      const answer = await client.callTool({ name: 'query', arguments: { query: 'sourdough' } });
      expect(JSON.stringify(answer.content)).toContain('bread.md');
      // stderr and stdout are separate pipes: the warning, written first, may still arrive after the answer.
      await relay.waitForStderr(
        /QMD Warning: shared server unavailable \(.* is open to other users \(mode 666\)\); serving this client alone/,
        30_000,
      );
      expect(relay.stderr().match(/serving this client alone/g)).toHaveLength(1);
      expect(sharedServerPids(ws.index)).toEqual([]);
      await transport.close();
      expect(await waitForExit(relay)).toEqual({ code: 0, signal: null });
    } finally {
      relay.kill();
      impostor.close();
    }
  });

  it('qmd status asks the live server: 0 sessions live once the last client left, before the idle exit; qmd mcp stop --shared stops it', async () => {
    // Idle for 10 minutes: the server is still there when its last session has ended.
    const lingering = { ...env, QMD_SHARED_IDLE_MS: '600000' };
    const doneLines = (): number => serverLog(ws.index, env).match(/session session-\d+ done: /g)?.length ?? 0;
    const status = async () => JSON.parse((await runQmd(['status', '--json'], lingering)).stdout).sharedServer;
    const client = await startClient(ws.index, lingering);
    let server: number | undefined;
    try {
      [server] = sharedServerPids(ws.index);
      expect(server).toBeDefined();
      // The switch reached the server (its relay's environment): /proc added nothing to its record.
      const record = JSON.parse(readFileSync(sharedPaths(ws.index, env).record, 'utf8'));
      expect(record.pid).toBe(server);
      expect(record.identity === undefined).toBe('QMD_TEST_NO_PROC' in extra);
      expect(await status()).toMatchObject({ running: true, pid: server, sessions: 1, ended: 0, served: 1 });

      const ended = doneLines();
      client.p.child.kill('SIGKILL');
      await eventually(() => doneLines() > ended, 'the session done');
      // Counted when the session ended (its teardown done), not when its socket closed.
      expect(await status()).toMatchObject({ running: true, pid: server, sessions: 0, ended: 1, served: 1 });
      expect(sharedServerPids(ws.index)).toEqual([server]);

      const stopped = await runQmd(['mcp', 'stop', '--shared'], lingering);
      expect(stopped.code, stopped.stderr).toBe(0);
      expect(stopped.stdout).toContain(`Stopped the shared server (pid ${server})`);
      // `stop` returned once the server had exited, through its machine's teardown.
      expect(sharedServerPids(ws.index)).toEqual([]);
      const log = serverLog(ws.index, env);
      expect(log).toContain('Shutting down (qmd mcp stop)...');
      expect(log).toMatch(
        /Shutdown complete in [\d.]+ ms: qmd mcp stop: 1 session\(s\) served, drained, all steps ok, exit 0/,
      );
      const paths = sharedPaths(ws.index, env);
      expect(existsSync(paths.socket)).toBe(false);
      expect(existsSync(paths.record)).toBe(false);
      expect(await status()).toMatchObject({ running: false });
      const again = await runQmd(['mcp', 'stop', '--shared'], lingering);
      expect(again.code).toBe(1);
      expect(again.stderr).toContain('no shared server is running');
    } finally {
      client.p.kill();
      if (server !== undefined && isAlive(server)) process.kill(server, 'SIGKILL');
    }
  });
});
