import { lstatSync, mkdirSync, readdirSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { resolve } from 'node:path';
import {
  enforcesFileModes,
  fitsSocketPath,
  type HostFacts,
  legacyPlaceDirs,
  legacyPrivateDir,
  placeDir,
  socketPath,
  usesNamedPipes,
} from '../platform.js';

/**
 * Where the shared server of an index listens, and the files beside its socket. One server per
 * index: the socket's name carries a hash of the index's resolved path. The platform rules
 * (the one place per person, the `sun_path` limit, Windows pipes) are `src/platform.ts`'s:
 * `/tmp/qmd-<uid>/` on Linux and macOS whatever the environment, named pipes and
 * `<home>\AppData\Local\qmd\run\` on Windows (docs/design.md §7).
 */
export interface SharedPaths {
  dir: string;
  /** The index's hash: every file of its servers here is named `mcp-<hash>…`. */
  hash: string;
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

/**
 * This process's facts for the platform rules: the uid, and the name and home from the user
 * database (`os.userInfo()`, not `$USER`/`$HOME`); the environment and `os.tmpdir()` only to
 * find where an older qmd listened.
 */
export function hostFacts(env: NodeJS.ProcessEnv = process.env): HostFacts {
  const platform = process.platform;
  const user = userRecord();
  return { platform, env, uid: process.getuid?.(), user: user.username, home: user.homedir, tmpdir: tmpdir() };
}

/**
 * The place this process serves and looks in first: `placeDir`. `QMD_TEST_LEGACY_PLACE=1`
 * (tests only) makes a process use the place qmd 0.1 would have used instead, so one build
 * plays a server an older qmd left running.
 */
export function servingDir(facts: HostFacts): string {
  return facts.env.QMD_TEST_LEGACY_PLACE === '1' ? legacyPrivateDir(facts) : placeDir(facts);
}

/**
 * The index's shared server at this process's place. Given an environment instead of facts,
 * this process's facts with that environment (which only `QMD_TEST_LEGACY_PLACE` and the old
 * places read).
 */
export function sharedPaths(indexPath: string, from: HostFacts | NodeJS.ProcessEnv = hostFacts()): SharedPaths {
  const facts = factsOf(from);
  return sharedPathsIn(servingDir(facts), indexPath, facts);
}

function factsOf(from: HostFacts | NodeJS.ProcessEnv): HostFacts {
  const facts = from as Partial<HostFacts>;
  return typeof facts.platform === 'string' && typeof facts.env === 'object'
    ? (from as HostFacts)
    : hostFacts(from as NodeJS.ProcessEnv);
}

/** The layout of `sharedPaths` in `dir` (an old place, a test's own directory). */
export function sharedPathsIn(dir: string, indexPath: string, facts: HostFacts = hostFacts()): SharedPaths {
  const hash = fnv1a64(resolve(indexPath));
  const base = `${dir}${facts.platform === 'win32' ? '\\' : '/'}mcp-${hash}`;
  return {
    dir,
    hash,
    socket: socketPath(facts, dir, `mcp-${hash}`),
    record: `${base}.json`,
    spawnLock: `${base}.spawn`,
    log: `${base}.log`,
    failure: `${base}.failed`,
  };
}

/**
 * Where an older qmd may still serve this index (`legacyPlaceDirs`), other than where this
 * process serves. A path qmd 0.1 could not bind there sent its server to `<tmp>/qmd-<uid>`,
 * which is the place itself on Linux and macOS: not listed. On Windows the pipe was named
 * after `%USERNAME%`.
 */
export function legacySharedPaths(indexPath: string, facts: HostFacts = hostFacts()): SharedPaths[] {
  const here = servingDir(facts);
  const dirs = [...legacyPlaceDirs(facts), placeDir(facts)].filter((dir) => dir !== here);
  const old = { ...facts, user: facts.env.USERNAME ?? facts.user };
  return [...new Set(dirs)]
    .map((dir) => sharedPathsIn(dir, indexPath, old))
    .filter((paths) => fitsSocketPath(facts, paths.socket));
}

/**
 * A shared server's own socket, named with its pid: what it binds, and what the index's socket
 * (`paths.socket`) is a hard link to while it holds the place. Closing a listener makes libuv
 * unlink the path it bound, whatever file is there by then: bound here, a server that gave its
 * place up (retiring, or taken for hung and resumed) can never remove its successor's socket,
 * and it keeps answering `qmd status` and `qmd mcp stop` here until it has left. Windows pipes
 * have no links: there a server listens on `paths.socket` itself.
 */
export function ownSocketPath(paths: SharedPaths, pid: number, facts: HostFacts = hostFacts()): string {
  return socketPath(facts, paths.dir, `mcp-${paths.hash}-${pid}`);
}

/** The record of a retiring shared server, beside the index's: it names the pid, and so its own socket. */
export function retiringRecordPath(paths: SharedPaths, pid: number, facts: HostFacts = hostFacts()): string {
  return `${paths.dir}${facts.platform === 'win32' ? '\\' : '/'}mcp-${paths.hash}-retiring-${pid}.json`;
}

/** The records of the retiring servers of this index in `paths.dir`: one per pid. */
export function retiringRecords(paths: SharedPaths): string[] {
  const pattern = new RegExp(`^mcp-${paths.hash}-retiring-\\d+\\.json$`);
  let names: string[];
  try {
    names = readdirSync(paths.dir);
  } catch {
    return [];
  }
  const sep = paths.record.charAt(paths.dir.length);
  return names.filter((name) => pattern.test(name)).map((name) => `${paths.dir}${sep}${name}`);
}

/**
 * The HTTP daemon's control socket (`qmd mcp --http --daemon`): in the same place, named from
 * the index like the shared server's, so `qmd mcp stop` finds it from the index alone and never
 * from what a pidfile says.
 */
export function daemonControlPath(indexPath: string, from: HostFacts | NodeJS.ProcessEnv = hostFacts()): string {
  const facts = factsOf(from);
  return socketPath(facts, servingDir(facts), `http-${fnv1a64(resolve(indexPath))}`);
}

/** Where an older qmd's HTTP server for this index may still answer (as `legacySharedPaths`). */
export function legacyDaemonControlPaths(indexPath: string, facts: HostFacts = hostFacts()): string[] {
  const name = `http-${fnv1a64(resolve(indexPath))}`;
  return legacySharedPaths(indexPath, facts)
    .map((paths) => socketPath({ ...facts, user: facts.env.USERNAME ?? facts.user }, paths.dir, name))
    .filter((path) => fitsSocketPath(facts, path));
}

function userRecord(): { username: string; homedir: string } {
  try {
    const { username, homedir } = userInfo();
    return { username, homedir };
  } catch {
    // No entry for this uid in the user database (a container's made-up uid): the uid still names the place.
    return { username: 'user', homedir: '' };
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
