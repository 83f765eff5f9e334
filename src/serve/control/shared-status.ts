import type { WatchStatus } from '../../mcp/deps.js';
import { readHung, readStartFailure } from '../../relay/health.js';
import { sharedPaths } from '../../relay/paths.js';
import { askStatus } from './client.js';

/** What `qmd status` says of the shared server of an index (`qmd mcp --shared`). */
export interface SharedStatus {
  running: boolean;
  pid?: number;
  /** The qmd version it runs (a newer relay replaces an older server: docs/design.md §2.2). */
  version?: string;
  /** Seconds since it started. */
  uptime?: number;
  /** Sessions live now. */
  sessions?: number;
  /** Sessions opened since it started. */
  served?: number;
  /** Sessions whose teardown is done. */
  ended?: number;
  modelLoaded?: boolean;
  /** The embedding model's spec (named, the index's, or the default); `null`: none. */
  model?: string | null;
  /** How it keeps the index fresh for all its clients (docs/design.md §6). */
  watch?: WatchStatus;
  socket: string;
  /** Why no server answers, as far as this command can tell. */
  why?: string;
  /** What a relay recorded when the server it started failed or hung (`SharedPaths.failure`). */
  lastFailure?: string;
  /** A server that accepted a relay but did not greet it in time (`src/relay/health.ts`): stopped or hung. */
  hung?: { pid: number | null; since: string };
}

/**
 * Asked of the live server over its socket (a control request, `src/serve/control/`): what it
 * says is true now, with no record file to go stale and no /proc. When nothing answers, the
 * relays' note of a failed start is shown, if there is one.
 */
export async function readSharedStatus(indexPath: string, env: NodeJS.ProcessEnv): Promise<SharedStatus> {
  const paths = sharedPaths(indexPath, env);
  const status = await askStatus(paths.socket);
  if ('unreachable' in status) {
    const lastFailure = readStartFailure(paths, 0)?.error;
    const hung = readHung(paths);
    return {
      running: false,
      socket: paths.socket,
      why: status.unreachable,
      ...(lastFailure !== undefined && { lastFailure }),
      ...(hung !== null && { hung: { pid: hung.pid, since: hung.since } }),
    };
  }
  return {
    running: true,
    pid: status.pid,
    version: status.version,
    uptime: Math.round(status.uptimeMs / 1000),
    sessions: status.sessions?.live ?? 0,
    served: status.sessions?.opened ?? 0,
    ended: status.sessions?.ended ?? 0,
    modelLoaded: status.model?.loaded ?? false,
    model: status.model?.name ?? null,
    ...(status.watch !== undefined && { watch: status.watch }),
    socket: paths.socket,
  };
}

export function formatSharedStatus(status: SharedStatus): string {
  if (!status.running && status.hung !== undefined) {
    const who = status.hung.pid === null ? 'it' : `pid ${status.hung.pid}`;
    return `Shared server: hung (${who} did not greet a relay in time, ${status.hung.since}); its clients are served alone: resume it (kill -CONT) or end it`;
  }
  if (!status.running) {
    const failure = status.lastFailure ? `; last failure: ${status.lastFailure}` : '';
    return `Shared server: not running (qmd mcp --shared starts one)${failure}`;
  }
  const model = `${status.model ?? 'no embedding model'} ${status.modelLoaded ? 'loaded' : 'not loaded'}`;
  return `Shared server: pid ${status.pid}, up ${status.uptime} s, ${status.sessions} session(s) live, ${status.ended} ended (${status.served} opened), ${model}`;
}
