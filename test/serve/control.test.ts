/**
 * The control protocol over real Unix sockets: a connection's first line decides whether it is
 * a control request (answered, no session) or an MCP session (handed over with every byte it
 * sent); `ask`/`askStatus`/`requestStop` as `qmd status` and `qmd mcp stop` use them.
 */
import { chmodSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { askStatus, requestStop } from '../../src/serve/control/client.js';
import { listenPrivately } from '../../src/serve/control/listen.js';
import { parseControlLine, type ServerStatus } from '../../src/serve/control/protocol.js';
import { type ControlHandlers, routeFirstLine } from '../../src/serve/control/server.js';
import { deferred } from '../support/deferred.js';

const dirs: string[] = [];
const servers: Server[] = [];
afterEach(() => {
  for (const s of servers.splice(0)) s.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const STATUS: ServerStatus = {
  kind: 'shared',
  pid: 4242,
  index: '/notes/index.sqlite',
  version: '0.1.0',
  startedAt: '2026-01-01T00:00:00.000Z',
  uptimeMs: 1234,
  state: 'connected.idle',
  sessions: { live: 0, opened: 3, ended: 3 },
  model: { name: null, loaded: false },
};

/** A server routing first lines, recording what reached MCP and what asked to stop. */
async function serve() {
  const dir = mkdtempSync(join(tmpdir(), 'qmd-control-'));
  chmodSync(dir, 0o700);
  dirs.push(dir);
  const path = join(dir, 's.sock');
  const mcpBytes: string[] = [];
  const mcpSockets: Socket[] = [];
  const stopped = deferred();
  const mcpClosed = deferred();
  const stops: string[] = [];
  const retires: string[] = [];
  const controlSockets: Socket[] = [];
  const handlers: ControlHandlers = {
    index: STATUS.index,
    status: () => STATUS,
    sessions: () => 2,
    stop: ({ all }) => {
      stops.push(all ? 'stop --all' : 'stop');
      stopped.resolve();
    },
    retire: (version) => {
      retires.push(version);
      return version === '9.9.9' ? { sessions: 2 } : { refused: `${version} is not newer` };
    },
  };
  const server = createServer((socket) => {
    controlSockets.push(socket);
    routeFirstLine(handlers, (mcp) => {
      mcpSockets.push(mcp);
      mcp.on('data', (chunk: Buffer) => mcpBytes.push(chunk.toString()));
      mcp.on('close', () => mcpClosed.resolve());
    })(socket);
  });
  servers.push(server);
  await listenPrivately(server, path);
  return { path, mcpBytes, mcpSockets, mcpClosed, stopped, stops, retires, controlSockets };
}

function send(path: string, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = createConnection(path);
    let got = '';
    socket.on('data', (chunk: Buffer) => {
      got += chunk.toString();
    });
    socket.on('error', reject);
    socket.on('close', () => resolve(got));
    socket.end(text);
  });
}

describe('the first line', () => {
  it('parses: control requests, MCP messages and anything else', () => {
    expect(parseControlLine('{"qmd":"control","op":"status"}')).toEqual({ qmd: 'control', op: 'status' });
    expect(parseControlLine('{"op":"stop","qmd":"control","index":"/x"}')).toEqual({
      qmd: 'control',
      op: 'stop',
      index: '/x',
    });
    expect(parseControlLine('{"jsonrpc":"2.0","id":1,"method":"initialize"}')).toBe('other');
    expect(parseControlLine('not json')).toBe('other');
    expect(parseControlLine('[1]')).toBe('other');
    expect(parseControlLine('{"qmd":"other","op":"status"}')).toBe('other');
    expect(parseControlLine('{"qmd":"control","op":"kill"}')).toEqual({
      error: expect.stringContaining('unknown control op "kill"'),
    });
    expect(parseControlLine('{"qmd":"control","op":"stop","index":7}')).toEqual({ error: 'index must be a string' });
    expect(parseControlLine('{"qmd":"control","op":"stop","all":true}')).toEqual({
      qmd: 'control',
      op: 'stop',
      all: true,
    });
    expect(parseControlLine('{"qmd":"control","op":"stop","all":"yes"}')).toEqual({
      error: 'all must be true or false',
    });
    expect(parseControlLine('{"qmd":"control","op":"retire","index":"/x","version":"0.2.0"}')).toEqual({
      qmd: 'control',
      op: 'retire',
      index: '/x',
      version: '0.2.0',
    });
    expect(parseControlLine('{"qmd":"control","op":"retire"}')).toEqual({ error: 'retire needs a version' });
  });

  it('a status request is answered and the connection closed; nothing reaches MCP', async () => {
    const s = await serve();
    expect(await askStatus(s.path)).toEqual(STATUS);
    expect(s.mcpSockets).toHaveLength(0);
  });

  it('an MCP session gets every byte, from the first, however the chunks fall', async () => {
    const s = await serve();
    const lines =
      '{"jsonrpc":"2.0","id":1,"method":"initialize"}\n{"jsonrpc":"2.0","method":"notifications/initialized"}\n';
    const socket = createConnection(s.path);
    // Split mid-line: the router must buffer until the first newline, then put it all back.
    await new Promise((resolve) => socket.write(lines.slice(0, 10), resolve));
    socket.end(lines.slice(10));
    await s.mcpClosed.promise;
    expect(s.mcpBytes.join('')).toBe(lines);
  });

  it('malformed control requests get an error reply; a peer that hangs up first gets nothing', async () => {
    const s = await serve();
    const reply = JSON.parse(await send(s.path, '{"qmd":"control","op":"kill"}\n'));
    expect(reply).toMatchObject({ qmd: 'control', ok: false, error: expect.stringContaining('unknown control op') });
    expect(await send(s.path, '{"qmd":"con')).toBe('');
    expect(s.mcpSockets).toHaveLength(0);
  });
});

describe('stop', () => {
  it('is refused for another index, and nothing stops', async () => {
    const s = await serve();
    expect(await requestStop(s.path, '/elsewhere/index.sqlite', 1000)).toEqual({
      refused: 'this server serves /notes/index.sqlite, not /elsewhere/index.sqlite',
    });
    expect(s.stops).toEqual([]);
  });

  it('starts the teardown after its reply, and resolves when the connection closes (the process exiting)', async () => {
    const s = await serve();
    const result = requestStop(s.path, STATUS.index, 20_000);
    await s.stopped.promise;
    // The server keeps the stop's connection open until it exits; here "exit" is closing it.
    for (const socket of s.controlSockets) socket.destroy();
    // The clients it had, as it said when it replied.
    expect(await result).toEqual({ stopped: process.pid, sessions: 2 });
    expect(s.stops).toEqual(['stop']);
  });

  it('with all, the server is told to end its clients too', async () => {
    const s = await serve();
    const result = requestStop(s.path, STATUS.index, 20_000, { all: true });
    await s.stopped.promise;
    for (const socket of s.controlSockets) socket.destroy();
    expect(await result).toEqual({ stopped: process.pid, sessions: 2 });
    expect(s.stops).toEqual(['stop --all']);
  });
});

describe('retire', () => {
  it('is answered with the sessions left, or refused with why; a server without it refuses', async () => {
    const s = await serve();
    const ask = async (version: string) =>
      JSON.parse(
        await send(s.path, `${JSON.stringify({ qmd: 'control', op: 'retire', index: STATUS.index, version })}\n`),
      );
    expect(await ask('9.9.9')).toEqual({ qmd: 'control', ok: true, op: 'retire', pid: process.pid, sessions: 2 });
    expect(await ask('0.0.1')).toEqual({ qmd: 'control', ok: false, error: '0.0.1 is not newer' });
    expect(s.retires).toEqual(['9.9.9', '0.0.1']);
    expect(s.stops).toEqual([]);
    expect(s.mcpSockets).toHaveLength(0);
  });

  it('reports a server that has not exited within the bound', async () => {
    const s = await serve();
    expect(await requestStop(s.path, STATUS.index, 50)).toEqual({ stillRunning: process.pid, afterMs: 50 });
  });

  it('nothing listening, or a socket file a dead server left: unreachable', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'qmd-control-'));
    chmodSync(dir, 0o700);
    dirs.push(dir);
    expect(await requestStop(join(dir, 'none.sock'), '/x', 100)).toEqual({
      unreachable: expect.stringContaining('no such socket'),
    });
    // A SIGKILLed server leaves its socket file (a clean close removes it): move the file away
    // from the listener before closing it, and the file stays, refusing connections.
    const dead = createServer();
    await listenPrivately(dead, join(dir, 'live.sock'));
    renameSync(join(dir, 'live.sock'), join(dir, 'left.sock'));
    await new Promise((resolve) => dead.close(resolve));
    expect(await askStatus(join(dir, 'left.sock'))).toEqual({
      unreachable: expect.stringContaining('a socket its server left behind'),
    });
  });
});
