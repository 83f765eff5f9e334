import { readdirSync, readFileSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { processExists } from '../../lifecycle/parent.js';
import { type HostFacts, legacyPlaceDirs, placeDir, usesNamedPipes } from '../../platform.js';
import {
  daemonControlPath,
  legacyDaemonControlPaths,
  legacySharedPaths,
  ownSocketPath,
  retiringRecords,
  type SharedPaths,
  servingDir,
  sharedPaths,
} from '../../relay/paths.js';
import { type ProcessRecord, readProcessRecords } from '../../relay/process-record.js';
import { askStatus } from './client.js';
import type { ServerStatus } from './protocol.js';

/**
 * Every qmd server of this user, found where they live (docs/design.md §7): the place
 * (`/tmp/qmd-<uid>`; on Windows named pipes and `<home>\AppData\Local\qmd\run`) and the places
 * an older qmd used (`legacyPlaceDirs`). A server is what answers on a socket whose path is
 * derived from an index (never a pid read from a file): `qmd status`, `qmd mcp stop` and a
 * future `qmd doctor` all ask here.
 *
 * - `shared`: an index's shared server, on `mcp-<hash>.sock` (in the place, or an old place);
 * - `retiring`: one that gave its place up and leaves with its last client, on its own
 *   socket `mcp-<hash>-<pid>.sock`, the pid named by its record `mcp-<hash>-retiring-<pid>.json`;
 * - `http` / `daemon`: the index's HTTP server (foreground or `--daemon`) on `http-<hash>.sock`.
 */
export type ServerRole = 'shared' | 'retiring' | 'http' | 'daemon';

export interface FoundServer {
  role: ServerRole;
  /** The directory it was found in, and whether that is an older qmd's place. */
  place: string;
  oldPlace: boolean;
  /** The socket (or pipe) that answered. */
  socket: string;
  status: ServerStatus;
}

/**
 * A retiring server that does not answer: an older qmd, which gave up its socket when asked to
 * retire and has no socket of its own (the relay that asked left its record), or one stopped.
 * Listed while its pid exists.
 */
export interface SilentServer {
  role: 'retiring';
  place: string;
  pid: number;
  version: string;
  why: string;
}

export interface IndexServers {
  servers: FoundServer[];
  silent: SilentServer[];
  /** Every directory looked in, the place first. */
  looked: string[];
}

/** How long one server may take to answer `status` here (a listing asks many at once). */
const ASK_WITHIN_MS = 3000;

/** The directories looked in: where this process serves, then every old place. */
export function placesLookedIn(facts: HostFacts): string[] {
  return [...new Set([servingDir(facts), placeDir(facts), ...legacyPlaceDirs(facts)])];
}

/** Every server of one index, in every place: the shared ones (current, old place, retiring) and the HTTP one. */
export async function serversOfIndex(indexPath: string, facts: HostFacts): Promise<IndexServers> {
  const here = sharedPaths(indexPath, facts);
  const places: Array<{ paths: SharedPaths; oldPlace: boolean }> = [
    { paths: here, oldPlace: false },
    ...legacySharedPaths(indexPath, facts).map((paths) => ({ paths, oldPlace: paths.dir !== placeDir(facts) })),
  ];
  const asks: Array<Promise<FoundServer | SilentServer | null>> = [];
  for (const { paths, oldPlace } of places) {
    asks.push(ask(paths.socket, paths.dir, oldPlace, 'shared'));
    for (const record of retiringRecords(paths)) asks.push(askRetiring(record, paths, oldPlace, facts));
  }
  const http = [daemonControlPath(indexPath, facts), ...legacyDaemonControlPaths(indexPath, facts)];
  for (const socket of new Set(http)) asks.push(ask(socket, dirOf(socket), socket !== http[0], 'http'));
  const answers = (await Promise.all(asks)).filter((a) => a !== null);
  return {
    servers: answers.filter((a): a is FoundServer => 'status' in a),
    silent: answers.filter((a): a is SilentServer => !('status' in a)),
    looked: [...new Set(places.map((p) => p.paths.dir))],
  };
}

/**
 * Every server of this user that answers, whatever its index: each `mcp-*.sock` (the index's
 * and a server's own) and `http-*.sock` in every place, one entry per server. Windows pipes
 * cannot be listed this way: none there.
 */
export async function everyServer(facts: HostFacts): Promise<FoundServer[]> {
  if (usesNamedPipes(facts.platform)) return [];
  const asks: Array<Promise<FoundServer | SilentServer | null>> = [];
  const current = placeDir(facts);
  for (const dir of placesLookedIn(facts)) {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      continue;
    }
    for (const name of names) {
      // The index's socket (`mcp-<hash>.sock`), a server's own (`mcp-<hash>-<pid>.sock`), HTTP's.
      const match = /^(mcp|http)-[0-9a-f]{16}(-\d+)?\.sock$/.exec(name);
      if (match === null) continue;
      asks.push(ask(join(dir, name), dir, dir !== current, match[1] === 'http' ? 'http' : 'shared'));
    }
  }
  const found = (await Promise.all(asks)).filter((a): a is FoundServer => a !== null && 'status' in a);
  // A server answers on its own socket and on the index's link to it: once, by the index's name.
  const byPid = new Map<number, FoundServer>();
  for (const server of found) {
    const seen = byPid.get(server.status.pid);
    if (seen === undefined || server.socket.length < seen.socket.length) byPid.set(server.status.pid, server);
  }
  return [...byPid.values()];
}

/** This user's qmd processes that said what they are (`src/relay/process-record.ts`). */
export function everyProcess(facts: HostFacts): ProcessRecord[] {
  return readProcessRecords(facts);
}

async function ask(socket: string, place: string, oldPlace: boolean, role: ServerRole): Promise<FoundServer | null> {
  const status = await askStatus(socket, ASK_WITHIN_MS);
  if ('unreachable' in status) return null;
  const actual: ServerRole =
    status.kind === 'daemon'
      ? 'daemon'
      : status.kind === 'http'
        ? 'http'
        : status.retiring !== undefined || role === 'retiring'
          ? 'retiring'
          : 'shared';
  return { role: actual, place, oldPlace, socket, status };
}

/**
 * A retiring record: its server answers on the socket derived from the pid in the file's name;
 * or it is silent and alive (listed from its record); or it is gone (its record removed).
 */
async function askRetiring(
  record: string,
  paths: SharedPaths,
  oldPlace: boolean,
  facts: HostFacts,
): Promise<FoundServer | SilentServer | null> {
  const pid = Number(/-retiring-(\d+)\.json$/.exec(record)?.[1]);
  const answered = await ask(ownSocketPath(paths, pid, facts), paths.dir, oldPlace, 'retiring');
  if (answered !== null) return answered;
  if (processExists(pid)) {
    const { version, retiring } = readRecord(record);
    return { role: 'retiring', place: paths.dir, pid, version: version ?? '?', why: retiring ?? 'retiring' };
  }
  try {
    unlinkSync(record);
  } catch {
    // Gone meanwhile.
  }
  return null;
}

function readRecord(path: string): { version?: string; retiring?: string } {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as { version?: string; retiring?: string };
  } catch {
    return {};
  }
}

function dirOf(socket: string): string {
  const at = Math.max(socket.lastIndexOf('/'), socket.lastIndexOf('\\'));
  return at > 0 ? socket.slice(0, at) : socket;
}
