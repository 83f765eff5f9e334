import { closeSync, openSync, readFileSync, renameSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { type SharedPaths, secureDir, secureSocket } from './paths.js';

export interface ConnectOptions {
  paths: SharedPaths;
  /** The index this relay's client wants: a server for another one is refused. */
  index: string;
  /** Starts a shared server, detached; called by at most one relay at a time (the spawn lock). */
  startServer: () => void;
  /** How long to try before giving up (`QMD_SHARED_CONNECT_MS`, default 5000). */
  boundMs: number;
  /** Aborted when the client leaves while we are still connecting. */
  signal: AbortSignal;
  /** Between attempts; 25 ms measured enough for a fresh server to bind and answer. */
  retryMs?: number;
  now?: () => number;
}

export type ConnectResult = { socket: Socket } | { unreachable: string } | { refused: string };

export const DEFAULT_CONNECT_BOUND_MS = 5000;

/**
 * Finds the shared server of an index, starting one if none answers. Ten relays started at the
 * same instant start one server: the relay that takes the spawn lock starts it, and every relay
 * (that one included) connects as soon as the socket answers. A socket file left by a killed
 * server refuses connections; the new server replaces it.
 *
 * A directory or socket that another user owns, or that others can open, is refused outright:
 * the caller serves its client alone.
 */
export async function connectShared(options: ConnectOptions): Promise<ConnectResult> {
  const { paths, signal } = options;
  const now = options.now ?? (() => performance.now());
  const refusal = secureDir(paths.dir) ?? secureSocket(paths.socket);
  if (refusal !== null) return { refused: refusal };
  const deadline = now() + options.boundMs;
  let holdsLock = false;
  let started = false;
  try {
    for (;;) {
      const socket = await tryConnect(paths.socket);
      if (socket) {
        // A socket that turned up since the first check must pass it too, and serve our index.
        const late = secureSocket(paths.socket) ?? otherIndex(paths.record, options.index);
        if (late !== null) {
          socket.destroy();
          return { refused: late };
        }
        return { socket };
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

/** Why the server's record names another index than `index`, or `null` when it names ours (or none yet). */
function otherIndex(record: string, index: string): string | null {
  try {
    const owner = (JSON.parse(readFileSync(record, 'utf8')) as { index?: unknown }).index;
    return typeof owner === 'string' && owner !== index ? `the server on this socket serves ${owner}` : null;
  } catch {
    return null;
  }
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
      const fd = openSync(path, 'wx', 0o600);
      writeSync(fd, String(process.pid));
      closeSync(fd);
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
