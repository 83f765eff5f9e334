import { QmdError } from '../../errors.js';
import { type Failpoints, parseFailpoints } from '../../failpoints.js';
import type { LifecycleOptions } from '../../lifecycle/host.js';
import type { Log } from '../../log.js';

/** What `qmd mcp` reads from the environment (docs/design.md §6). */
export interface McpEnvConfig {
  drainTimeoutMs?: number;
  stepTimeoutMs?: number;
  watchdogMs?: number;
  traceFile?: string;
  inspectUrl?: string;
  failpoints: Failpoints;
}

function milliseconds(env: NodeJS.ProcessEnv, name: string): number | undefined {
  const raw = env[name]?.trim();
  if (raw === undefined || raw === '') return undefined;
  if (!/^\d+$/.test(raw))
    throw new QmdError('BAD_ARGUMENT', `${name} must be a whole number of milliseconds, got "${raw}"`);
  return Number(raw);
}

export function readMcpEnv(env: NodeJS.ProcessEnv, log?: Log): McpEnvConfig {
  const config: McpEnvConfig = { failpoints: parseEnvFailpoints(env, log) };
  const drain = milliseconds(env, 'QMD_DRAIN_TIMEOUT_MS');
  const step = milliseconds(env, 'QMD_STEP_TIMEOUT_MS');
  const watchdog = milliseconds(env, 'QMD_EXIT_WATCHDOG_MS');
  if (drain !== undefined) config.drainTimeoutMs = drain;
  if (step !== undefined) config.stepTimeoutMs = step;
  if (watchdog !== undefined) config.watchdogMs = watchdog;
  if (env.QMD_LIFECYCLE_TRACE?.trim()) config.traceFile = env.QMD_LIFECYCLE_TRACE.trim();
  if (env.QMD_INSPECT?.trim()) config.inspectUrl = env.QMD_INSPECT.trim();
  return config;
}

/** With `log`, each failpoint that fires says so on stderr: `QMD Debug: failpoint tool.query hit (hang)`. */
export function parseEnvFailpoints(env: NodeJS.ProcessEnv, log?: Log): Failpoints {
  try {
    return parseFailpoints(
      env.QMD_FAILPOINTS,
      log && ((name, action) => log.line(`QMD Debug: failpoint ${name} hit (${action})`)),
    );
  } catch (error) {
    throw new QmdError('BAD_ARGUMENT', (error as Error).message);
  }
}

/**
 * The lifecycle options `qmd mcp` takes from its environment, the same over stdio and HTTP:
 * the bounds, the trace file and, when `QMD_INSPECT` is set, the Stately inspector observer
 * (imported only then: ws and @statelyai/inspect stay off the start-up path).
 */
export async function envLifecycleOptions(
  config: McpEnvConfig,
  log: Log,
): Promise<Pick<LifecycleOptions, 'drainTimeoutMs' | 'stepTimeoutMs' | 'watchdogMs' | 'traceFile' | 'inspect'>> {
  const inspect: NonNullable<LifecycleOptions['inspect']> = [];
  if (config.inspectUrl) {
    const { createInspectObserver } = await import('../../viz/inspect-observer.js');
    inspect.push(createInspectObserver(config.inspectUrl, log).observe);
  }
  return {
    ...(config.drainTimeoutMs !== undefined && { drainTimeoutMs: config.drainTimeoutMs }),
    ...(config.stepTimeoutMs !== undefined && { stepTimeoutMs: config.stepTimeoutMs }),
    ...(config.watchdogMs !== undefined && { watchdogMs: config.watchdogMs }),
    ...(config.traceFile !== undefined && { traceFile: config.traceFile }),
    inspect,
  };
}
