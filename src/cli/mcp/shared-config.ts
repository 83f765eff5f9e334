import { QmdError } from '../../errors.js';

/** What `qmd mcp --shared` (relay and server) reads from the environment. */
export interface SharedEnvConfig {
  /** `QMD_SHARED_IDLE_MS`: the shared server leaves after this long with no session (default: the machine's). */
  idleMs?: number;
  /** `QMD_SHARED_CONNECT_MS`: how long a relay tries to reach or start a server before serving alone. */
  connectBoundMs?: number;
  /** `QMD_SHARED_TRACE`: the shared server's trace (its machine and every session), JSONL. */
  traceFile?: string;
}

function wholeMs(env: NodeJS.ProcessEnv, name: string): number | undefined {
  const raw = env[name]?.trim();
  if (raw === undefined || raw === '') return undefined;
  if (!/^\d+$/.test(raw))
    throw new QmdError('BAD_ARGUMENT', `${name} must be a whole number of milliseconds, got "${raw}"`);
  return Number(raw);
}

/** Whether `qmd mcp` should relay to a shared server: `--shared`, or `QMD_SHARED=1`. */
export function sharedRequested(flag: boolean | undefined, env: NodeJS.ProcessEnv): boolean {
  return flag === true || env.QMD_SHARED?.trim() === '1';
}

export function readSharedEnv(env: NodeJS.ProcessEnv): SharedEnvConfig {
  const connect = wholeMs(env, 'QMD_SHARED_CONNECT_MS');
  const idle = wholeMs(env, 'QMD_SHARED_IDLE_MS');
  const trace = env.QMD_SHARED_TRACE?.trim();
  // No machine import here: the relay reads this too, and must not load the server's machines.
  return {
    ...(idle !== undefined && { idleMs: idle }),
    ...(connect !== undefined && { connectBoundMs: connect }),
    ...(trace ? { traceFile: trace } : {}),
  };
}
