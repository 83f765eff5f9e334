/**
 * Replacing a shared server, with real processes and the SDK's real `Client` over each relay:
 * a relay of a newer qmd finding an older server (an upgrade while clients are connected), and
 * `qmd mcp stop --shared [--all]` with clients connected. One build plays both versions through
 * `QMD_TEST_VERSION` (read only by tests; the relay gives its environment to the server it
 * starts, so each server runs its relay's version). docs/design.md §2.2.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { sharedPaths } from '../../src/relay/paths.js';
import { ChildTransport } from '../support/child-transport.js';
import { qmdEnv, runQmd, spawnMcp, tempWorkspace, textOf } from '../support/qmd.js';
import { type Spawned, waitForExit } from '../support/spawn.js';
import { cleanPlace, eventually, isAlive, serverLog, sharedServerPids } from './fixtures/shared.js';

const NOTES: Record<string, string> = {
  'bread.md': '# Bread\n\nSourdough needs a starter, flour, water and salt. Bake it hot.\n',
  'server.md': '# Server\n\nA server must never outlive its client. Orphans hold RAM and the index.\n',
};

interface Connected {
  relay: Spawned;
  transport: ChildTransport;
  client: Client;
}

async function connect(env: NodeJS.ProcessEnv): Promise<Connected> {
  const relay = spawnMcp(env, ['--shared']);
  const transport = new ChildTransport(relay.child);
  const client = new Client({ name: 'upgrade-test', version: '1' });
  await client.connect(transport);
  return { relay, transport, client };
}

/**
 * A client that keeps asking until told to stop: a query, a get, the status, in turn; every
 * failure or wrong answer is kept. Resolves to how many it asked.
 */
function busy(c: Connected, errors: string[]): { stop(): Promise<number> } {
  let going = true;
  const loop = (async () => {
    let n = 0;
    while (going) {
      try {
        const kind = n % 3;
        const result =
          kind === 0
            ? await c.client.callTool({ name: 'query', arguments: { query: 'sourdough' } })
            : kind === 1
              ? await c.client.callTool({ name: 'get', arguments: { file: 'notes/server.md' } })
              : await c.client.callTool({ name: 'status', arguments: {} });
        const expected = ['bread.md', 'Orphans', '2 documents'][kind]!;
        if (result.isError || !textOf(result).includes(expected)) errors.push(`request ${n}: ${textOf(result)}`);
      } catch (error) {
        errors.push(`request ${n}: ${(error as Error).message}`);
      }
      n++;
    }
    return n;
  })();
  return {
    stop: async () => {
      going = false;
      return loop;
    },
  };
}

describe('replacing the shared server under its clients', () => {
  const ws = tempWorkspace(NOTES);
  const runtime = mkdtempSync(join(tmpdir(), 'qmd-run-'));
  let base: NodeJS.ProcessEnv;
  const relays: Spawned[] = [];
  beforeAll(async () => {
    base = qmdEnv(ws.index, { XDG_RUNTIME_DIR: runtime, QMD_SHARED_IDLE_MS: '60000' });
    expect((await runQmd(['collection', 'add', ws.notesDir, '--name', 'notes'], base)).code).toBe(0);
  });
  afterEach(async () => {
    for (const relay of relays.splice(0)) relay.kill();
    for (const pid of sharedServerPids(ws.index)) process.kill(pid, 'SIGKILL');
    await eventually(() => sharedServerPids(ws.index).length === 0, 'no server left');
  });
  afterAll(() => {
    cleanPlace(ws.index);
    ws.cleanup();
    rmSync(runtime, { recursive: true, force: true });
  });
  const start = async (env: NodeJS.ProcessEnv): Promise<Connected> => {
    const c = await connect(env);
    relays.push(c.relay);
    return c;
  };
  const status = async (env: NodeJS.ProcessEnv) =>
    JSON.parse((await runQmd(['status', '--json'], env)).stdout).sharedServer as Record<string, unknown>;

  it('a relay of a newer qmd replaces an older server: the old clients carry on with it until they leave, the new one gets a new server, and nobody sees an error', async () => {
    const old = { ...base, QMD_TEST_VERSION: '0.1.0' };
    const newer = { ...base, QMD_TEST_VERSION: '0.2.0' };
    const a = await start(old);
    const b = await start(old);
    const [first] = sharedServerPids(ws.index);
    expect(first).toBeDefined();
    expect(await status(old)).toMatchObject({ running: true, pid: first, version: '0.1.0', sessions: 2 });

    const errors: string[] = [];
    const loops = [busy(a, errors), busy(b, errors)];
    // The upgrade arrives while the old clients are asking.
    const c = await start(newer);
    const answer = await c.client.callTool({ name: 'query', arguments: { query: 'orphans' } });
    expect(textOf(answer)).toContain('server.md');
    await c.relay.waitForStderr(
      `the shared server (pid ${first}) is qmd 0.1.0: starting one of qmd 0.2.0; the old one leaves once its 2 client(s) have`,
    );
    const servers = sharedServerPids(ws.index);
    expect(servers).toHaveLength(2);
    const second = servers.find((pid) => pid !== first)!;
    // qmd status and stop find the new one; the old one serves only the clients it had.
    expect(await status(newer)).toMatchObject({ running: true, pid: second, version: '0.2.0', sessions: 1 });
    // …and the retiring one too, saying which is which (it answers on a socket of its own).
    const listed = (await runQmd(['status'], newer)).stdout;
    expect(listed).toMatch(new RegExp(`^Shared server: pid ${second}, up \\d+ s, 1 session\\(s\\) live`, 'm'));
    expect(listed).toMatch(
      new RegExp(
        `^Retiring shared server: pid ${first} \\(qmd 0\\.1\\.0, replaced by qmd 0\\.2\\.0\\), up \\d+ s, 2 session\\(s\\) live; it leaves when they end \\(qmd mcp stop --shared --all ends it now\\)$`,
        'm',
      ),
    );
    const roles = JSON.parse((await runQmd(['status', '--json'], newer)).stdout).sharedServer.servers as Array<{
      role: string;
      pid: number;
    }>;
    expect(roles.map((s) => [s.role, s.pid]).sort()).toEqual([
      ['retiring', first],
      ['shared', second],
    ]);
    expect(serverLog(ws.index, base)).toContain(
      'qmd 0.2.0 replaces this server (qmd 0.1.0): no new sessions; leaving when the last of 2 ends',
    );
    // A client of the old version arriving now uses the newer server: nothing is replaced.
    const late = await start(old);
    expect(textOf(await late.client.callTool({ name: 'status', arguments: {} }))).toContain('2 documents');
    expect(await status(newer)).toMatchObject({ pid: second, sessions: 2 });

    const asked = await Promise.all(loops.map((l) => l.stop()));
    expect(errors).toEqual([]);
    expect(asked.every((n) => n > 0)).toBe(true);
    // The old clients leave; then the old server, through its teardown.
    await a.transport.close();
    await b.transport.close();
    expect(await waitForExit(a.relay)).toEqual({ code: 0, signal: null });
    expect(await waitForExit(b.relay)).toEqual({ code: 0, signal: null });
    await eventually(() => !isAlive(first!), 'the old server gone');
    expect(serverLog(ws.index, base)).toMatch(
      /Shutdown complete in [\d.]+ ms: replaced by qmd 0\.2\.0: 2 session\(s\) served, drained, all steps ok, exit 0/,
    );
    // It left the socket and the record to its successor, which still serves.
    const paths = sharedPaths(ws.index, base);
    expect(existsSync(paths.socket)).toBe(true);
    expect(JSON.parse(readFileSync(paths.record, 'utf8')).pid).toBe(second);
    expect(textOf(await c.client.callTool({ name: 'query', arguments: { query: 'sourdough' } }))).toContain('bread.md');
    expect(sharedServerPids(ws.index)).toEqual([second]);
    for (const { transport, relay } of [c, late]) {
      await transport.close();
      expect(await waitForExit(relay)).toEqual({ code: 0, signal: null });
    }
  });

  it('qmd mcp stop --shared names a retiring server and leaves it to its clients; --all ends it and its relays too', async () => {
    const old = { ...base, QMD_TEST_VERSION: '0.1.0' };
    const newer = { ...base, QMD_TEST_VERSION: '0.2.0' };
    const a = await start(old);
    const [first] = sharedServerPids(ws.index);
    const b = await start(newer);
    await b.relay.waitForStderr(`the shared server (pid ${first}) is qmd 0.1.0: starting one of qmd 0.2.0`);
    const second = sharedServerPids(ws.index).find((pid) => pid !== first)!;
    const stopped = await runQmd(['mcp', 'stop', '--shared'], newer);
    expect(stopped.code, stopped.stderr).toBe(0);
    expect(stopped.stdout.trim().split('\n')).toEqual([
      `Stopped the shared server (pid ${second}): it ran its teardown and exited; its 1 connected client carried on: their relays start a new server at once (--all ends them too)`,
      `The retiring shared server (pid ${first}, qmd 0.1.0) still serves 1 client(s) and leaves when they do (qmd mcp stop --shared --all ends it now)`,
    ]);
    // b's relay started a third server; --all reaches it and the retiring one, and both relays end.
    expect(textOf(await b.client.callTool({ name: 'status', arguments: {} }))).toContain('2 documents');
    const third = sharedServerPids(ws.index).find((pid) => pid !== first)!;
    const all = await runQmd(['mcp', 'stop', '--shared', '--all'], newer);
    expect(all.code, all.stderr).toBe(0);
    expect(all.stdout.trim().split('\n').sort()).toEqual(
      [
        `Stopped the shared server (pid ${third}): it ran its teardown and exited; the relays of its 1 connected client ended with it`,
        `Stopped the retiring shared server (pid ${first}, qmd 0.1.0): it ran its teardown and exited; the relays of its 1 connected client ended with it`,
      ].sort(),
    );
    for (const c of [a, b]) expect(await waitForExit(c.relay)).toEqual({ code: 0, signal: null });
    expect(sharedServerPids(ws.index)).toEqual([]);
  });

  it('a server is never replaced by a relay of the same or an older qmd', async () => {
    const a = await start({ ...base, QMD_TEST_VERSION: '0.3.0' });
    const [server] = sharedServerPids(ws.index);
    for (const version of ['0.3.0', '0.2.9', 'not-a-version']) {
      const b = await start({ ...base, QMD_TEST_VERSION: version });
      expect(textOf(await b.client.callTool({ name: 'status', arguments: {} }))).toContain('2 documents');
      expect(sharedServerPids(ws.index)).toEqual([server]);
      await b.transport.close();
      expect(await waitForExit(b.relay)).toEqual({ code: 0, signal: null });
      expect(b.relay.stderr()).not.toMatch(/starting one of qmd/);
    }
    await a.transport.close();
  });

  it('qmd mcp stop --shared with clients connected says how many, and their relays carry on with a new server', async () => {
    const a = await start(base);
    const b = await start(base);
    const [first] = sharedServerPids(ws.index);
    const stopped = await runQmd(['mcp', 'stop', '--shared'], base);
    expect(stopped.code, stopped.stderr).toBe(0);
    expect(stopped.stdout.trim()).toBe(
      `Stopped the shared server (pid ${first}): it ran its teardown and exited; its 2 connected clients carried on: their relays start a new server at once (--all ends them too)`,
    );
    for (const c of [a, b]) {
      const answer = await c.client.callTool({ name: 'query', arguments: { query: 'sourdough' } });
      expect(answer.isError).not.toBe(true);
      expect(textOf(answer)).toContain('bread.md');
    }
    const now = sharedServerPids(ws.index);
    expect(now).toHaveLength(1);
    expect(now[0]).not.toBe(first);
    for (const c of [a, b]) {
      await c.transport.close();
      expect(await waitForExit(c.relay)).toEqual({ code: 0, signal: null });
    }
  });

  it('qmd mcp stop --shared --all ends the relays with the server: they exit 0 and start nothing', async () => {
    const a = await start(base);
    const b = await start(base);
    const [server] = sharedServerPids(ws.index);
    const stopped = await runQmd(['mcp', 'stop', '--shared', '--all'], base);
    expect(stopped.code, stopped.stderr).toBe(0);
    expect(stopped.stdout.trim()).toBe(
      `Stopped the shared server (pid ${server}): it ran its teardown and exited; the relays of its 2 connected clients ended with it`,
    );
    for (const c of [a, b]) {
      expect(await waitForExit(c.relay)).toEqual({ code: 0, signal: null });
      expect(c.relay.stderr()).toContain('Shutting down (the shared server was stopped with its clients)...');
    }
    expect(serverLog(ws.index, base)).toContain('Shutting down (qmd mcp stop --all)...');
    expect(sharedServerPids(ws.index)).toEqual([]);
    // With no client, it says so; --all without --shared is refused.
    const none = await runQmd(['mcp', 'stop', '--all'], base);
    expect(none.code).toBe(1);
    expect(none.stderr.trim()).toBe('qmd: --all ends the clients of the shared server: use it with --shared');
    const c = await start(base);
    const [alone] = sharedServerPids(ws.index);
    await c.transport.close();
    expect(await waitForExit(c.relay)).toEqual({ code: 0, signal: null });
    // Its session is done once its teardown is (status counts it live until then).
    for (let tries = 0; (await status(base)).sessions !== 0; tries++) expect(tries).toBeLessThan(100);
    const idle = await runQmd(['mcp', 'stop', '--shared'], base);
    expect(idle.stdout.trim()).toBe(
      `Stopped the shared server (pid ${alone}): it ran its teardown and exited; no client was connected`,
    );
  });
});
