/**
 * What differs between Linux, macOS and Windows, as small pure rules: each takes the facts
 * (platform, uid, user name, home, and the environment only to find an older qmd) and returns a decision, so
 * every branch is unit-tested on any machine (`test/platform.test.ts`). The real code passes
 * `process.platform` and friends (`hostFacts()`). docs/design.md §7 says what holds on each
 * platform and how it was checked.
 *
 * A neutral leaf: it imports nothing of ours, so the relay, the lifecycle and the CLI may all use it.
 */

export type Platform = NodeJS.Platform;

/** The facts the rules decide on; `hostFacts()` (src/relay/paths.ts) reads this process's. */
export interface HostFacts {
  platform: Platform;
  /**
   * The environment: read only to find where an older qmd listened (`legacyPlaceDirs`), never
   * to decide where qmd listens now (`placeDir`): clients strip it.
   */
  env: Readonly<Record<string, string | undefined>>;
  /** `process.getuid()`; undefined on Windows. */
  uid: number | undefined;
  /** The login name from the user database (`os.userInfo().username`), for Windows pipe names. */
  user: string;
  /** The home directory from the user database (`os.userInfo().homedir`), not `$HOME`. */
  home: string;
  /** `os.tmpdir()` (from `$TMPDIR`, `%TEMP%`): only where an older qmd listened. */
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
 * The one place per person where qmd's shared servers and HTTP servers listen and keep their
 * records, locks and logs (made 0700 and checked by the caller, `src/relay/paths.ts`). Every
 * process of one user finds the same place whatever environment it was started with: MCP
 * clients strip it (the SDK passes only HOME, LOGNAME, PATH, SHELL, TERM and USER; Codex passes
 * no XDG_RUNTIME_DIR; a macOS client started from a stripped environment loses its per-user
 * `$TMPDIR`), so the place is derived from the uid and the user database alone:
 * - Linux, macOS and every other Unix: `/tmp/qmd-<uid>`, as tmux does (`/tmp/tmux-<uid>`,
 *   refused unless it is the user's own and closed to others; `$TMUX_TMPDIR` is tmux's only
 *   override). Short: a socket there is about 40 bytes, far under macOS's 104.
 * - Windows: `<home>\AppData\Local\qmd\run` (the default `%LOCALAPPDATA%`, from the user's
 *   profile, not from the variable); the sockets themselves are named pipes (`socketPath`).
 */
export function placeDir(facts: HostFacts): string {
  if (facts.platform === 'win32') return joinPath('win32', facts.home, 'AppData\\Local\\qmd\\run');
  return `/tmp/qmd-${facts.uid ?? 'user'}`;
}

/**
 * Where qmd 0.1's rule (before one place per person) put a user's sockets, for this process's
 * facts: `$XDG_RUNTIME_DIR/qmd` (Linux, and macOS if set), else `$TMPDIR/qmd` on macOS, else
 * `<tmp>/qmd-<uid>`; on Windows `%TEMP%\qmd` for the files. Used to find a server an older qmd
 * left running (`legacyPlaceDirs`), and by tests to play one.
 */
export function legacyPrivateDir(facts: HostFacts): string {
  const { platform, env } = facts;
  const runtime = env.XDG_RUNTIME_DIR?.trim();
  if (platform === 'win32') return joinPath(platform, facts.tmpdir, 'qmd');
  if (runtime) return joinPath(platform, runtime, 'qmd');
  const perUserTmp = env.TMPDIR?.trim();
  if (platform === 'darwin' && perUserTmp) return joinPath(platform, perUserTmp, 'qmd');
  return joinPath(platform, platform === 'darwin' ? '/tmp' : facts.tmpdir, `qmd-${facts.uid ?? 'user'}`);
}

/**
 * The places an older qmd may have left a server of this user, besides `placeDir`: the old rule
 * for this process's environment, and on Linux `/run/user/<uid>/qmd`, which the old rule gave
 * every client started from a desktop session (derived from the uid, so a client with a
 * stripped environment still looks there). A server at one of them is asked to hand over
 * (`retire`) or is stopped with the others. On macOS a stripped environment cannot know the
 * per-user `$TMPDIR` (it comes from `confstr`, not from anything a process inherits): a server
 * an older qmd started there is found only by a process that has that `$TMPDIR`.
 */
export function legacyPlaceDirs(facts: HostFacts): string[] {
  const dirs = [legacyPrivateDir(facts)];
  if (facts.platform === 'linux' && facts.uid !== undefined) dirs.push(`/run/user/${facts.uid}/qmd`);
  const place = placeDir(facts);
  return [...new Set(dirs)].filter((dir) => dir !== place);
}

/**
 * Where a server named `name` (e.g. `mcp-<hash>`) listens in `dir`:
 * - Windows: `\\.\pipe\qmd-<user>-<name>`: a named pipe per user and index (pipes live in one
 *   machine-wide namespace, so the user's name keeps two users' servers apart).
 * - elsewhere: `<dir>/<name>.sock`; when that is longer than `bind()` takes
 *   (`maxSocketPathBytes`), a name cut to fit (the caller's name ends in a hash, so the cut
 *   keeps it unique enough). `placeDir` never needs the cut; an old place may.
 */
export function socketPath(facts: HostFacts, dir: string, name: string): string {
  const { platform } = facts;
  if (usesNamedPipes(platform)) return `\\\\.\\pipe\\qmd-${pipeSafe(facts.user)}-${name}`;
  const max = maxSocketPathBytes(platform);
  const first = joinPath(platform, dir, `${name}.sock`);
  if (Buffer.byteLength(first) <= max) return first;
  // Keep the end of the name (the hash): a socket in a directory this deep needs a short name.
  const room = max - Buffer.byteLength(joinPath(platform, dir, '.sock'));
  return joinPath(platform, dir, `${name.slice(-Math.max(room, 1))}.sock`);
}

/**
 * Whether an old place's socket path was one qmd 0.1 could bind: a longer one sent its server
 * to `<tmp>/qmd-<uid>`, which on Linux and macOS is `placeDir` itself.
 */
export function fitsSocketPath(facts: HostFacts, path: string): boolean {
  return usesNamedPipes(facts.platform) || Buffer.byteLength(path) <= maxSocketPathBytes(facts.platform);
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
