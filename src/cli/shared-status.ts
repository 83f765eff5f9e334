import { sharedPaths } from '../relay/paths.js';
import { readPidfile, staleReason } from './daemon/pidfile.js';
import type { SharedRecord } from './mcp/shared-server.js';

/** What `qmd status` says of the shared server of an index (`qmd mcp --shared`). */
export interface SharedStatus {
  running: boolean;
  pid?: number;
  /** Seconds since it started. */
  uptime?: number;
  sessions?: number;
  served?: number;
  modelLoaded?: boolean;
  socket: string;
}

/** Read from the record the server keeps beside its socket, believed only if its process is still that one. */
export function readSharedStatus(indexPath: string, env: NodeJS.ProcessEnv): SharedStatus {
  const paths = sharedPaths(indexPath, env);
  const record = readPidfile(paths.record) as SharedRecord | null | 'corrupt';
  if (record === null || record === 'corrupt' || staleReason(record) !== null) {
    return { running: false, socket: paths.socket };
  }
  return {
    running: true,
    pid: record.pid,
    uptime: Math.max(0, Math.round((Date.now() - Date.parse(record.startedAt)) / 1000)),
    sessions: record.sessions,
    served: record.served,
    modelLoaded: record.modelLoaded,
    socket: paths.socket,
  };
}

export function formatSharedStatus(status: SharedStatus): string {
  if (!status.running) return 'Shared server: not running (qmd mcp --shared starts one)';
  const model = status.modelLoaded ? 'model loaded' : 'model not loaded';
  return `Shared server: pid ${status.pid}, up ${status.uptime} s, ${status.sessions} session(s) now (${status.served} served), ${model}`;
}
