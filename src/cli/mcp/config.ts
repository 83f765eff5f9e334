import { QmdError } from '../../errors.js';
import { type Failpoints, parseFailpoints } from '../../failpoints.js';

/** What `qmd mcp` reads from the environment (lifecycle.md §4). */
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

export function readMcpEnv(env: NodeJS.ProcessEnv): McpEnvConfig {
  const config: McpEnvConfig = { failpoints: parseEnvFailpoints(env) };
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

export function parseEnvFailpoints(env: NodeJS.ProcessEnv): Failpoints {
  try {
    return parseFailpoints(env.QMD_FAILPOINTS);
  } catch (error) {
    throw new QmdError('BAD_ARGUMENT', (error as Error).message);
  }
}
