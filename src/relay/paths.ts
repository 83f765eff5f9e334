import { lstatSync, mkdirSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { resolve } from 'node:path';
import { enforcesFileModes, type HostFacts, privateDir, shortDir, socketPath, usesNamedPipes } from '../platform.js';

/**
 * Where the shared server of an index listens, and the files beside its socket. One server per
 * index: the socket's name carries a hash of the index's resolved path. The platform rules
 * (which directory, the `sun_path` limit, Windows pipes) are `src/platform.ts`'s.
 *
 * The directory is one only this user can enter (`privateDir`: `$XDG_RUNTIME_DIR/qmd/` on
 * Linux, `$TMPDIR/qmd/` on macOS, else `<tmp>/qmd-<uid>/`); a socket path too long for
 * `bind()` moves to `/tmp/qmd-<uid>/`. On Windows the socket is a named pipe and the files live
 * in `%TEMP%\qmd\`.
 */
export interface SharedPaths {
  dir: string;
  /** The Unix socket (mode 0600) or Windows pipe relays connect to, and `qmd status`/`stop` ask. */
  socket: string;
  /** The running server's record (pid, index, version, start time): the one-per-index claim. */
  record: string;
  /** Held by the one relay that starts a server, so simultaneous relays start exactly one. */
  spawnLock: string;
  /** The server's stderr: it runs detached, with no terminal. */
  log: string;
  /**
   * Where a relay leaves word that the server it started failed or hung, for `qmd status` to
   * show when no server answers (written by the relay, read by `src/serve/control/shared-status.ts`).
   */
  failure: string;
}

/** This process's facts for the platform rules. */
export function hostFacts(env: NodeJS.ProcessEnv = process.env): HostFacts {
  const platform = process.platform;
  return {
    platform,
    env,
    uid: process.getuid?.(),
    user: platform === 'win32' ? (env.USERNAME ?? loginName()) : '',
    tmpdir: tmpdir(),
  };
}

export function sharedPaths(indexPath: string, env: NodeJS.ProcessEnv, facts: HostFacts = hostFacts(env)): SharedPaths {
  const hash = fnv1a64(resolve(indexPath));
  const socket = placeSocket(facts, `mcp-${hash}`);
  const dir = usesNamedPipes(facts.platform) ? privateDir(facts) : socketDir(socket);
  const base = `${dir}${facts.platform === 'win32' ? '\\' : '/'}mcp-${hash}`;
  return {
    dir,
    socket,
    record: `${base}.json`,
    spawnLock: `${base}.spawn`,
    log: `${base}.log`,
    failure: `${base}.failed`,
  };
}

/**
 * The HTTP daemon's control socket (`qmd mcp --http --daemon`): in the same private directory,
 * named from the index like the shared server's, so `qmd mcp stop` finds it from the index alone
 * and never from what a pidfile says.
 */
export function daemonControlPath(
  indexPath: string,
  env: NodeJS.ProcessEnv,
  facts: HostFacts = hostFacts(env),
): string {
  return placeSocket(facts, `http-${fnv1a64(resolve(indexPath))}`);
}

function placeSocket(facts: HostFacts, name: string): string {
  return socketPath(facts, privateDir(facts), shortDir(facts), name);
}

function socketDir(socket: string): string {
  return socket.slice(0, socket.lastIndexOf('/'));
}

function loginName(): string {
  try {
    return userInfo().username;
  } catch {
    return 'user';
  }
}

/** Why a socket or its directory may not be trusted, or `null` when it may. */
export type Refusal = string | null;

/**
 * Makes the directory (0700) if it is missing, then checks it is a directory of this user that
 * nobody else can enter. Another user's directory, or one open to others, is refused: its
 * socket could be anyone's server, reading every query.
 */
export function secureDir(dir: string): Refusal {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch (error) {
    return `cannot create ${dir}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`;
  }
  const stat = lstatSync(dir);
  if (!stat.isDirectory()) return `${dir} is not a directory`;
  return ownedAndPrivate(dir, stat.uid, stat.mode);
}

/** A socket that exists must be a socket of this user, 0600 or stricter; a missing one is fine. */
export function secureSocket(path: string): Refusal {
  if (usesNamedPipes(process.platform)) return null;
  let stat: ReturnType<typeof lstatSync>;
  try {
    stat = lstatSync(path);
  } catch {
    return null;
  }
  if (!stat.isSocket()) return `${path} is not a socket`;
  return ownedAndPrivate(path, stat.uid, stat.mode);
}

function ownedAndPrivate(path: string, uid: number, mode: number): Refusal {
  // Windows: made-up modes and no owner; the pipe's own ACL is the guard there (docs/design.md §7).
  if (!enforcesFileModes(process.platform)) return null;
  const me = process.getuid?.();
  if (me !== undefined && uid !== me) return `${path} belongs to another user (uid ${uid})`;
  if ((mode & 0o077) !== 0) return `${path} is open to other users (mode ${(mode & 0o777).toString(8)})`;
  return null;
}

/**
 * The socket's name for an index path: 64-bit FNV-1a, 16 hex digits. Not node:crypto: loading
 * OpenSSL costs every relay RSS (docs/design.md §5, "Start-up"), and this only has to tell a
 * user's few index paths apart (the server's record names its index too, and a relay checks it).
 */
export function fnv1a64(text: string): string {
  let hash = 0xcbf29ce484222325n;
  for (const byte of Buffer.from(text, 'utf8')) {
    hash ^= BigInt(byte);
    hash = (hash * 0x100000001b3n) & 0xffffffffffffffffn;
  }
  return hash.toString(16).padStart(16, '0');
}
