/**
 * What differs between Linux, macOS and Windows, as small pure rules: each takes the facts
 * (platform, environment, uid, user name, temporary directory) and returns a decision, so
 * every branch is unit-tested on any machine (`test/platform.test.ts`). The real code passes
 * `process.platform` and friends (`hostFacts()`). docs/design.md §7 says what holds on each
 * platform and how it was checked.
 *
 * A neutral leaf: it imports nothing of ours, so the relay, the lifecycle and the CLI may all use it.
 */

export type Platform = NodeJS.Platform;

/** The facts the rules decide on; `hostFacts()` reads this process's. */
export interface HostFacts {
  platform: Platform;
  env: Readonly<Record<string, string | undefined>>;
  /** `process.getuid()`; undefined on Windows. */
  uid: number | undefined;
  /** The login name (`os.userInfo().username`), for Windows pipe names. */
  user: string;
  /** `os.tmpdir()`: per user on macOS (`$TMPDIR`, /var/folders/…) and Windows (%TEMP%). */
  tmpdir: string;
}

/**
 * The longest Unix socket path `bind()` takes, in bytes: `sun_path` is 108 bytes on Linux and
 * 104 on macOS and the BSDs, one of which is the terminating NUL. Windows pipes are not paths.
 */
export function maxSocketPathBytes(platform: Platform): number {
  return platform === 'linux' ? 107 : 103;
}

/** Windows has named pipes and no Unix socket files: nothing to create, chmod or unlink. */
export function usesNamedPipes(platform: Platform): boolean {
  return platform === 'win32';
}

/**
 * Whether file modes and owners mean anything: on Windows `stat` reports made-up modes (0o666
 * files, 0o777 directories) and no owner, so the 0700/0600 checks would refuse everything.
 */
export function enforcesFileModes(platform: Platform): boolean {
  return platform !== 'win32';
}

/**
 * The private per-user directory for qmd's sockets, records, locks and logs (made 0700 and
 * checked by the caller, `src/relay/paths.ts`):
 * - Linux: `$XDG_RUNTIME_DIR/qmd` (per user, per boot, 0700, on tmpfs: made for this), else
 *   `<tmp>/qmd-<uid>` (the tmux convention; a directory someone else made there is refused).
 * - macOS: `$TMPDIR/qmd` (launchd gives each user a private `/var/folders/…/T/`); `$TMPDIR`
 *   unset, `/tmp/qmd-<uid>`. `$XDG_RUNTIME_DIR` is honoured if a user set it.
 * - Windows: `%TEMP%\qmd` (under the user's profile). Only the files live there; the socket is
 *   a named pipe (`socketPath`).
 * Any other Unix is treated as Linux.
 */
export function privateDir(facts: HostFacts): string {
  const { platform, env } = facts;
  const runtime = env.XDG_RUNTIME_DIR?.trim();
  if (platform === 'win32') return joinPath(platform, facts.tmpdir, 'qmd');
  if (runtime) return joinPath(platform, runtime, 'qmd');
  const perUserTmp = env.TMPDIR?.trim();
  if (platform === 'darwin' && perUserTmp) return joinPath(platform, perUserTmp, 'qmd');
  return joinPath(platform, facts.platform === 'darwin' ? '/tmp' : facts.tmpdir, `qmd-${facts.uid ?? 'user'}`);
}

/**
 * Where a server named `name` (e.g. `mcp-<hash>`) listens:
 * - Windows: `\\.\pipe\qmd-<user>-<name>`: a named pipe per user and index (pipes live in one
 *   machine-wide namespace, so the user's name keeps two users' servers apart).
 * - elsewhere: `<dir>/<name>.sock`; when that is longer than `bind()` takes
 *   (`maxSocketPathBytes`), `<fallbackDir>/<name>.sock`, and if even that is too long, a name
 *   cut to fit (the caller's name ends in a hash, so the cut keeps it unique enough).
 */
export function socketPath(facts: HostFacts, dir: string, fallbackDir: string, name: string): string {
  const { platform } = facts;
  if (usesNamedPipes(platform)) return `\\\\.\\pipe\\qmd-${pipeSafe(facts.user)}-${name}`;
  const max = maxSocketPathBytes(platform);
  const first = joinPath(platform, dir, `${name}.sock`);
  if (Buffer.byteLength(first) <= max) return first;
  const second = joinPath(platform, fallbackDir, `${name}.sock`);
  if (Buffer.byteLength(second) <= max) return second;
  // Keep the end of the name (the hash): a socket in a directory this deep needs a short name.
  const room = max - Buffer.byteLength(joinPath(platform, fallbackDir, '.sock'));
  return joinPath(platform, fallbackDir, `${name.slice(-Math.max(room, 1))}.sock`);
}

/** The directory to fall back to when `privateDir` makes a socket path too long. */
export function shortDir(facts: HostFacts): string {
  return joinPath(facts.platform, facts.platform === 'win32' ? facts.tmpdir : '/tmp', `qmd-${facts.uid ?? 'user'}`);
}

/**
 * How a process notices that its parent died:
 * - `reparented` (Linux, macOS): the kernel hands an orphan to PID 1 or a subreaper at once, so
 *   the PPID changes; one getppid() per poll (src/lifecycle/parent.ts).
 * - `parent-alive` (Windows): there is no reparenting, the PPID stays the dead parent's number;
 *   ask whether that process still exists (`process.kill(ppid, 0)`).
 */
export type ParentDeathRule = 'reparented' | 'parent-alive';

export function parentDeathRule(platform: Platform): ParentDeathRule {
  return platform === 'win32' ? 'parent-alive' : 'reparented';
}

export type ShutdownSignalName = 'SIGTERM' | 'SIGINT' | 'SIGHUP';

/**
 * The signals that can reach a qmd server and mean "shut down":
 * - Linux, macOS: SIGTERM (kill, service managers, the SDK client 2 s after EOF), SIGINT
 *   (Ctrl-C), SIGHUP (terminal closed).
 * - Windows: Node emulates SIGINT (Ctrl-C) and SIGHUP (console window closed); nothing can send
 *   a process SIGTERM (`process.kill(pid, 'SIGTERM')` there terminates it outright, no handler
 *   runs). A client leaving is seen as stdin EOF, the one trigger every platform has, and
 *   `qmd mcp stop` asks over the server's socket or pipe instead of signalling.
 */
export function shutdownSignals(platform: Platform): readonly ShutdownSignalName[] {
  return platform === 'win32' ? ['SIGINT', 'SIGHUP'] : ['SIGTERM', 'SIGINT', 'SIGHUP'];
}

/** Windows pipe names may hold anything but `\`; keep them readable and one token. */
function pipeSafe(user: string): string {
  const safe = user.replace(/[^A-Za-z0-9._-]/g, '_');
  return safe === '' ? 'user' : safe;
}

function joinPath(platform: Platform, dir: string, name: string): string {
  const sep = platform === 'win32' ? '\\' : '/';
  const trimmed = dir.endsWith('/') || dir.endsWith('\\') ? dir.slice(0, -1) : dir;
  return `${trimmed}${sep}${name}`;
}
