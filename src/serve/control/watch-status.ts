import type { WatchStatus } from '../../mcp/deps.js';
import { formatWatch, pickWatch, type WatchStructured } from '../../mcp/watch-status.js';
import type { WatchWriter } from '../../watch/types.js';
import type { HttpStatus } from './http-status.js';
import type { SharedStatus } from './shared-status.js';

/**
 * What `qmd status` says of the watching of an index (docs/design.md §6). A watcher's report
 * lives in its process: the servers that answer on a control socket (the shared server, the
 * HTTP server) give theirs; a plain `qmd mcp` over stdio has no socket, so for it (and for
 * `qmd update --watch`) only who holds the writer's place is known, from the index, when the
 * engine can read it (`WatchWriter`). Its clients' `status` tool says the rest.
 */
export interface WatchingStatus {
  /** Each server that answered, with its watcher's report. */
  servers: Array<{ kind: 'shared' | 'http'; pid: number } & WatchStructured>;
  /** Who holds the writer's place, as the index says; null: nobody; absent: not known here. */
  writer?: { pid: number } | null;
}

export async function readWatchingStatus(
  indexPath: string,
  shared: SharedStatus,
  http: HttpStatus,
  writerOf: WatchWriter | undefined,
): Promise<WatchingStatus> {
  const servers: WatchingStatus['servers'] = [];
  const add = (kind: 'shared' | 'http', pid: number | undefined, watch: WatchStatus | undefined): void => {
    if (pid !== undefined && watch !== undefined) servers.push({ kind, pid, ...pickWatch(watch) });
  };
  add('shared', shared.pid, shared.running ? shared.watch : undefined);
  add('http', http.pid, http.running ? http.watch : undefined);
  if (writerOf === undefined) return { servers };
  try {
    return { servers, writer: await writerOf(indexPath) };
  } catch {
    // What cannot be read is not said; the rest of the status stands.
    return { servers };
  }
}

/** The `Watching:` lines of `qmd status`: each server's, then the writer when no server said it. */
export function formatWatchingStatus(status: WatchingStatus, now = Date.now()): string {
  const lines = status.servers.map((s) =>
    formatWatch(fromStructured(s), {
      who: `the ${s.kind === 'shared' ? 'shared' : 'HTTP'} server (pid ${s.pid})`,
      now,
    }),
  );
  const writerSaid = status.servers.some((s) => s.role === 'writer' || s.writerPid !== undefined);
  if (!writerSaid && status.writer) {
    lines.push(`Watching: pid ${status.writer.pid} writes the index as notes change (a qmd mcp or qmd update --watch)`);
  } else if (lines.length === 0) {
    lines.push(
      status.writer === null
        ? 'Watching: nothing watches this index now (qmd mcp keeps it fresh while it serves; qmd update --watch without a server)'
        : 'Watching: no server of this index reports it here (a qmd mcp keeps it fresh while it serves; its status tool says how)',
    );
  }
  return lines.join('\n');
}

function fromStructured(s: WatchStructured): WatchStatus {
  return {
    ...s,
    lastChangeAt: s.lastChangeAt === null ? null : Date.parse(s.lastChangeAt),
    lastIndexedAt: s.lastIndexedAt === null ? null : Date.parse(s.lastIndexedAt),
  };
}
