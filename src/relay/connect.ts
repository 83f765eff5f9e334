import { readFileSync, renameSync, statSync, unlinkSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { writePrivateFile } from '../private-file.js';
import { compareVersions, type Greeting, MAX_GREETING_BYTES, parseGreeting } from './greeting.js';
import { markHung, readStartFailure } from './health.js';
import { type SharedPaths, secureDir, secureSocket } from './paths.js';

export interface ConnectOptions {
  paths: SharedPaths;
  /** The index this relay's client wants: a server for another one is refused. */
  index: string;
  /** The embedding model this relay was told to use, or null: a server told another is refused. */
  model?: string | null;
  /** Starts a shared server, detached; called by at most one relay at a time (the spawn lock). */
  startServer: () => void;
  /** How long to wait for a server's greeting, starting one if need be (`QMD_SHARED_CONNECT_MS`, default 5000). */
  boundMs: number;
  /** Aborted when the client leaves while we are still connecting. */
  signal: AbortSignal;
  /** Between attempts; 25 ms measured enough for a fresh server to bind and answer. */
  retryMs?: number;
  now?: () => number;
  /**
   * A server of an older qmd than this relay's: `retire` asks it (its control channel, within
   * `withinMs`) to stop taking sessions and give up the socket, then true; false if it would
   * not (it is served through then). Asked once per server; a relay without it uses whatever
   * server answers.
   */
  replaceOlder?: { version: string; retire(greeting: Greeting, withinMs: number): Promise<boolean> };
}

/**
 * - `socket`: a server greeted us (its greeting consumed); JSON-RPC from here on.
 * - `unreachable`: nothing answered within the bound.
 * - `refused`: what answers cannot be trusted or is not a qmd server for our index.
 * - `hung`: something accepted the connection and never greeted within the bound (marked for
 *   `qmd status`, `health.ts`).
 * - `failed`: the server could not start, and said why: no other server will do better.
 */
export type ConnectResult =
  | { socket: Socket; greeting: Greeting }
  | { unreachable: string }
  | { refused: string }
  | { hung: string }
  | { failed: string; code?: string };

export const DEFAULT_CONNECT_BOUND_MS = 5000;
const MIN_GREETING_WAIT_MS = 100;

/**
 * Finds the shared server of an index, starting one if none answers. Ten relays started at the
 * same instant start one server: the relay that takes the spawn lock starts it, and every relay
 * (that one included) connects as soon as the socket answers. A socket file left by a killed
 * server refuses connections; the new server replaces it.
 *
 * The bound covers the whole wait, up to the server's greeting (`greeting.ts`): a connection
 * accepted by a server that never speaks is not a server that serves. A server that fails to
 * start leaves its reason (`health.ts`), read here while waiting.
 *
 * A directory or socket that another user owns, or that others can open, is refused outright:
 * the caller serves its client alone.
 */
export async function connectShared(options: ConnectOptions): Promise<ConnectResult> {
  const { paths, signal } = options;
  const now = options.now ?? (() => performance.now());
  const refusal = secureDir(paths.dir) ?? secureSocket(paths.socket);
  if (refusal !== null) return { refused: refusal };
  const waitingSince = Date.now();
  const deadline = now() + options.boundMs;
  let holdsLock = false;
  let started = false;
  /** Older servers already asked to retire: asked once each. */
  const asked = new Set<number>();
  try {
    for (;;) {
      const socket = await tryConnect(paths.socket);
      if (socket) {
        // A socket that turned up since the first check must pass it too.
        const late = secureSocket(paths.socket);
        if (late !== null) {
          socket.destroy();
          return { refused: late };
        }
        // A server that came up just at the deadline still gets a moment to greet: not hung.
        const hello = await readGreeting(socket, Math.max(MIN_GREETING_WAIT_MS, deadline - now()), signal);
        if ('greeting' in hello) {
          if (hello.greeting.index !== options.index) {
            socket.destroy();
            return { refused: `the server on this socket serves ${hello.greeting.index}` };
          }
          const served = hello.greeting.model ?? null;
          if (served !== (options.model ?? null)) {
            socket.destroy();
            const theirs = served === null ? "the index's own embedding model" : `the embedding model ${served}`;
            return { refused: `it searches with ${theirs}, this client names ${options.model ?? 'none'}` };
          }
          const replace = options.replaceOlder;
          if (
            replace !== undefined &&
            !asked.has(hello.greeting.pid) &&
            (compareVersions(hello.greeting.version, replace.version) ?? 0) < 0
          ) {
            // No session here (nothing was sent): the older server goes once its own clients
            // have; this relay starts a server of its version on the socket it gave up.
            asked.add(hello.greeting.pid);
            socket.destroy();
            // Within what is left of the bound: something that greets and never answers must
            // not hold this relay past it.
            await replace.retire(hello.greeting, Math.max(MIN_GREETING_WAIT_MS, deadline - now()));
            continue;
          }
          return { socket, greeting: hello.greeting };
        }
        socket.destroy();
        if ('invalid' in hello)
          return { refused: `${paths.socket} answered ${hello.invalid}, not a qmd shared server` };
        if ('silent' in hello && !signal.aborted) {
          markHung(paths, options.boundMs);
          return {
            hung: `the shared server on ${paths.socket} accepted but did not answer within ${options.boundMs} ms`,
          };
        }
        // Closed before greeting: a server on its way out. Try again (a new one may come).
      } else {
        const failure = readStartFailure(paths, waitingSince);
        if (failure !== null)
          return { failed: failure.error, ...(failure.code !== undefined && { code: failure.code }) };
      }
      if (!holdsLock && takeSpawnLock(paths.spawnLock, options.boundMs * 2)) {
        // Look once more before starting one: the relay that held the lock releases it once
        // connected, so a server may have come up since our attempt (seen under load: a second,
        // needless server that then left).
        holdsLock = true;
        continue;
      }
      if (holdsLock && !started) {
        started = true;
        options.startServer();
      }
      if (signal.aborted || now() >= deadline) {
        return { unreachable: `no shared server answered on ${paths.socket} within ${options.boundMs} ms` };
      }
      await pause(options.retryMs ?? 25, signal);
    }
  } finally {
    if (holdsLock) releaseSpawnLock(paths.spawnLock);
  }
}

type Hello = { greeting: Greeting } | { invalid: string } | { silent: true } | { closed: true };

/**
 * The server's first line, within `ms`. Bytes after it (there should be none: the server says
 * nothing more until asked) are put back for the relay's pump.
 */
function readGreeting(socket: Socket, ms: number, signal: AbortSignal): Promise<Hello> {
  return new Promise((resolve) => {
    let seen = Buffer.alloc(0);
    const finish = (hello: Hello, rest?: Buffer): void => {
      clearTimeout(timer);
      socket.off('data', onData);
      socket.off('close', onClose);
      socket.off('error', onClose);
      signal.removeEventListener('abort', onClose);
      socket.pause();
      if (rest !== undefined && rest.length > 0) socket.unshift(rest);
      resolve(hello);
    };
    const onData = (chunk: Buffer): void => {
      seen = Buffer.concat([seen, chunk]);
      const newline = seen.indexOf(0x0a);
      if (newline === -1) {
        if (seen.length > MAX_GREETING_BYTES) finish({ invalid: `${seen.length} bytes without a newline` });
        return;
      }
      const line = seen.subarray(0, newline).toString('utf8');
      const greeting = parseGreeting(line);
      if (greeting === null)
        finish({ invalid: `a line that is not a greeting (${JSON.stringify(line.slice(0, 40))})` });
      else finish({ greeting }, seen.subarray(newline + 1));
    };
    const onClose = (): void => finish({ closed: true });
    const timer = setTimeout(() => finish({ silent: true }), ms);
    socket.on('data', onData);
    socket.once('close', onClose);
    socket.once('error', onClose);
    signal.addEventListener('abort', onClose, { once: true });
  });
}

/** A connected socket, or `null` when nothing listens there (no file, or a stale one). */
function tryConnect(path: string): Promise<Socket | null> {
  return new Promise((resolve) => {
    const socket = connect(path);
    const onError = (): void => {
      socket.destroy();
      resolve(null);
    };
    socket.once('error', onError);
    socket.once('connect', () => {
      socket.off('error', onError);
      resolve(socket);
    });
  });
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

/**
 * `O_EXCL` creation decides who starts the server. A lock whose holder died (no such pid) or
 * that is older than `staleMs` (a holder stuck or killed before it could clean up) is moved
 * aside with an atomic rename, so two relays that both judge it stale cannot both take it:
 * only one rename succeeds.
 */
export function takeSpawnLock(path: string, staleMs: number): boolean {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writePrivateFile(path, String(process.pid), 'exclusive');
      return true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') return false;
    }
    if (!isStale(path, staleMs)) return false;
    try {
      renameSync(path, `${path}.stale.${process.pid}`);
      unlinkSync(`${path}.stale.${process.pid}`);
    } catch {
      return false;
    }
  }
  return false;
}

function isStale(path: string, staleMs: number): boolean {
  try {
    const pid = Number(readFileSync(path, 'utf8'));
    if (Date.now() - statSync(path).mtimeMs > staleMs) return true;
    if (!Number.isSafeInteger(pid) || pid <= 0) return false;
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

export function releaseSpawnLock(path: string): void {
  try {
    if (Number(readFileSync(path, 'utf8')) === process.pid) unlinkSync(path);
  } catch {
    // Gone already.
  }
}
