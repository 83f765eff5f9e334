import type { WatchStatus } from '../../mcp/deps.js';
import { readHung, readStartFailure } from '../../relay/health.js';
import { hostFacts, sharedPaths } from '../../relay/paths.js';
import type { ServerStatus } from './protocol.js';
import { type FoundServer, serversOfIndex } from './registry.js';

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
  /**
   * Every shared server of the index, this one included: at the place, at an older qmd's place,
   * and retiring (replaced, serving its last clients), each with its role (`registry.ts`).
   */
  servers: SharedServerEntry[];
}

/** One shared server of the index, as `qmd status` lists it. */
export interface SharedServerEntry {
  role: 'shared' | 'retiring';
  pid: number;
  version: string;
  /** Where it was found, and whether that is an older qmd's place. */
  place: string;
  oldPlace: boolean;
  /** Why it is retiring. */
  retiring?: string;
  /** Whether it answered (a retiring server of an older qmd has no socket to answer on). */
  answers: boolean;
  uptime?: number;
  sessions?: number;
  served?: number;
}

/**
 * Asked of the live servers over their sockets (control requests, `src/serve/control/`), in
 * every place (`registry.ts`): what they say is true now, with no record file to go stale and
 * no /proc. `running` and the fields beside it are the server a relay would use (the place's,
 * else one at an older qmd's place); `servers` lists all of them. When nothing answers, the
 * relays' note of a failed start is shown, if there is one.
 */
export async function readSharedStatus(indexPath: string, env: NodeJS.ProcessEnv): Promise<SharedStatus> {
  const facts = hostFacts(env);
  const paths = sharedPaths(indexPath, facts);
  const found = await serversOfIndex(indexPath, facts);
  const shared = found.servers.filter((s) => s.role === 'shared' || s.role === 'retiring');
  const servers: SharedServerEntry[] = [
    ...shared.map(entry),
    ...found.silent.map((s) => ({
      role: s.role,
      pid: s.pid,
      version: s.version,
      place: s.place,
      oldPlace: s.place !== paths.dir,
      retiring: s.why,
      answers: false,
    })),
  ];
  const current = shared.find((s) => s.role === 'shared' && !s.oldPlace) ?? shared.find((s) => s.role === 'shared');
  if (current === undefined) {
    const lastFailure = readStartFailure(paths, 0)?.error;
    const hung = readHung(paths);
    return {
      running: false,
      socket: paths.socket,
      why: `nothing answers on ${paths.socket}`,
      ...(lastFailure !== undefined && { lastFailure }),
      ...(hung !== null && { hung: { pid: hung.pid, since: hung.since } }),
      servers,
    };
  }
  const status = current.status;
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
    socket: current.socket,
    servers,
  };
}

function entry(found: FoundServer): SharedServerEntry {
  const status: ServerStatus = found.status;
  return {
    role: found.role === 'retiring' ? 'retiring' : 'shared',
    pid: status.pid,
    version: status.version,
    place: found.place,
    oldPlace: found.oldPlace,
    ...(status.retiring !== undefined && { retiring: status.retiring }),
    answers: true,
    uptime: Math.round(status.uptimeMs / 1000),
    sessions: status.sessions?.live ?? 0,
    served: status.sessions?.opened ?? 0,
  };
}

/**
 * One line per shared server of the index: the one relays use first (as before), then any at
 * an older qmd's place and any retiring, each saying which it is.
 */
export function formatSharedStatus(status: SharedStatus): string {
  const lines = [currentLine(status)];
  for (const server of status.servers) {
    if (server.role === 'shared' && server.pid === status.pid) continue;
    lines.push(otherLine(server));
  }
  return lines.join('\n');
}

function currentLine(status: SharedStatus): string {
  if (!status.running && status.hung !== undefined) {
    const who = status.hung.pid === null ? 'it' : `pid ${status.hung.pid}`;
    return `Shared server: hung (${who} did not greet a relay in time, ${status.hung.since}); its clients are served alone: resume it (kill -CONT) or end it`;
  }
  if (!status.running) {
    const failure = status.lastFailure ? `; last failure: ${status.lastFailure}` : '';
    return `Shared server: not running (qmd mcp --shared starts one)${failure}`;
  }
  const model = `${status.model ?? 'no embedding model'} ${status.modelLoaded ? 'loaded' : 'not loaded'}`;
  const where = status.servers.find((s) => s.pid === status.pid)?.oldPlace
    ? ` (qmd ${status.version}, at an older qmd's place ${status.socket})`
    : '';
  return `Shared server: pid ${status.pid}${where}, up ${status.uptime} s, ${status.sessions} session(s) live, ${status.ended} ended (${status.served} opened), ${model}`;
}

function otherLine(server: SharedServerEntry): string {
  const at = server.oldPlace ? `, at an older qmd's place ${server.place}` : '';
  if (server.role === 'shared')
    return `Shared server, another: pid ${server.pid} (qmd ${server.version}${at}), up ${server.uptime} s, ${server.sessions} session(s) live`;
  const why = server.retiring ?? 'retiring';
  if (!server.answers)
    return `Retiring shared server: pid ${server.pid} (qmd ${server.version}${at}, ${why}): does not answer; it leaves when its clients do`;
  return `Retiring shared server: pid ${server.pid} (qmd ${server.version}${at}, ${why}), up ${server.uptime} s, ${server.sessions} session(s) live; it leaves when they end (qmd mcp stop --shared --all ends it now)`;
}
