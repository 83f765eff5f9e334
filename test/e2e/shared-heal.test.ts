/**
 * Sharing heals (docs/design.md §2.2), real processes under load: three clients (the SDK's
 * real `Client` over each relay) ask without pause while the shared server is SIGKILLed again
 * and again, or SIGSTOPped; relays that had to serve alone (their connect bound is short here,
 * so a loaded machine sends some of them there) keep trying to rejoin, and every relay ends on
 * one server; no client ever sees an error. Each wait is for an observable event (a line, a
 * status, an exit) with a generous bound; kill moments come from a seeded count of answers.
 */
import { rmSync, writeFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/client';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { sharedPaths } from '../../src/relay/paths.js';
import { ChildTransport } from '../support/child-transport.js';
import { qmdEnv, runQmd, spawnMcp, tempWorkspace, textOf } from '../support/qmd.js';
import { seededRandom } from '../support/seeded.js';
import { type Spawned, waitForExit } from '../support/spawn.js';
import { cleanPlace, eventually, isAlive, serverLog, sharedServerPids } from './fixtures/shared.js';

const NOTES: Record<string, string> = {
  'bread.md': '# Bread\n\nSourdough needs a starter, flour, water and salt. Bake it hot.\n',
  'server.md': '# Server\n\nA server must never outlive its client. Orphans hold RAM and the index.\n',
};
const SEED = Number(process.env.QMD_TEST_SEED ?? 44);

interface Connected {
  relay: Spawned;
  transport: ChildTransport;
  client: Client;
}

/** A client asking until told to stop: a query, a get, the status, in turn; every failure kept. */
function busy(c: Connected, errors: string[], onAnswer: () => void): { stop(): Promise<number> } {
  let going = true;
  const loop = (async () => {
    let n = 0;
    while (going) {
      try {
        const kind = n % 3;
        const result =
          kind === 0
            ? await c.client.callTool({ name: 'query', arguments: { query: 'sourdough' } }, { timeout: 120_000 })
            : kind === 1
              ? await c.client.callTool({ name: 'get', arguments: { file: 'notes/server.md' } }, { timeout: 120_000 })
              : await c.client.callTool({ name: 'status', arguments: {} }, { timeout: 120_000 });
        const expected = ['bread.md', 'Orphans', '2 documents'][kind]!;
        if (result.isError || !textOf(result).includes(expected)) errors.push(`request ${n}: ${textOf(result)}`);
      } catch (error) {
        errors.push(`request ${n}: ${(error as Error).message}`);
      }
      n++;
      onAnswer();
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

const ws = tempWorkspace(NOTES);
let env: NodeJS.ProcessEnv;
const open: Connected[] = [];
beforeAll(async () => {
  env = qmdEnv(ws.index, {
    QMD_SHARED_IDLE_MS: '60000',
    // Short, so that a loaded machine sends some relays to serve alone: they must come back.
    QMD_SHARED_CONNECT_MS: '1500',
    QMD_SHARED_REJOIN_MS: '200',
    QMD_SHARED_SILENCE_MS: '500',
    QMD_SHARED_PLACE_CHECK_MS: '200',
  });
  expect((await runQmd(['collection', 'add', ws.notesDir, '--name', 'notes'], env)).code).toBe(0);
});
afterEach(async () => {
  for (const c of open.splice(0)) c.relay.kill();
  for (const pid of sharedServerPids(ws.index)) {
    process.kill(pid, 'SIGCONT');
    process.kill(pid, 'SIGKILL');
  }
  await eventually(() => sharedServerPids(ws.index).length === 0, 'no server left');
});
afterAll(() => {
  cleanPlace(ws.index);
  ws.cleanup();
});

async function connect(extra: NodeJS.ProcessEnv = {}): Promise<Connected> {
  const relay = spawnMcp({ ...env, ...extra }, ['--shared']);
  const transport = new ChildTransport(relay.child);
  const client = new Client({ name: 'heal-test', version: '1' });
  await client.connect(transport);
  const c = { relay, transport, client };
  open.push(c);
  return c;
}

const statusOf = async () =>
  JSON.parse((await runQmd(['status', '--json'], env)).stdout).sharedServer as {
    running: boolean;
    pid: number;
    sessions: number;
  };

/** Every relay on one server: one server process, and it counts all of them live (bounded, as every wait). */
async function allOnOneServer(relays: number, what: string, stopped?: number, ms = 120_000): Promise<number> {
  const deadline = performance.now() + ms;
  const serving = () => sharedServerPids(ws.index).filter((pid) => pid !== stopped);
  await eventually(() => serving().length === 1, `${what}: one server`, ms);
  for (;;) {
    const status = await statusOf();
    if (status.running && status.sessions === relays && serving().length === 1) return status.pid;
    if (performance.now() > deadline) throw new Error(`${what}: not within ${ms} ms: ${JSON.stringify(status)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('sharing heals', () => {
  it('relays that started alone rejoin one server once one can be had, and their clients see no error', async () => {
    // Something that is no socket holds the server's path: every relay refuses it and serves alone.
    const { socket } = sharedPaths(ws.index);
    writeFileSync(socket, '', { mode: 0o600 });
    const clients = [];
    for (let i = 0; i < 3; i++) clients.push(await connect());
    for (const c of clients) await c.relay.waitForStderr(`${socket} is not a socket); serving this client alone`);
    rmSync(socket);
    const errors: string[] = [];
    const loops = clients.map((c) => busy(c, errors, () => {}));
    const server = await allOnOneServer(3, 'after the rejoin');
    for (const c of clients) await c.relay.waitForStderr(`rejoined the shared server (pid ${server})`, 60_000);
    const asked = await Promise.all(loops.map((l) => l.stop()));
    expect(errors).toEqual([]);
    expect(asked.every((n) => n > 0)).toBe(true);
    for (const c of clients) {
      await c.transport.close();
      expect(await waitForExit(c.relay)).toEqual({ code: 0, signal: null });
    }
  }, 240_000);

  it(`the server SIGKILLed 5 times under three busy clients (seed ${SEED}): every relay back on one server, no error`, async () => {
    const next = seededRandom(SEED);
    const clients = [];
    for (let i = 0; i < 3; i++) clients.push(await connect());
    const errors: string[] = [];
    const killed: number[] = [];
    let answered = 0;
    let killAt = 3 + Math.floor(next() * 10);
    const onAnswer = (): void => {
      answered++;
      if (killed.length >= 5 || answered < killAt) return;
      const [server] = sharedServerPids(ws.index);
      if (server === undefined || !serverLog(ws.index, env).includes(`(pid ${server})`)) return;
      process.kill(server, 'SIGKILL');
      killed.push(server);
      killAt = answered + 3 + Math.floor(next() * 10);
    };
    const loops = clients.map((c) => busy(c, errors, onAnswer));
    await eventually(() => killed.length === 5, 'five kills', 120_000);
    await allOnOneServer(3, 'after the kills');
    const asked = await Promise.all(loops.map((l) => l.stop()));
    expect(errors).toEqual([]);
    expect(asked.every((n) => n > 0)).toBe(true);
    for (const c of clients) {
      await c.transport.close();
      expect(await waitForExit(c.relay)).toEqual({ code: 0, signal: null });
    }
  }, 240_000);

  it('a server SIGSTOPped under three busy clients: they are served elsewhere with a line, end on its successor, and it leaves once resumed', async () => {
    const clients = [];
    for (let i = 0; i < 3; i++) clients.push(await connect());
    const [stopped] = sharedServerPids(ws.index);
    expect(stopped).toBeDefined();
    const errors: string[] = [];
    let answered = 0;
    const loops = clients.map((c) => busy(c, errors, () => answered++));
    await eventually(() => answered >= 6, 'answers before the stop');
    process.kill(stopped!, 'SIGSTOP');
    const before = answered;
    // Each relay notices (it has a reply owed: its client is busy) and says so.
    for (const c of clients)
      await c.relay.waitForStderr(
        new RegExp(`the shared server \\(pid ${stopped}\\) has said nothing for 500 ms`),
        60_000,
      );
    await eventually(() => answered >= before + 6, 'answers while it is stopped', 60_000);
    // The stopped one is still there (stopped): every relay on the one other server.
    const successor = await allOnOneServer(3, 'on the successor', stopped);
    expect(successor).not.toBe(stopped);
    // Resumed, it finds its place taken, retires, and leaves: its clients have all gone.
    process.kill(stopped!, 'SIGCONT');
    await eventually(() => !isAlive(stopped!), 'the stopped server gone once resumed', 60_000);
    expect(serverLog(ws.index, env)).toContain('another shared server took');
    const asked = await Promise.all(loops.map((l) => l.stop()));
    expect(errors).toEqual([]);
    expect(asked.every((n) => n > 0)).toBe(true);
    expect((await statusOf()).pid).toBe(successor);
    for (const c of clients) {
      await c.transport.close();
      expect(await waitForExit(c.relay)).toEqual({ code: 0, signal: null });
    }
  }, 240_000);
});
