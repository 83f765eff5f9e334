/**
 * `qmd mcp --shared` when something goes wrong, with real processes: a client that kills its
 * whole process tree or group, a server that cannot open its index, a server that is stopped,
 * and a listener on the socket that is not a qmd server. The client is the SDK's real Client
 * (or raw JSON-RPC where the bytes on stdout are the point); process trees are read from /proc
 * here in the test, as opencode reads them. Bounds asserted are the ones the issue promises
 * (the connect bound); speed is measured by `bench/`.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packageVersion } from '../../src/cli/version.js';
import { greetingLine } from '../../src/relay/greeting.js';
import { failurePath, hungPath, readHung } from '../../src/relay/health.js';
import { sharedPaths } from '../../src/relay/paths.js';
import { ChildTransport } from '../support/child-transport.js';
import { tinyModelPath } from '../support/gguf.js';
import { qmdEnv, runQmd, spawnMcp, tempWorkspace } from '../support/qmd.js';
import { waitForExit } from '../support/spawn.js';
import { eventually, isAlive, serverLog, sharedServerPids, startClient } from './fixtures/shared.js';

const NOTES = { 'bread.md': '# Bread\n\nSourdough needs a starter, flour, water and salt.\n' };

/** Every process below `root`, by walking PPIDs in /proc: what opencode kills when it exits. */
function descendants(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
    } catch {
      // Gone meanwhile.
    }
  }
  const found: number[] = [];
  const walk = (pid: number): void => {
    for (const child of children.get(pid) ?? []) {
      found.push(child);
      walk(child);
    }
  };
  walk(root);
  return found;
}

function killQuietly(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // Gone already.
  }
}

function vmKb(pid: number, field: 'VmHWM' | 'VmRSS'): number {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(match?.[1]);
}

function sharedWorkspace(extra: Record<string, string> = {}) {
  const ws = tempWorkspace(NOTES);
  const runtime = mkdtempSync(join(tmpdir(), 'qmd-run-'));
  const env = qmdEnv(ws.index, {
    QMD_EMBED_MODEL: tinyModelPath(),
    QMD_EMBED_THREADS: '1',
    XDG_RUNTIME_DIR: runtime,
    QMD_SHARED_IDLE_MS: '2000',
    ...extra,
  });
  return {
    ws,
    env,
    paths: sharedPaths(ws.index, env),
    cleanup() {
      for (const pid of sharedServerPids(ws.index)) {
        killQuietly(pid, 'SIGCONT');
        killQuietly(pid, 'SIGKILL');
      }
      ws.cleanup();
      rmSync(runtime, { recursive: true, force: true });
    },
  };
}

async function query(client: Client): Promise<string> {
  const answer = await client.callTool({ name: 'query', arguments: { query: 'sourdough starter' } });
  return JSON.stringify(answer.content);
}

describe('the shared server belongs to no client', () => {
  const s = sharedWorkspace();
  beforeAll(async () => {
    expect((await runQmd(['collection', 'add', s.ws.notesDir, '--name', 'notes'], s.env)).code).toBe(0);
  });
  afterAll(() => s.cleanup());

  it('a client that kills every descendant it finds (PPID walk), and a group kill of another, leave it serving a third', async () => {
    const first = await startClient(s.ws.index, s.env, { detached: true });
    const witness = await startClient(s.ws.index, s.env);
    const grouped = await startClient(s.ws.index, s.env, { detached: true });
    try {
      const [server] = sharedServerPids(s.ws.index);
      expect(server).toBeDefined();
      expect(sharedServerPids(s.ws.index)).toEqual([server]);
      // The property itself: in no client's tree, group or session.
      for (const c of [first, witness, grouped]) expect(descendants(c.p.child.pid!)).not.toContain(server);
      const [, , , , pgrp, session] = readFileSync(`/proc/${server}/stat`, 'utf8')
        .slice(readFileSync(`/proc/${server}/stat`, 'utf8').lastIndexOf(')') + 2)
        .split(' ')
        .map(Number);
      for (const c of [first, grouped]) {
        expect(pgrp).not.toBe(c.p.child.pid);
        expect(session).not.toBe(c.p.child.pid);
      }
      expect(statSync(s.paths.record).mode & 0o777).toBe(0o600);
      expect(statSync(s.paths.socket).mode & 0o777).toBe(0o600);

      // opencode's exit: SIGTERM to every descendant it can find, then itself.
      const tree = descendants(first.p.child.pid!);
      expect(tree).toContain(first.relayPid);
      for (const pid of tree) killQuietly(pid, 'SIGTERM');
      first.p.child.kill('SIGTERM');
      await eventually(() => !isAlive(first.relayPid), 'the first relay gone');

      // A terminal's job control: the whole group of the other client.
      process.kill(-grouped.p.child.pid!, 'SIGTERM');
      await eventually(() => !isAlive(grouped.relayPid), 'the grouped relay gone');

      witness.order({ op: 'query', query: 'sourdough starter', tag: 'after' });
      const after = await witness.next((e) => e.tag === 'after');
      expect(after.event, JSON.stringify(after)).toBe('result');
      expect(after.text).toContain('bread.md');
      expect(sharedServerPids(s.ws.index)).toEqual([server]);
      expect(serverLog(s.ws.index, s.env)).not.toMatch(/Shutting down \(SIG/);
    } finally {
      for (const c of [first, witness, grouped]) c.p.kill();
    }
  });
});

describe('a relay never waits on a server that cannot serve', () => {
  it('a damaged index: the client gets the reason as an error, the relay exits non-zero within the bound + 1 s, and no record is left', async () => {
    const s = sharedWorkspace();
    try {
      writeFileSync(s.ws.index, Buffer.alloc(8192, 0x5a));
      for (const attempt of [1, 2]) {
        const started = performance.now();
        const relay = spawnMcp(s.env, ['--shared']);
        try {
          const client = new Client({ name: `damaged-${attempt}`, version: '1' });
          await expect(client.connect(new ChildTransport(relay.child))).rejects.toThrow(
            /the shared server could not start: The index .* is damaged \(SQLITE_NOTADB/,
          );
          const exit = await waitForExit(relay);
          const elapsed = performance.now() - started;
          expect(exit.code, relay.stderr()).toBe(1);
          // The promise: QMD_SHARED_CONNECT_MS (default 5000) + 1 s, not the client's 60 s timeout.
          expect(elapsed, `spawn → exit ${elapsed.toFixed(0)} ms`).toBeLessThan(5000 + 1000);
          expect(relay.stderr()).toContain('Shutting down (nothing can serve this client)...');
          expect(relay.stderr()).not.toContain('serving this client alone');
        } finally {
          relay.kill();
        }
        // Each relay's try is its own: the second one started a server again and read its failure.
        // (The server leaves the reason for the relays first, then prints it and exits.)
        await eventually(
          () => serverLog(s.ws.index, s.env).match(/is damaged \(SQLITE_NOTADB/g)?.length === attempt,
          `server ${attempt}'s reason in its log`,
        );
      }
      await eventually(() => sharedServerPids(s.ws.index).length === 0, 'the failed servers gone');
      expect(() => statSync(s.paths.record)).toThrow();
      expect(statSync(failurePath(s.paths)).mode & 0o777).toBe(0o600);
    } finally {
      s.cleanup();
    }
  });

  it('a stopped server (SIGSTOP): a new client is served alone after the bound, the server is marked hung, and once resumed it serves again', async () => {
    const BOUND_MS = 2000;
    const s = sharedWorkspace({ QMD_SHARED_CONNECT_MS: String(BOUND_MS) });
    try {
      expect((await runQmd(['collection', 'add', s.ws.notesDir, '--name', 'notes'], s.env)).code).toBe(0);
      const first = await startClient(s.ws.index, s.env);
      const [server] = sharedServerPids(s.ws.index);
      process.kill(server!, 'SIGSTOP');
      const started = performance.now();
      const relay = spawnMcp(s.env, ['--shared']);
      try {
        const transport = new ChildTransport(relay.child);
        const client = new Client({ name: 'after-stop', version: '1' });
        await client.connect(transport);
        const served = performance.now() - started;
        expect(await query(client)).toContain('bread.md');
        expect(relay.stderr()).toMatch(
          new RegExp(
            `shared server unavailable \\(.* did not answer within ${BOUND_MS} ms\\); serving this client alone`,
          ),
        );
        // The bound, plus what serving alone costs (a plain `qmd mcp` start): never the SDK's 60 s.
        expect(served, `spawn → initialize ${served.toFixed(0)} ms`).toBeLessThan(BOUND_MS + 5000);
        expect(readHung(s.paths)).toMatchObject({ pid: server, waitedMs: BOUND_MS });
        // qmd status says so: the control request gets no answer from a stopped server.
        const status = await runQmd(['status', '--json'], s.env);
        expect(JSON.parse(status.stdout).sharedServer, status.stderr).toMatchObject({
          running: false,
          hung: { pid: server },
        });
        await transport.close();
        expect(await waitForExit(relay)).toEqual({ code: 0, signal: null });
      } finally {
        relay.kill();
      }
      process.kill(server!, 'SIGCONT');
      const again = await startClient(s.ws.index, s.env);
      again.order({ op: 'query', query: 'sourdough', tag: 'resumed' });
      expect((await again.next((e) => e.tag === 'resumed')).text).toContain('bread.md');
      expect(again.events.some((e) => e.text?.includes('serving this client alone'))).toBe(false);
      expect(() => statSync(hungPath(s.paths))).toThrow();
      first.p.kill();
      again.p.kill();
    } finally {
      s.cleanup();
    }
  });
});

describe('a relay trusts nothing on its socket but JSON-RPC', () => {
  const s = sharedWorkspace();
  let fake: Server | undefined;
  beforeAll(async () => {
    expect((await runQmd(['collection', 'add', s.ws.notesDir, '--name', 'notes'], s.env)).code).toBe(0);
    mkdirSync(s.paths.dir, { recursive: true, mode: 0o700 });
  });
  afterAll(() => {
    fake?.close();
    s.cleanup();
  });

  function listen(onConnection: (socket: Socket) => void): Promise<void> {
    fake?.close();
    const server = createServer((socket) => {
      socket.on('error', () => {});
      onConnection(socket);
    });
    fake = server;
    const previous = process.umask(0o177);
    return new Promise<void>((resolve) => server.listen(s.paths.socket, () => resolve())).finally(() =>
      process.umask(previous),
    );
  }

  function initialize(id: number): string {
    return `${JSON.stringify({ jsonrpc: '2.0', id, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } })}\n`;
  }

  it('a listener that speaks garbage first is not a qmd server: the client is served alone, and its stdout holds JSON-RPC only', async () => {
    await listen((socket) => socket.write('garbage\nERROR: 4 lines\nnot json\n{"jsonrpc":"2.0","id":0,"result":{}}\n'));
    const relay = spawnMcp(s.env, ['--shared']);
    try {
      relay.child.stdin?.write(initialize(0));
      await relay.waitFor(() => (relay.stdout().includes('\n') ? true : undefined), 'the initialize reply');
      const lines = relay.stdout().trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(JSON.parse(lines[0]!)).toMatchObject({ jsonrpc: '2.0', id: 0, result: { serverInfo: expect.anything() } });
      expect(relay.stderr()).toMatch(/answered a line that is not a greeting .*; serving this client alone/);
      relay.child.stdin?.end();
      expect(await waitForExit(relay)).toEqual({ code: 0, signal: null });
    } finally {
      relay.kill();
    }
  });

  it('a listener that greets, then sends garbage and one endless line: nothing of it reaches stdout, and the relay stays under 200 MB', async () => {
    const ENDLESS_BYTES = 256 * 1024 * 1024;
    let sent = 0;
    await listen((socket) => {
      // As a real server started with this env greets: it names the model QMD_EMBED_MODEL gave
      // it, and this relay's own version (an older one would be asked to retire).
      socket.write(
        greetingLine({ pid: 1, index: s.ws.index, version: packageVersion(), model: s.env.QMD_EMBED_MODEL ?? null }),
      );
      let partial = '';
      socket.on('data', (chunk: Buffer) => {
        const parts = (partial + chunk.toString()).split('\n');
        partial = parts.pop() ?? '';
        for (const line of parts) {
          const { id } = JSON.parse(line) as { id: number };
          if (id === 0) {
            socket.write('garbage\nError: at Object.<anonymous>\n[1,2,3]\n{"not":"json-rpc"}\n');
            socket.write(`${JSON.stringify({ jsonrpc: '2.0', id: 0, result: { protocolVersion: '2025-06-18' } })}\n`);
          } else void endless(socket, id);
        }
      });
    });
    const endless = async (socket: Socket, id: number): Promise<void> => {
      const chunk = Buffer.alloc(1024 * 1024, 0x78);
      while (sent < ENDLESS_BYTES) {
        sent += chunk.length;
        if (!socket.write(chunk)) await new Promise((resolve) => socket.once('drain', resolve));
      }
      socket.write(`\n${JSON.stringify({ jsonrpc: '2.0', id, result: { after: 'the endless line' } })}\n`);
    };
    const relay = spawnMcp(s.env, ['--shared']);
    try {
      const pid = relay.child.pid!;
      relay.child.stdin?.write(initialize(0));
      await relay.waitFor(() => (relay.stdout().includes('"id":0') ? true : undefined), 'the initialize reply');
      relay.child.stdin?.write(`${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' })}\n`);
      await relay.waitFor(
        () => (relay.stdout().includes('"id":1') ? true : undefined),
        'the reply after the endless line',
        60_000,
      );
      const peakMb = vmKb(pid, 'VmHWM') / 1024;
      const lines = relay.stdout().trim().split('\n');
      expect(lines.map((l) => JSON.parse(l))).toEqual([
        { jsonrpc: '2.0', id: 0, result: { protocolVersion: '2025-06-18' } },
        { jsonrpc: '2.0', id: 1, result: { after: 'the endless line' } },
      ]);
      expect(sent).toBeGreaterThanOrEqual(ENDLESS_BYTES);
      // Unbounded, this line alone would be 256 MiB held, twice over once joined.
      expect(peakMb, `peak RSS ${peakMb.toFixed(0)} MB`).toBeLessThan(200);
      expect(relay.stderr()).toContain(
        `dropped a line of ${ENDLESS_BYTES} bytes from the shared server (the limit is 67108864)`,
      );
      expect(relay.stderr()).toContain('dropped a line that is not JSON-RPC (7 chars) from the shared server');
      relay.child.stdin?.end();
      expect(await waitForExit(relay)).toEqual({ code: 0, signal: null });
    } finally {
      relay.kill();
    }
  });
});
