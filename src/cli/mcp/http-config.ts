import { QmdError } from '../../errors.js';
import { DEFAULT_MAX_BODY_BYTES } from '../../mcp/http/body.js';

/** What `qmd mcp --http` reads from the environment besides `readMcpEnv`. */
export interface HttpEnvConfig {
  /** `QMD_HTTP_SESSION_IDLE_MS`: a session with nothing open for this long is closed. */
  sessionIdleMs: number;
  /** `QMD_HTTP_MAX_SESSIONS`: more sessions than this evict the least recently used idle one. */
  maxSessions: number;
  /** `QMD_HTTP_MAX_BODY_BYTES`: a larger request body is refused with 413. */
  maxBodyBytes: number;
}

/**
 * 30 minutes: an editor left open over lunch keeps its session, while a client that crashed
 * without a DELETE stops costing anything within the half hour (the peer never reaped them).
 * A reaped client gets 404 and, per the spec, starts a new session.
 */
export const DEFAULT_SESSION_IDLE_MS = 30 * 60 * 1000;
/** A session is one McpServer and transport: 39 KB of heap, measured (500 built, SDK 1.32.2). */
export const DEFAULT_MAX_SESSIONS = 64;

function positive(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name]?.trim();
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < 1)
    throw new QmdError('BAD_ARGUMENT', `${name} must be a whole number ≥ 1, got "${raw}"`);
  return Number(raw);
}

export function readHttpEnv(env: NodeJS.ProcessEnv): HttpEnvConfig {
  return {
    sessionIdleMs: positive(env, 'QMD_HTTP_SESSION_IDLE_MS', DEFAULT_SESSION_IDLE_MS),
    maxSessions: positive(env, 'QMD_HTTP_MAX_SESSIONS', DEFAULT_MAX_SESSIONS),
    maxBodyBytes: positive(env, 'QMD_HTTP_MAX_BODY_BYTES', DEFAULT_MAX_BODY_BYTES),
  };
}
