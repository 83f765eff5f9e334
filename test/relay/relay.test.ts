/**
 * The relay's pump, in process: a client on PassThrough pipes, upstreams the test plays the
 * server on, the real gate. What a client could observe (lines on its stdout, in order) and
 * what the lifecycle relies on (the gate's count) are checked; nothing is mocked.
 */
import { Duplex, PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createInflightGate } from '../../src/lifecycle/gate.js';
import { createRelay, type Upstream } from '../../src/relay/relay.js';
import { deferred } from '../support/deferred.js';
import { flush } from '../support/fake-clock.js';
import { recordingLog } from '../support/recording-log.js';

/** One upstream as the server sees it: what the relay wrote, and a way to answer. */
function fakeServer() {
  const toServer = new PassThrough();
  const fromServer = new PassThrough();
  const received: string[] = [];
  let partial = '';
  toServer.on('data', (chunk: Buffer) => {
    const parts = (partial + chunk.toString()).split('\n');
    partial = parts.pop() ?? '';
    received.push(...parts);
  });
  let ended = false;
  toServer.on('end', () => {
    ended = true;
  });
  const stream = Duplex.from({ writable: toServer, readable: fromServer });
  let released = 0;
  const upstream: Upstream = {
    stream,
    kind: 'shared',
    release: async () => {
      released++;
      stream.destroy();
    },
  };
  return {
    upstream,
    received,
    answer: (message: object) => fromServer.write(`${JSON.stringify(message)}\n`),
    /** Raw bytes, as whatever holds the socket may send them. */
    send: (text: string) => fromServer.write(text),
    ended: () => ended,
    released: () => released,
    /** The server dies: its end of the connection closes. */
    die: () => stream.destroy(),
  };
}

function setup(servers: Array<ReturnType<typeof fakeServer>>) {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  const lines: string[] = [];
  let partial = '';
  stdout.on('data', (chunk: Buffer) => {
    const parts = (partial + chunk.toString()).split('\n');
    partial = parts.pop() ?? '';
    lines.push(...parts);
  });
  const gate = createInflightGate();
  const log = recordingLog();
  const opens: Array<ReturnType<typeof deferred<Upstream | null>>> = [];
  const failures: string[] = [];
  const stops: string[] = [];
  const relay = createRelay({
    stdin,
    stdout,
    gate,
    log,
    maxLineBytes: 1000,
    maxServerLineBytes: 1000,
    onFailed: (reason) => failures.push(reason),
    onStopped: (reason) => stops.push(reason),
    open: () => {
      const next = servers[opens.length];
      const d = deferred<Upstream | null>();
      opens.push(d);
      if (next) d.resolve(next.upstream);
      return d.promise;
    },
  });
  relay.start();
  const send = (message: object | string) =>
    stdin.write(`${typeof message === 'string' ? message : JSON.stringify(message)}\n`);
  return {
    relay,
    gate,
    lines,
    parsed: () => lines.map((l) => JSON.parse(l)),
    warnings: log.warnings,
    send,
    opens,
    failures,
    stops,
  };
}

const initialize = { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18' } };
const initialized = { jsonrpc: '2.0', method: 'notifications/initialized' };
const call = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'query' } });

describe('the relay', () => {
  it('forwards both ways as it came, and counts each request until its reply reaches the client', async () => {
    const server = fakeServer();
    const r = setup([server]);
    r.send(initialize);
    r.send(initialized);
    r.send(call(1));
    await flush();
    expect(server.received.map((l) => JSON.parse(l).method)).toEqual([
      'initialize',
      'notifications/initialized',
      'tools/call',
    ]);
    expect(r.gate.size).toBe(2);
    server.answer({ jsonrpc: '2.0', id: 0, result: { protocolVersion: '2025-06-18' } });
    await flush();
    expect(r.gate.size).toBe(1);
    // A server-initiated notification passes through untouched and settles nothing.
    server.answer({ jsonrpc: '2.0', method: 'notifications/message', params: { data: 'x' } });
    await flush();
    expect(r.gate.size).toBe(1);
    server.answer({ jsonrpc: '2.0', id: 1, result: { content: [] } });
    await flush();
    expect(r.gate.size).toBe(0);
    expect(r.parsed().map((m) => m.id ?? m.method)).toEqual([0, 'notifications/message', 1]);
  });

  it('a cancelled request counts as answered: the SDK never answers one', async () => {
    const server = fakeServer();
    const r = setup([server]);
    r.send(call(7));
    await flush();
    expect(r.gate.size).toBe(1);
    r.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 7 } });
    await flush();
    expect(r.gate.size).toBe(0);
    expect(server.received).toHaveLength(2);
  });

  it('lines read while still connecting wait, in order, for the upstream', async () => {
    const server = fakeServer();
    const r = setup([]);
    r.send(initialize);
    r.send(call(1));
    await flush();
    expect(server.received).toEqual([]);
    r.opens[0]!.resolve(server.upstream);
    await flush();
    expect(server.received.map((l) => JSON.parse(l).id)).toEqual([0, 1]);
  });

  it('close() stops reading the client and half-closes; replies still come; the release settles the rest', async () => {
    const server = fakeServer();
    const r = setup([server]);
    r.send(call(1));
    r.send(call(2));
    await flush();
    await r.relay.close();
    await flush();
    expect(server.ended()).toBe(true);
    r.send(call(3));
    await flush();
    expect(server.received.map((l) => JSON.parse(l).id)).toEqual([1, 2]);
    server.answer({ jsonrpc: '2.0', id: 1, result: {} });
    await flush();
    expect(r.parsed().map((m) => m.id)).toEqual([1]);
    expect(r.gate.size).toBe(1);
    await r.relay.release();
    expect(server.released()).toBe(1);
    expect(r.gate.size).toBe(0);
  });

  it('close() before the server is connected, with requests read: they are still delivered and answered, then the half-close', async () => {
    const server = fakeServer();
    const r = setup([]);
    r.send(initialize);
    r.send(call(1));
    await flush();
    await r.relay.close();
    expect(r.gate.size).toBe(2);
    r.opens[0]!.resolve(server.upstream);
    await flush();
    expect(server.received.map((l) => JSON.parse(l).id)).toEqual([0, 1]);
    expect(server.ended()).toBe(true);
    server.answer({ jsonrpc: '2.0', id: 0, result: { protocolVersion: '2025-06-18' } });
    server.answer({ jsonrpc: '2.0', id: 1, result: { content: [] } });
    await flush();
    expect(r.parsed().map((m) => m.id)).toEqual([0, 1]);
    expect(r.gate.size).toBe(0);
    expect(server.released()).toBe(0);
  });

  it('a server that goes away: what it never answered is sent again to the next one, after the opening (its reply swallowed), under the same ids', async () => {
    const first = fakeServer();
    const second = fakeServer();
    const r = setup([first, second]);
    r.send(initialize);
    r.send(initialized);
    await flush();
    first.answer({ jsonrpc: '2.0', id: 0, result: { protocolVersion: '2025-06-18' } });
    r.send(call(1));
    r.send({ jsonrpc: '2.0', id: 2, method: 'resources/read', params: { uri: 'qmd://notes/a.md' } });
    r.send({ jsonrpc: '2.0', id: 3, method: 'ping' });
    await flush();
    first.answer({ jsonrpc: '2.0', id: 2, result: { contents: [] } });
    await flush();
    // Requests 1 and 3 were written to it and never answered.
    first.die();
    await flush();
    // No error reaches the client: the gate still counts both.
    expect(r.parsed().map((m) => m.id)).toEqual([0, 2]);
    expect(r.gate.size).toBe(2);
    expect(r.warnings).toEqual(['the shared server went away; connecting to a new one (2 request(s) to send again)']);
    // The new server is opened as the client opened the first, under an id of the relay's, then
    // sent what the first owed, in the client's order, as the client wrote it.
    expect(second.received.map((l) => JSON.parse(l))).toEqual([
      { ...initialize, id: 'qmd-relay-replay-1' },
      initialized,
      call(1),
      { jsonrpc: '2.0', id: 3, method: 'ping' },
    ]);
    second.answer({ jsonrpc: '2.0', id: 'qmd-relay-replay-1', result: { protocolVersion: '2025-06-18' } });
    second.answer({ jsonrpc: '2.0', id: 3, result: {} });
    second.answer({ jsonrpc: '2.0', id: 1, result: { content: [] } });
    r.send(call(4));
    await flush();
    second.answer({ jsonrpc: '2.0', id: 4, result: { ok: true } });
    await flush();
    // One initialize reply (the first server's), then each of its own replies once.
    expect(r.parsed().map((m) => m.id)).toEqual([0, 2, 3, 1, 4]);
    expect(r.parsed().filter((m) => m.error !== undefined)).toEqual([]);
    expect(r.gate.size).toBe(0);
    expect(r.relay.connections).toBe(2);
  });

  it('a request that is not safe to send twice gets an error; the read-only ones around it are sent again', async () => {
    const first = fakeServer();
    const second = fakeServer();
    const r = setup([first, second]);
    r.send(initialize);
    await flush();
    first.answer({ jsonrpc: '2.0', id: 0, result: { protocolVersion: '2025-06-18' } });
    r.send(call(1));
    r.send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'delete_note' } });
    r.send({ jsonrpc: '2.0', id: 3, method: 'tasks/cancel', params: {} });
    r.send({ jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'status' } });
    await flush();
    first.die();
    await flush();
    expect(r.parsed().slice(1)).toEqual([
      {
        jsonrpc: '2.0',
        id: 2,
        error: {
          code: -32000,
          message:
            'qmd: the shared server went away before answering tools/call, which is not safe to send twice; please retry',
        },
      },
      {
        jsonrpc: '2.0',
        id: 3,
        error: {
          code: -32000,
          message:
            'qmd: the shared server went away before answering tasks/cancel, which is not safe to send twice; please retry',
        },
      },
    ]);
    expect(second.received.map((l) => JSON.parse(l).id)).toEqual(['qmd-relay-replay-1', 1, 4]);
    expect(r.gate.size).toBe(2);
  });

  it("the opening itself unanswered: it is sent again under the client's id, and no second one is made up", async () => {
    const first = fakeServer();
    const second = fakeServer();
    const r = setup([first, second]);
    r.send(initialize);
    await flush();
    first.die();
    await flush();
    expect(second.received.map((l) => JSON.parse(l))).toEqual([initialize]);
    second.answer({ jsonrpc: '2.0', id: 0, result: { protocolVersion: '2025-06-18' } });
    await flush();
    expect(r.parsed()).toEqual([{ jsonrpc: '2.0', id: 0, result: { protocolVersion: '2025-06-18' } }]);
    expect(r.gate.size).toBe(0);
  });

  it('requests read while the new server is coming wait behind those sent again; one cancelled meanwhile is not sent', async () => {
    const first = fakeServer();
    const second = fakeServer();
    const r = setup([first]);
    r.send(initialize);
    await flush();
    first.answer({ jsonrpc: '2.0', id: 0, result: { protocolVersion: '2025-06-18' } });
    r.send(call(1));
    r.send(call(2));
    await flush();
    first.die();
    await flush();
    r.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 2 } });
    r.send(call(3));
    await flush();
    expect(r.gate.size).toBe(2);
    r.opens[1]!.resolve(second.upstream);
    await flush();
    expect(second.received.map((l) => JSON.parse(l).id ?? JSON.parse(l).method)).toEqual([
      'qmd-relay-replay-1',
      1,
      'notifications/cancelled',
      3,
    ]);
  });

  it('servers that keep dying under one request: sent three times in all, then an error', async () => {
    const servers = [fakeServer(), fakeServer(), fakeServer(), fakeServer()];
    const r = setup(servers);
    r.send(initialize);
    await flush();
    servers[0]!.answer({ jsonrpc: '2.0', id: 0, result: { protocolVersion: '2025-06-18' } });
    r.send(call(1));
    await flush();
    for (const server of servers.slice(0, 3)) {
      expect(server.received.map((l) => JSON.parse(l).id)).toContain(1);
      server.die();
      await flush();
    }
    expect(r.parsed().at(-1)).toEqual({
      jsonrpc: '2.0',
      id: 1,
      error: {
        code: -32000,
        message: 'qmd: the shared server went away 3 times while answering this request; not sent again',
      },
    });
    expect(r.gate.size).toBe(0);
    // The client is still served: the fourth server gets the opening and nothing else yet.
    expect(servers[3]!.received.map((l) => JSON.parse(l).id)).toEqual(['qmd-relay-replay-3']);
  });

  it('closing, with a reply owed, when the server goes away: the request is still delivered by a new one, then the half-close', async () => {
    const first = fakeServer();
    const second = fakeServer();
    const r = setup([first, second]);
    r.send(initialize);
    await flush();
    first.answer({ jsonrpc: '2.0', id: 0, result: { protocolVersion: '2025-06-18' } });
    r.send(call(1));
    await flush();
    await r.relay.close();
    first.die();
    await flush();
    expect(second.received.map((l) => JSON.parse(l).id)).toEqual(['qmd-relay-replay-1', 1]);
    expect(second.ended()).toBe(true);
    second.answer({ jsonrpc: '2.0', id: 1, result: { content: [] } });
    await flush();
    expect(r.parsed().map((m) => m.id)).toEqual([0, 1]);
    expect(r.gate.size).toBe(0);
  });

  it('a server stopped with its clients says so: the relay ends, answers what is left with the reason, and starts no server', async () => {
    const first = fakeServer();
    const r = setup([first, fakeServer()]);
    r.send(initialize);
    await flush();
    first.answer({ jsonrpc: '2.0', id: 0, result: { protocolVersion: '2025-06-18' } });
    r.send(call(1));
    r.send(call(2));
    await flush();
    first.send('{"qmd":"relay","op":"exit","reason":"the shared server was stopped with its clients"}\n');
    first.answer({ jsonrpc: '2.0', id: 1, result: { content: [] } });
    await flush();
    expect(r.stops).toEqual(['the shared server was stopped with its clients']);
    first.die();
    await flush();
    // The notice never reaches the client; request 2 gets the reason; no second server is opened.
    expect(r.parsed()).toEqual([
      { jsonrpc: '2.0', id: 0, result: { protocolVersion: '2025-06-18' } },
      { jsonrpc: '2.0', id: 1, result: { content: [] } },
      {
        jsonrpc: '2.0',
        id: 2,
        error: { code: -32000, message: 'qmd: the shared server was stopped with its clients' },
      },
    ]);
    expect(r.opens).toHaveLength(1);
    expect(r.gate.size).toBe(0);
  });

  it('a line over the limit is refused with a JSON-RPC error and never forwarded', async () => {
    const server = fakeServer();
    const r = setup([server]);
    r.send(`{"pad":"${'x'.repeat(2000)}"}`);
    r.send(call(1));
    await flush();
    expect(r.parsed()[0]).toMatchObject({ id: null, error: { code: -32600 } });
    expect(server.received.map((l) => JSON.parse(l).id)).toEqual([1]);
    expect(r.warnings[0]).toMatch(/refused a request of \d+ bytes/);
  });

  it('escalation (the gate aborted) stops waiting for replies', async () => {
    const server = fakeServer();
    const r = setup([server]);
    r.send(call(1));
    await flush();
    expect(r.gate.size).toBe(1);
    r.gate.abortAll();
    await flush();
    expect(r.gate.size).toBe(0);
  });

  it('only JSON-RPC from the server reaches the client: garbage and lines over the cap are dropped, with warnings', async () => {
    const server = fakeServer();
    const r = setup([server]);
    r.send(call(1));
    await flush();
    server.send(`{"jsonrpc":"2.0","id":1,"result":{"pad":"${'x'.repeat(600)}`);
    server.send(`${'x'.repeat(600)}"}}\n`);
    server.send('garbage\n[1,2]\n{"no":"jsonrpc"}\n{"jsonrpc":"1.0"}\n');
    server.answer({ jsonrpc: '2.0', id: 1, result: { ok: true } });
    await flush();
    expect(r.lines).toEqual(['{"jsonrpc":"2.0","id":1,"result":{"ok":true}}']);
    expect(r.gate.size).toBe(0);
    expect(r.warnings).toEqual([
      'dropped a line of 1244 bytes from the shared server (the limit is 1000)',
      'dropped a line that is not JSON-RPC (7 chars) from the shared server',
      'dropped a line that is not JSON-RPC (5 chars) from the shared server',
      'dropped a line that is not JSON-RPC (16 chars) from the shared server (further drops are not reported)',
    ]);
  });

  it('a server that found its index damaged says so with the code: the relay fails what is owed with it, and starts no server', async () => {
    const first = fakeServer();
    const r = setup([first, fakeServer()]);
    r.send(initialize);
    await flush();
    first.answer({ jsonrpc: '2.0', id: 0, result: { protocolVersion: '2025-06-18' } });
    r.send(call(1));
    await flush();
    first.send('{"qmd":"relay","op":"exit","reason":"The index /i is damaged (x)","code":"INDEX_CORRUPT"}\n');
    await flush();
    const reason = 'qmd: The index /i is damaged (x)';
    expect(r.failures).toEqual([reason]);
    expect(r.stops).toEqual([]);
    expect(r.parsed().at(-1)).toEqual({
      jsonrpc: '2.0',
      id: 1,
      error: { code: -32000, message: reason, data: { code: 'INDEX_CORRUPT' } },
    });
    first.die();
    r.send(call(2));
    await flush();
    expect(r.parsed().at(-1)).toMatchObject({ id: 2, error: { message: reason, data: { code: 'INDEX_CORRUPT' } } });
    expect(r.opens).toHaveLength(1);
    expect(r.gate.size).toBe(0);
  });

  it('an upstream that cannot be opened: each request owed gets the reason as an error, so do later ones, and the relay says it failed', async () => {
    const r = setup([]);
    r.send(initialize);
    r.send(initialized);
    await flush();
    r.opens[0]!.reject(new Error('the shared server could not start: The index is damaged'));
    await flush();
    const reason = 'qmd: the shared server could not start: The index is damaged';
    expect(r.parsed()).toEqual([{ jsonrpc: '2.0', id: 0, error: { code: -32000, message: reason } }]);
    expect(r.gate.size).toBe(0);
    expect(r.failures).toEqual([reason]);
    r.send(call(5));
    await flush();
    expect(r.parsed().at(-1)).toEqual({ jsonrpc: '2.0', id: 5, error: { code: -32000, message: reason } });
    expect(r.gate.size).toBe(0);
    expect(r.failures).toHaveLength(1);
  });
});
