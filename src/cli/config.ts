import { envText, MAX_TIMER_MS, nonBlank, parseWholeNumber } from '../env.js';
import { QmdError } from '../errors.js';
import { type Failpoints, parseFailpoints } from '../failpoints.js';
// The light leaves only: the command line must not load src/llm/ (nor node:crypto) to read its flags.
import { GPU_CHOICES, type GpuChoice, parseGpuChoice } from '../llm/gpu.js';
import { absoluteModelSpec } from '../llm/model-choice.js';
import { DEFAULT_EXPAND_MODEL, DEFAULT_RERANK_MODEL } from '../llm/model-defaults.js';
import type { Log } from '../log.js';
import { resolveIndexPath } from '../store/paths.js';
import { packageVersion } from './version.js';

/**
 * Every `QMD_*` variable and every global flag, read in one place into one typed object
 * (docs/design.md §6 lists them). A command reads only the sections it uses, on first use:
 * a malformed `QMD_HTTP_MAX_SESSIONS` fails `qmd mcp --http` with a clear error, and not
 * `qmd search`. A flag beats its variable, and no flag is passed on as a variable: a child
 * process that needs one (the shared server) is given the flag.
 */

/** The root's flags, as commander parses them for every command. */
export interface GlobalOptions {
  index?: string;
  debug?: boolean;
  embedModel?: string;
  gpu?: string;
  rerankModel?: string;
  expandModel?: string;
}

export interface EmbedConfig {
  /**
   * `--embed-model`, else `QMD_EMBED_MODEL`, a local path made absolute against the working
   * directory; unset: the model the index remembers, else `DEFAULT_EMBED_MODEL` (`embedStoreOptions`).
   */
  model?: string;
  /** Which of the two named `model`. */
  modelSource?: 'flag' | 'env';
  /** `QMD_EMBED_THREADS` (≥ 1): llama.cpp threads of every model; unset: half the CPU's math cores (src/llm/runtime.ts). */
  threads?: number;
  /** `QMD_DEBUG_EMBED=1`: a `QMD debug:` line before each embedding call and when the store closes. */
  debug: boolean;
}

/** The llama.cpp backend and the two models a `query` adds to the embedding model. */
export interface ModelsConfig {
  /** `--gpu`, else `QMD_GPU`, else `auto` (src/llm/gpu.ts). */
  gpu: GpuChoice;
  /** `--rerank-model`, else `QMD_RERANK_MODEL`, else the peer's default; `off`: none (undefined). */
  rerankModel?: string;
  /** `--expand-model`, else `QMD_EXPAND_MODEL`, else `QMD_GENERATE_MODEL` (the peer's name), else the peer's default; `off`: none. */
  expandModel?: string;
  /** Whether the value came from a flag or variable (then a relay hands it to the shared server as a flag). */
  given: { gpu: boolean; rerankModel: boolean; expandModel: boolean };
}

/** The word that turns a model off (`--rerank-model off`, `QMD_EXPAND_MODEL=off`). */
export const MODEL_OFF = 'off';

/** The bounds and observers of `qmd mcp`'s lifecycle, the same over stdio, HTTP and `--shared`. */
export interface LifecycleConfig {
  /** `QMD_DRAIN_TIMEOUT_MS`: how long the drain waits for handlers in flight. */
  drainTimeoutMs?: number;
  /** `QMD_STEP_TIMEOUT_MS`: how long one teardown step may take. */
  stepTimeoutMs?: number;
  /** `QMD_EXIT_WATCHDOG_MS`: the hard bound on the whole exit. */
  watchdogMs?: number;
  /** `QMD_LIFECYCLE_TRACE`: the machine's transitions, as JSONL, to this file. */
  traceFile?: string;
  /** `QMD_INSPECT`: the Stately inspector's WebSocket URL. */
  inspectUrl?: string;
}

/**
 * 30 minutes: an editor left open over lunch keeps its session, while a client that crashed
 * without a DELETE stops costing anything within the half hour (the peer never reaped them).
 * A reaped client gets 404 and, per the spec, starts a new session.
 */
export const DEFAULT_SESSION_IDLE_MS = 30 * 60 * 1000;
/** A 2025 HTTP session is one McpServer and transport (its cost: docs/design.md §5, "Start-up"): 64 bound the heap they hold. */
export const DEFAULT_MAX_SESSIONS = 64;
/**
 * A tool call is a few hundred bytes; the largest legal one (a long `multi_get` pattern, 64
 * collection names) is well under 64 KiB. 1 MiB leaves room for any honest client and keeps
 * a hostile one from making us buffer megabytes per request.
 */
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

export interface HttpConfig {
  /** `QMD_HTTP_SESSION_IDLE_MS` (≥ 1): a session with nothing open for this long is closed. */
  sessionIdleMs: number;
  /** `QMD_HTTP_MAX_SESSIONS` (≥ 1): more sessions than this evict the least recently used idle one. */
  maxSessions: number;
  /** `QMD_HTTP_MAX_BODY_BYTES` (≥ 1): a larger request body is refused with 413. */
  maxBodyBytes: number;
  /**
   * `QMD_HTTP_TOKEN`: the bearer token, for a server whose token comes from a secret store
   * (`--token-file` beats it; unset: the token file beside the index). Never a flag: a command
   * line is every local user's to read.
   */
  token?: string;
}

export interface SharedConfig {
  /** `QMD_SHARED=1`: `qmd mcp` relays to the index's shared server, as `--shared` does. */
  requested: boolean;
  /** `QMD_SHARED_IDLE_MS`: the shared server leaves after this long with no session (default: its machine's). */
  idleMs?: number;
  /** `QMD_SHARED_CONNECT_MS`: how long a relay tries to reach or start a server before serving alone. */
  connectBoundMs?: number;
  /** `QMD_SHARED_TRACE`: the shared server's trace (its machine and every session), JSONL. */
  traceFile?: string;
  /** `QMD_SHARED_REJOIN_MS`: a relay serving alone first tries to rejoin a shared server after this long (then twice as long each time). */
  rejoinMs?: number;
  /**
   * `QMD_SHARED_SILENCE_MS`: how long a shared server may say nothing while a relay waits for
   * replies before the relay asks it (over its control socket) whether it still answers.
   */
  silenceMs?: number;
  /** `QMD_SHARED_PLACE_CHECK_MS`: how often a shared server checks that its socket path is still its own. */
  placeCheckMs?: number;
  /**
   * The version a relay and its shared server go by when they meet (the greeting, `retire`):
   * package.json's, or `QMD_TEST_VERSION`, read only by tests, so one build can play an old
   * server and a newer relay (test/e2e/shared-upgrade.test.ts).
   */
  version: string;
}

/**
 * Whether a server keeps the index fresh while it serves (docs/design.md §6): on unless
 * `qmd mcp --no-watch` or `QMD_WATCH=0` turns it off.
 */
export interface WatchConfig {
  enabled: boolean;
  /** What turned it off, in the words a person typed: `--no-watch` or `QMD_WATCH=0`. */
  off?: '--no-watch' | 'QMD_WATCH=0';
}

/** Set by `qmd mcp --http --daemon` in the environment of the detached child it starts. */
export const DAEMON_CHILD_ENV = 'QMD_DAEMON_CHILD';

export interface Config {
  /** `--index`, else `QMD_INDEX`, else `INDEX_PATH`, else the cache directory's (`resolveIndexPath`). */
  readonly indexPath: string;
  /** `--debug`: stack traces with errors. */
  readonly debug: boolean;
  readonly embed: EmbedConfig;
  readonly models: ModelsConfig;
  readonly lifecycle: LifecycleConfig;
  /** `QMD_FAILPOINTS` (src/failpoints.ts); each one that fires says so on the log. */
  readonly failpoints: Failpoints;
  readonly http: HttpConfig;
  readonly shared: SharedConfig;
  /** `QMD_WATCH` (`0` or `1`), or `qmd mcp --no-watch` (`withWatchOff`). */
  readonly watch: WatchConfig;
  /** `QMD_DAEMON_CHILD=1`: this process is the detached child of `qmd mcp --http --daemon`. */
  readonly daemonChild: boolean;
  /**
   * `qmd mcp` runs its queries in the query worker (docs/design.md §8.4) unless
   * `QMD_QUERY_WORKER=0`: a switch for benchmarks and for checking that
   * test/e2e/query-awake.test.ts fails without it, not a user setting.
   */
  readonly queryWorker: boolean;
  /**
   * `QMD_PROGRESS_INTERVAL_MS` (≥ 1): when stderr is not a terminal, long commands print a
   * progress line at least this often (unset: every 10 s, `src/cli/terminal/progress.ts`).
   */
  readonly progressIntervalMs: number | undefined;
  /**
   * `QMD_DOWNLOAD_IDLE_MS` (≥ 1): a model download that receives nothing for this long gives
   * up with a line saying so (unset: 30 s, `src/llm/model-download.ts`, which reads it there).
   */
  readonly downloadIdleMs: number | undefined;
}

/** Reads the flags now and each variable section when first used (then keeps it). Never throws itself. */
export function readConfig(options: GlobalOptions, env: NodeJS.ProcessEnv, log?: Log): Config {
  const embed = once(() => readEmbed(options, env));
  const models = once(() => readModels(options, env));
  const lifecycle = once(() => readLifecycle(env));
  const failpoints = once(() => readFailpoints(env, log));
  const http = once(() => readHttp(env));
  const shared = once(() => readShared(env));
  const watch = once(() => readWatch(env));
  return {
    indexPath: resolveIndexPath({ ...(options.index !== undefined && { flag: options.index }), env }),
    debug: options.debug ?? false,
    get embed() {
      return embed();
    },
    get models() {
      return models();
    },
    get lifecycle() {
      return lifecycle();
    },
    get failpoints() {
      return failpoints();
    },
    get http() {
      return http();
    },
    get shared() {
      return shared();
    },
    get watch() {
      return watch();
    },
    get queryWorker() {
      return envText(env, 'QMD_QUERY_WORKER') !== '0';
    },
    get daemonChild() {
      return envText(env, DAEMON_CHILD_ENV) === '1';
    },
    get progressIntervalMs() {
      return milliseconds(env, 'QMD_PROGRESS_INTERVAL_MS', 1);
    },
    get downloadIdleMs() {
      return milliseconds(env, 'QMD_DOWNLOAD_IDLE_MS', 1);
    },
  };
}

function readEmbed(options: GlobalOptions, env: NodeJS.ProcessEnv): EmbedConfig {
  const flag = nonBlank(options.embedModel);
  const model = flag ?? envText(env, 'QMD_EMBED_MODEL');
  const threads = whole(env, 'QMD_EMBED_THREADS', { min: 1 });
  return {
    ...(model !== undefined && { model: absoluteModelSpec(model), modelSource: flag === undefined ? 'env' : 'flag' }),
    ...(threads !== undefined && { threads }),
    debug: envText(env, 'QMD_DEBUG_EMBED') === '1',
  };
}

function readModels(options: GlobalOptions, env: NodeJS.ProcessEnv): ModelsConfig {
  const gpuText = nonBlank(options.gpu) ?? envText(env, 'QMD_GPU');
  let gpu: GpuChoice = 'auto';
  if (gpuText !== undefined) {
    const parsed = parseGpuChoice(gpuText);
    if (parsed === undefined) {
      const source = nonBlank(options.gpu) !== undefined ? '--gpu' : 'QMD_GPU';
      throw new QmdError('BAD_ARGUMENT', `${source} must be one of ${GPU_CHOICES.join(', ')}, got "${gpuText}"`);
    }
    gpu = parsed;
  }
  const rerank = nonBlank(options.rerankModel) ?? envText(env, 'QMD_RERANK_MODEL');
  const expand =
    nonBlank(options.expandModel) ?? envText(env, 'QMD_EXPAND_MODEL') ?? envText(env, 'QMD_GENERATE_MODEL');
  // Absolute, as the embedding model's: a relay hands it to a shared server with another cwd.
  const model = (given: string | undefined, fallback: string): string | undefined =>
    given === undefined ? fallback : given.trim().toLowerCase() === MODEL_OFF ? undefined : absoluteModelSpec(given);
  const rerankModel = model(rerank, DEFAULT_RERANK_MODEL);
  const expandModel = model(expand, DEFAULT_EXPAND_MODEL);
  return {
    gpu,
    ...(rerankModel !== undefined && { rerankModel }),
    ...(expandModel !== undefined && { expandModel }),
    given: { gpu: gpuText !== undefined, rerankModel: rerank !== undefined, expandModel: expand !== undefined },
  };
}

function readLifecycle(env: NodeJS.ProcessEnv): LifecycleConfig {
  return {
    drainTimeoutMs: milliseconds(env, 'QMD_DRAIN_TIMEOUT_MS'),
    stepTimeoutMs: milliseconds(env, 'QMD_STEP_TIMEOUT_MS'),
    watchdogMs: milliseconds(env, 'QMD_EXIT_WATCHDOG_MS'),
    traceFile: envText(env, 'QMD_LIFECYCLE_TRACE'),
    inspectUrl: envText(env, 'QMD_INSPECT'),
  };
}

/**
 * With `log`, each failpoint that fires says so on stderr (`QMD Debug: failpoint tool.query hit
 * (hang)`), and so does one its signal aborts (`… aborted (reason)`).
 */
function readFailpoints(env: NodeJS.ProcessEnv, log: Log | undefined): Failpoints {
  try {
    return parseFailpoints(
      env.QMD_FAILPOINTS,
      log && ((name, action) => log.line(`QMD Debug: failpoint ${name} hit (${action})`)),
      log &&
        ((name, reason) =>
          log.line(
            `QMD Debug: failpoint ${name} aborted (${reason instanceof Error ? reason.message : String(reason)})`,
          )),
    );
  } catch (error) {
    throw new QmdError('BAD_ARGUMENT', (error as Error).message);
  }
}

function readHttp(env: NodeJS.ProcessEnv): HttpConfig {
  return {
    sessionIdleMs: milliseconds(env, 'QMD_HTTP_SESSION_IDLE_MS', 1) ?? DEFAULT_SESSION_IDLE_MS,
    maxSessions: whole(env, 'QMD_HTTP_MAX_SESSIONS', { min: 1 }) ?? DEFAULT_MAX_SESSIONS,
    maxBodyBytes: whole(env, 'QMD_HTTP_MAX_BODY_BYTES', { min: 1 }) ?? DEFAULT_MAX_BODY_BYTES,
    ...(envText(env, 'QMD_HTTP_TOKEN') !== undefined && { token: envText(env, 'QMD_HTTP_TOKEN') }),
  };
}

function readShared(env: NodeJS.ProcessEnv): SharedConfig {
  return {
    requested: envText(env, 'QMD_SHARED') === '1',
    idleMs: milliseconds(env, 'QMD_SHARED_IDLE_MS'),
    connectBoundMs: milliseconds(env, 'QMD_SHARED_CONNECT_MS'),
    traceFile: envText(env, 'QMD_SHARED_TRACE'),
    rejoinMs: milliseconds(env, 'QMD_SHARED_REJOIN_MS', 1),
    silenceMs: milliseconds(env, 'QMD_SHARED_SILENCE_MS', 1),
    placeCheckMs: milliseconds(env, 'QMD_SHARED_PLACE_CHECK_MS', 1),
    version: envText(env, 'QMD_TEST_VERSION') ?? packageVersion(),
  };
}

function readWatch(env: NodeJS.ProcessEnv): WatchConfig {
  const raw = envText(env, 'QMD_WATCH');
  if (raw === undefined || raw === '1') return { enabled: true };
  if (raw === '0') return { enabled: false, off: 'QMD_WATCH=0' };
  throw new QmdError('BAD_ARGUMENT', `QMD_WATCH must be 0 (no watching) or 1, got "${raw}"`);
}

/**
 * `qmd mcp --no-watch`: the same configuration with watching off, every other section still
 * read on first use (a copy would read them all now, and fail on a variable this command never uses).
 */
export function withWatchOff(config: Config): Config {
  return Object.create(config, {
    watch: { value: { enabled: false, off: '--no-watch' } satisfies WatchConfig, enumerable: true },
  }) as Config;
}

/** A delay: whole milliseconds a Node timer can hold (`MAX_TIMER_MS`). */
function milliseconds(env: NodeJS.ProcessEnv, name: string, min = 0): number | undefined {
  return whole(env, name, { min, max: MAX_TIMER_MS, unit: 'milliseconds' });
}

function whole(
  env: NodeJS.ProcessEnv,
  name: string,
  { min = 0, max = Number.MAX_SAFE_INTEGER, unit }: { min?: number; max?: number; unit?: string },
): number | undefined {
  const raw = envText(env, name);
  if (raw === undefined) return undefined;
  const value = parseWholeNumber(raw, min, max);
  if (value === undefined) {
    const range = max === Number.MAX_SAFE_INTEGER ? `≥ ${min}` : `from ${min} to ${max}`;
    throw new QmdError(
      'BAD_ARGUMENT',
      `${name} must be a whole number${unit ? ` of ${unit}` : ''} ${range}, got "${raw}"`,
    );
  }
  return value;
}

function once<T>(read: () => T): () => T {
  let cached: { value: T } | undefined;
  return () => {
    cached ??= { value: read() };
    return cached.value;
  };
}
