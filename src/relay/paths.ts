import { lstatSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';

/**
 * Where the shared server of an index listens, and the files beside its socket. One server per
 * index: the socket's name carries a hash of the index's resolved path.
 *
 * The directory is one only this user can enter: `$XDG_RUNTIME_DIR/qmd/` (per user, per boot,
 * on tmpfs, made for exactly this), else a 0700 `.qmd/` beside the index. A Unix socket path is
 * at most 107 bytes on Linux (103 on macOS): a longer one falls back to a 0700 directory
 * under the system's temporary directory.
 */
export interface SharedPaths {
  dir: string;
  /** The Unix socket relays connect to (mode 0600). */
  socket: string;
  /** The running server's record (pid, start time, sessions, model): `qmd status`, `stop --shared`. */
  record: string;
  /** Held by the one relay that starts a server, so simultaneous relays start exactly one. */
  spawnLock: string;
  /** The server's stderr: it runs detached, with no terminal. */
  log: string;
}

const MAX_SOCKET_PATH_BYTES = 103;

export function sharedPaths(indexPath: string, env: NodeJS.ProcessEnv): SharedPaths {
  const index = resolve(indexPath);
  const hash = fnv1a64(index);
  const runtime = env.XDG_RUNTIME_DIR?.trim();
  let dir = runtime ? join(runtime, 'qmd') : join(dirname(index), '.qmd');
  if (Buffer.byteLength(join(dir, `mcp-${hash}.sock`)) > MAX_SOCKET_PATH_BYTES) {
    dir = join(tmpdir(), `qmd-${process.getuid?.() ?? 'user'}`);
  }
  const base = join(dir, `mcp-${hash}`);
  return {
    dir,
    socket: `${base}.sock`,
    record: `${base}.json`,
    spawnLock: `${base}.spawn`,
    log: `${base}.log`,
  };
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
  const me = process.getuid?.();
  if (me !== undefined && uid !== me) return `${path} belongs to another user (uid ${uid})`;
  if ((mode & 0o077) !== 0) return `${path} is open to other users (mode ${(mode & 0o777).toString(8)})`;
  return null;
}

/**
 * The socket's name for an index path: 64-bit FNV-1a, 16 hex digits. Not node:crypto: loading
 * OpenSSL costs every relay ~2 MB of RSS (measured, Node 20), and this only has to tell a
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
