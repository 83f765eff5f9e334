/**
 * How a relay finds its shared server: real Unix sockets and real files in a temp directory,
 * listeners the test plays (a server that greets, one that never speaks, one that speaks
 * garbage), and the failure a server leaves when it cannot start.
 */
import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type ConnectResult, connectShared } from '../../src/relay/connect.js';
import {
  asRelayNotice,
  compareVersions,
  greetingLine,
  parseGreeting,
  relayNoticeLine,
} from '../../src/relay/greeting.js';
import { failurePath, hungPath, readHung, writeStartFailure } from '../../src/relay/health.js';
import { type SharedPaths, sharedPathsIn } from '../../src/relay/paths.js';

const INDEX = '/nowhere/index.sqlite';
/**
 * Greetings name a live process other than the relay (`greetingProblem`): the test runner's
 * parent, and init, stand in for two servers.
 */
const SERVER = process.ppid;
const OTHER = 1;
const dirs: string[] = [];
const servers: Server[] = [];
const sockets: Socket[] = [];
afterEach(() => {
  for (const s of sockets.splice(0)) s.destroy();
  for (const s of servers.splice(0)) s.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function tempPaths(): SharedPaths {
  const dir = mkdtempSync(join(tmpdir(), 'qmd-connect-'));
  dirs.push(dir);
  const paths = sharedPathsIn(join(dir, 'qmd'), join(dir, 'index.sqlite'));
  mkdirSync(paths.dir, { mode: 0o700 });
  return paths;
}

/** A listener that does `onConnection` with each socket it accepts. */
function listenOn(path: string, onConnection: (socket: Socket) => void, mode = 0o600): Promise<Server> {
  return new Promise((resolve) => {
    const server = createServer((socket) => {
      sockets.push(socket);
      socket.on('error', () => {});
      onConnection(socket);
    });
    servers.push(server);
    server.listen(path, () => {
      chmodSync(path, mode);
      resolve(server);
    });
  });
}

const greets =
  (index = INDEX, after = '') =>
  (socket: Socket) =>
    socket.write(`${greetingLine({ pid: SERVER, index, version: '0.0.0' })}${after}`);

function connect(paths: SharedPaths, boundMs: number, startServer: () => void = () => {}): Promise<ConnectResult> {
  return connectShared({ paths, index: INDEX, boundMs, signal: new AbortController().signal, startServer });
}

/** What the relay's pump reads next from a connected socket. */
function nextData(socket: Socket): Promise<string> {
  return new Promise((resolve) => {
    socket.once('data', (chunk: Buffer) => resolve(chunk.toString()));
    socket.resume();
  });
}

describe('connectShared', () => {
  it('connects once the server greets, without starting one; what follows the greeting is left for the pump', async () => {
    const paths = tempPaths();
    await listenOn(paths.socket, greets(INDEX, '{"jsonrpc":"2.0","method":"x"}\n'));
    let started = 0;
    const result = await connect(paths, 2000, () => started++);
    if (!('socket' in result)) throw new Error(JSON.stringify(result));
    sockets.push(result.socket);
    expect(result.greeting).toEqual({ qmd: 'shared-server', pid: SERVER, index: INDEX, version: '0.0.0' });
    expect(await nextData(result.socket)).toBe('{"jsonrpc":"2.0","method":"x"}\n');
    expect(started).toBe(0);
  });

  it('starts one server when none answers, and connects once it greets', async () => {
    const paths = tempPaths();
    let started = 0;
    const result = await connect(paths, 5000, () => {
      started++;
      void listenOn(paths.socket, greets());
    });
    expect('socket' in result).toBe(true);
    if ('socket' in result) result.socket.destroy();
    expect(started).toBe(1);
  });

  it('gives up after its bound when nothing ever listens, and refuses an untrusted socket', async () => {
    const paths = tempPaths();
    expect(await connect(paths, 100)).toEqual({ unreachable: expect.stringContaining('within 100 ms') });
    await listenOn(paths.socket, greets(), 0o666);
    expect(await connect(paths, 100)).toEqual({ refused: expect.stringContaining('open to other users') });
  });

  it('refuses a server that greets for another index', async () => {
    const paths = tempPaths();
    await listenOn(paths.socket, greets('/elsewhere/index.sqlite'));
    expect(await connect(paths, 1000)).toEqual({ refused: 'the server on this socket serves /elsewhere/index.sqlite' });
  });

  it('refuses a server told another embedding model than this relay; an older server without one is the index’s', async () => {
    const paths = tempPaths();
    const told = (model: string | null) => (socket: Socket) =>
      socket.write(greetingLine({ pid: SERVER, index: INDEX, version: '0.0.0', model }));
    const server = await listenOn(paths.socket, told('/models/a.gguf'));
    const ask = (model: string | null) =>
      connectShared({
        paths,
        index: INDEX,
        model,
        boundMs: 1000,
        signal: new AbortController().signal,
        startServer: () => {},
      });
    expect(await ask(null)).toEqual({
      refused: 'it searches with the embedding model /models/a.gguf, this client names none',
    });
    expect(await ask('/models/b.gguf')).toEqual({
      refused: 'it searches with the embedding model /models/a.gguf, this client names /models/b.gguf',
    });
    const same = await ask('/models/a.gguf');
    if (!('socket' in same)) throw new Error(JSON.stringify(same));
    same.socket.destroy();
    server.close();
    const older = tempPaths();
    await listenOn(older.socket, greets());
    const ownModel = await connectShared({
      paths: older,
      index: INDEX,
      model: '/models/b.gguf',
      boundMs: 1000,
      signal: new AbortController().signal,
      startServer: () => {},
    });
    expect(ownModel).toEqual({
      refused: "it searches with the index's own embedding model, this client names /models/b.gguf",
    });
    const plain = await connect(older, 1000);
    expect('socket' in plain).toBe(true);
    if ('socket' in plain) plain.socket.destroy();
  });

  it('refuses a listener whose first line is not a greeting, and one that sends an endless line', async () => {
    const paths = tempPaths();
    const server = await listenOn(paths.socket, (socket) => socket.write('garbage\n{"jsonrpc":"2.0"}\n'));
    expect(await connect(paths, 1000)).toEqual({ refused: expect.stringMatching(/a line that is not a greeting/) });
    server.close();
    const endless = tempPaths();
    await listenOn(endless.socket, (socket) => socket.write('x'.repeat(64 * 1024)));
    expect(await connect(endless, 1000)).toEqual({ refused: expect.stringMatching(/bytes without a newline/) });
  });

  it('a listener that accepts and never speaks is hung after the bound, marked so for qmd status, and a successor is started', async () => {
    const paths = tempPaths();
    writeFileSync(paths.record, JSON.stringify({ pid: 31337 }), { mode: 0o600 });
    await listenOn(paths.socket, () => {});
    let started = 0;
    const result = await connect(paths, 300, () => started++);
    expect(result).toEqual({ hung: expect.stringContaining('did not answer within 300 ms') });
    // The successor takes the place if the holder does not answer it either (its claim's check).
    expect(started).toBe(1);
    expect(readHung(paths)).toEqual({ pid: 31337, since: expect.any(String), waitedMs: 300, relay: process.pid });
    expect(statSync(hungPath(paths)).mode & 0o777).toBe(0o600);
  });

  it('a server that could not start fails the relays waiting for it with its reason, at once', async () => {
    const paths = tempPaths();
    const result = await connect(paths, 20_000, () =>
      writeStartFailure(paths, { pid: 1, at: Date.now(), error: 'The index is damaged' }),
    );
    expect(result).toEqual({ failed: 'The index is damaged' });
    expect(statSync(failurePath(paths)).mode & 0o777).toBe(0o600);
  });

  it('a failure written before the relay began waiting is not this try: it starts a server', async () => {
    const paths = tempPaths();
    writeStartFailure(paths, { pid: 1, at: Date.now() - 60_000, error: 'an old failure' });
    let started = 0;
    const result = await connect(paths, 5000, () => {
      started++;
      void listenOn(paths.socket, greets());
    });
    expect('socket' in result).toBe(true);
    if ('socket' in result) result.socket.destroy();
    expect(started).toBe(1);
  });
});

describe('an older server', () => {
  it('is asked once to retire; once it gave up the socket, the relay starts one of its own version', async () => {
    const paths = tempPaths();
    const old = await listenOn(paths.socket, (socket) =>
      socket.write(greetingLine({ pid: OTHER, index: INDEX, version: '0.1.0' })),
    );
    const asked: number[] = [];
    let started = 0;
    const result = await connectShared({
      paths,
      index: INDEX,
      boundMs: 5000,
      signal: new AbortController().signal,
      startServer: () => {
        started++;
        void listenOn(paths.socket, (socket) =>
          socket.write(greetingLine({ pid: SERVER, index: INDEX, version: '0.2.0' })),
        );
      },
      replaceOlder: {
        version: '0.2.0',
        retire: async (greeting) => {
          asked.push(greeting.pid);
          // As a retiring server does: it stops listening and its socket file goes.
          await new Promise<void>((resolve) => old.close(() => resolve()));
          return true;
        },
      },
    });
    if (!('socket' in result)) throw new Error(JSON.stringify(result));
    sockets.push(result.socket);
    expect(result.greeting).toMatchObject({ pid: SERVER, version: '0.2.0' });
    expect(asked).toEqual([OTHER]);
    expect(started).toBe(1);
  });

  it('that will not retire is used; a server of the same or a newer version is never asked', async () => {
    for (const [version, mine, expected] of [
      ['0.1.0', '0.2.0', [SERVER]],
      ['0.2.0', '0.2.0', []],
      ['0.3.0', '0.2.0', []],
    ] as const) {
      const paths = tempPaths();
      await listenOn(paths.socket, (socket) => socket.write(greetingLine({ pid: SERVER, index: INDEX, version })));
      const asked: number[] = [];
      const result = await connectShared({
        paths,
        index: INDEX,
        boundMs: 2000,
        signal: new AbortController().signal,
        startServer: () => {},
        replaceOlder: {
          version: mine,
          retire: async (greeting) => {
            asked.push(greeting.pid);
            return false;
          },
        },
      });
      if (!('socket' in result)) throw new Error(JSON.stringify(result));
      sockets.push(result.socket);
      expect(result.greeting.version).toBe(version);
      expect(asked, version).toEqual(expected);
    }
  });

  it('versions order as releases do, a prerelease below its release; what is not a version does not order', () => {
    expect(compareVersions('0.1.0', '0.2.0')).toBe(-1);
    expect(compareVersions('1.10.0', '1.9.9')).toBe(1);
    expect(compareVersions('2.0.0', '2.0.0')).toBe(0);
    expect(compareVersions('2.0.0-rc.1', '2.0.0')).toBe(-1);
    expect(compareVersions('2.0.0-rc.2', '2.0.0-rc.1')).toBe(1);
    expect(compareVersions('2.0.0+build.5', '2.0.0')).toBe(0);
    expect(compareVersions('dev', '2.0.0')).toBeUndefined();
    expect(compareVersions('2.0', '2.0.0')).toBeUndefined();
  });

  it('a notice for the relay is tagged as the greeting is, and nothing else is taken for one', () => {
    expect(asRelayNotice(JSON.parse(relayNoticeLine('stopped')))).toEqual({
      qmd: 'relay',
      op: 'exit',
      reason: 'stopped',
    });
    expect(asRelayNotice(JSON.parse(relayNoticeLine('damaged', 'INDEX_CORRUPT')))).toEqual({
      qmd: 'relay',
      op: 'exit',
      reason: 'damaged',
      code: 'INDEX_CORRUPT',
    });
    expect(asRelayNotice({ qmd: 'relay', op: 'exit', reason: 'x', code: 7 })).toBeNull();
    expect(asRelayNotice({ jsonrpc: '2.0', method: 'exit' })).toBeNull();
    expect(asRelayNotice({ qmd: 'relay', op: 'other', reason: 'x' })).toBeNull();
    expect(asRelayNotice(null)).toBeNull();
  });
});

describe('a greeting that fails its checks is refused', () => {
  it('a pid that is no live process, or this relay’s own; a version that does not parse', async () => {
    for (const [pid, version, why] of [
      [2_147_483_646, '0.1.0', /pid 2147483646, which is no server process/],
      [process.pid, '0.1.0', new RegExp(`pid ${process.pid}, which is no server process`)],
      [0, '0.1.0', /pid 0, which is no server process/],
      [SERVER, 'dev', /version "dev", which is no qmd version/],
      [SERVER, '9.9', /version "9.9", which is no qmd version/],
    ] as const) {
      const paths = tempPaths();
      await listenOn(paths.socket, (socket) => socket.write(greetingLine({ pid, index: INDEX, version })));
      expect(await connect(paths, 1000)).toEqual({ refused: expect.stringMatching(why) });
    }
  });
});

describe('the greeting', () => {
  it('is one JSON line, and only a well-formed one is taken', () => {
    const line = greetingLine({ pid: 7, index: '/i', version: '1' });
    expect(line.endsWith('\n')).toBe(true);
    expect(line.indexOf('\n')).toBe(line.length - 1);
    expect(parseGreeting(line)).toEqual({ qmd: 'shared-server', pid: 7, index: '/i', version: '1' });
    expect(parseGreeting('{"jsonrpc":"2.0","id":0,"result":{}}')).toBeNull();
    expect(parseGreeting('{"qmd":"shared-server","pid":"7","index":"/i","version":"1"}')).toBeNull();
    expect(parseGreeting('not json')).toBeNull();
  });
});
