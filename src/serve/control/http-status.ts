import type { WatchStatus } from '../../mcp/deps.js';
import { daemonControlPath } from '../../relay/paths.js';
import { askStatus } from './client.js';

/** What `qmd status` says of the index's HTTP server: the daemon, or a foreground `qmd mcp --http`. */
export interface HttpStatus {
  running: boolean;
  /** `daemon` (`--daemon`) or `foreground`. */
  mode?: 'daemon' | 'foreground';
  pid?: number;
  url?: string;
  /** Seconds since it started. */
  uptime?: number;
  /** How it keeps the index fresh (docs/design.md §6). */
  watch?: WatchStatus;
  /** The control socket asked. */
  socket: string;
}

/** Asked of the live server over its control socket, as `qmd mcp stop` asks it: never a PID from a file. */
export async function readHttpStatus(indexPath: string, env: NodeJS.ProcessEnv): Promise<HttpStatus> {
  const socket = daemonControlPath(indexPath, env);
  const status = await askStatus(socket);
  if ('unreachable' in status) return { running: false, socket };
  return {
    running: true,
    mode: status.kind === 'daemon' ? 'daemon' : 'foreground',
    pid: status.pid,
    ...(status.url !== undefined && { url: status.url }),
    uptime: Math.round(status.uptimeMs / 1000),
    ...(status.watch !== undefined && { watch: status.watch }),
    socket,
  };
}

export function formatHttpStatus(status: HttpStatus): string {
  if (!status.running) return 'HTTP server: not running (qmd mcp --http, or --http --daemon, starts one)';
  return `HTTP server: ${status.url ?? '?'}, pid ${status.pid}, up ${status.uptime} s (${status.mode}; qmd mcp stop stops it)`;
}
