import { readdirSync, readFileSync, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { processExists } from '../../lifecycle/parent.js';
import { type HostFacts, placeDir, usesNamedPipes } from '../../platform.js';
import { secureDir, servingDir } from '../../relay/paths.js';
import type { ProcessRecord } from '../../relay/process-record.js';
import { askStatus } from '../../serve/control/client.js';
import type { ServerStatus } from '../../serve/control/protocol.js';
import { placesLookedIn } from '../../serve/control/registry.js';
import { pidfilePath } from '../../serve/daemon/pidfile.js';
import { canVerifyProcesses, readIdentity } from '../../serve/daemon/proc.js';
import type { Check, Place, ProcessEntry, Role } from './report.js';

/**
 * Every qmd process of this user and what should not be among them, for `qmd doctor`: each
 * socket in every place is asked for its status (all at once, each bounded: a stopped server
 * costs `askWithinMs`, never a hang), each record is read, and each process record says what a
 * process is. A server is what answers on a socket (docs/design.md §6); a record only adds what
 * a socket cannot say (a relay's client) and what was left behind (a record whose pid is gone).
 *
 * What should not be, each with its fix:
 * - two servers that take clients for one index (two shared, or two HTTP);
 * - a socket nothing listens on (its server was killed), a record whose pid is gone;
 * - a socket that takes no answer within the bound (its server is stopped or hung);
 * - a relay serving its client alone: no shared server answers for its index.
 */
export interface ProcessScan {
  processes: ProcessEntry[];
  places: Place[];
  problems: Check[];
}

export interface ScanOptions {
  facts: HostFacts;
  /** The index doctor looks at: its HTTP daemon's pidfile lives beside it. */
  indexPath: string;
  /** How long one socket may take to answer (default 2000 ms). */
  askWithinMs?: number;
}

const SOCKET = /^(mcp|http)-([0-9a-f]{16})(?:-(\d+))?\.sock$/;
const SHARED_RECORD = /^mcp-[0-9a-f]{16}\.json$/;
const RETIRING_RECORD = /^mcp-[0-9a-f]{16}-retiring-(\d+)\.json$/;

type Probe =
  | { kind: 'answered'; status: ServerStatus }
  | { kind: 'silent' }
  | { kind: 'stale' }
  | { kind: 'gone' }
  | { kind: 'other'; why: string };

interface SocketFile {
  path: string;
  /** Other names of the same socket (the index's path is a hard link to a server's own). */
  links: string[];
  dir: string;
  family: 'mcp' | 'http';
  /** The pid in its name (a shared server's own socket), else the one its record names. */
  pid: number | undefined;
  probe: Probe;
}

/**
 * The places doctor looks in: this qmd's and every older qmd's (`placesLookedIn`), or, for
 * tests only, the ones `QMD_TEST_PLACES` lists (so that a test's doctor does not see the
 * servers other tests run at the same time in `/tmp/qmd-<uid>`).
 */
export function doctorPlaces(facts: HostFacts): Place[] {
  const only = facts.env.QMD_TEST_PLACES?.trim();
  const dirs = only ? only.split(delimiter).filter(Boolean) : placesLookedIn(facts);
  const current = new Set([placeDir(facts), servingDir(facts)]);
  return dirs.map((dir) => ({ dir, current: current.has(dir), exists: isDir(dir) }));
}

export async function scanProcesses(options: ScanOptions): Promise<ProcessScan> {
  const { facts, indexPath } = options;
  const places = doctorPlaces(facts);
  const problems: Check[] = [];
  if (usesNamedPipes(facts.platform)) {
    return { processes: recordsIn(places).map(fromRecord), places, problems };
  }
  // A place another user owns, or others can enter: its sockets could be anyone's server.
  for (const place of places) {
    const refusal = place.exists ? secureDir(place.dir) : null;
    if (refusal !== null) {
      problems.push({
        name: 'place not private',
        mark: 'fail',
        detail: `${refusal} (qmd refuses to serve or connect there)`,
        next: `ls -ld ${place.dir}; chmod 700 ${place.dir} if it is yours, else have it removed (sudo rm -r ${place.dir})`,
      });
    }
  }
  const sockets = await probeSockets(places, options.askWithinMs ?? 2000);
  const records = recordsIn(places);
  const byPid = new Map<number, ProcessEntry>();
  for (const record of records) byPid.set(record.pid, fromRecord(record));

  // Servers that answered, once each (a server answers on its own socket and on the index's link).
  const answered = new Map<number, { status: ServerStatus; socket: string }>();
  for (const s of sockets) {
    if (s.probe.kind !== 'answered') continue;
    const seen = answered.get(s.probe.status.pid);
    if (seen === undefined || s.path.length < seen.socket.length) {
      answered.set(s.probe.status.pid, { status: s.probe.status, socket: s.path });
    }
  }
  for (const { status, socket } of answered.values()) {
    const known = byPid.get(status.pid);
    byPid.set(status.pid, {
      pid: status.pid,
      role: serverRole(status),
      index: status.index,
      client: known?.client ?? null,
      startedAt: status.startedAt,
      ...(status.sessions !== undefined && { sessions: status.sessions.live }),
      version: status.version,
      socket,
    });
  }

  problems.push(...twoServers([...answered.values()].map((a) => a.status)));
  const stale: StaleFile[] = [];
  for (const s of sockets) {
    const names = [s.path, ...s.links];
    if (s.probe.kind === 'stale') {
      for (const path of names) stale.push({ path, group: groupOf(path), kind: 'socket', pid: s.pid });
    } else if (s.probe.kind === 'silent') {
      const who = s.pid === undefined ? 'its server' : `pid ${s.pid}`;
      problems.push({
        name: 'server does not answer',
        mark: 'fail',
        detail: `${s.path} took no answer within ${options.askWithinMs ?? 2000} ms (${who} is stopped or hung)`,
        next:
          s.pid === undefined
            ? `find its server with lsof ${s.path}, then kill it`
            : `kill -CONT ${s.pid} if it was stopped, else kill ${s.pid} (its clients move to a new server)`,
      });
      if (s.pid !== undefined) {
        const known = byPid.get(s.pid);
        byPid.set(s.pid, {
          ...(known ?? { pid: s.pid, role: 'shared', index: null, client: null, startedAt: null }),
          silent: true,
        });
      }
    } else if (s.probe.kind === 'other') {
      problems.push({ name: 'socket', mark: 'warn', detail: s.probe.why });
    }
  }
  stale.push(...staleRecords(places, indexPath));
  problems.push(...staleProblems(stale));
  problems.push(
    ...aloneRelays(
      records,
      [...answered.values()].map((a) => a.status),
    ),
  );
  const processes = [...byPid.values()].sort((a, b) => (a.startedAt ?? '').localeCompare(b.startedAt ?? ''));
  return { processes, places, problems };
}

function serverRole(status: ServerStatus): Role {
  if (status.kind === 'daemon') return 'daemon';
  if (status.kind === 'http') return 'http';
  return status.retiring === undefined ? 'shared' : 'retiring';
}

/** Two servers that take clients for one index: relays and HTTP clients are split between them. */
function twoServers(servers: ServerStatus[]): Check[] {
  const problems: Check[] = [];
  const groups = new Map<string, ServerStatus[]>();
  for (const s of servers) {
    const role = serverRole(s);
    if (role === 'retiring') continue;
    const key = `${role === 'shared' ? 'shared' : 'http'}\0${s.index}`;
    groups.set(key, [...(groups.get(key) ?? []), s]);
  }
  for (const [key, group] of groups) {
    if (group.length < 2) continue;
    const [family, index] = key.split('\0') as [string, string];
    const pids = group.map((s) => s.pid).sort((a, b) => a - b);
    problems.push({
      name: `two ${family === 'shared' ? 'shared' : 'HTTP'} servers for one index`,
      mark: 'fail',
      detail: `pids ${pids.join(' and ')} both serve ${index}`,
      next:
        family === 'shared'
          ? `qmd --index ${index} mcp stop --shared (stops both; the next client starts one, in one place)`
          : `kill ${pids.slice(1).join(' ')}`,
    });
  }
  return problems;
}

/** A relay whose index no shared server answers for: it serves its client alone. */
function aloneRelays(records: ProcessRecord[], servers: ServerStatus[]): Check[] {
  const served = new Set(servers.filter((s) => s.kind === 'shared').map((s) => s.index));
  return records
    .filter((r) => r.role === 'relay' && !served.has(r.index))
    .map((r) => ({
      name: 'relay serving alone',
      mark: 'fail' as const,
      detail: `pid ${r.pid}${r.client === null ? '' : ` (${r.client.name})`} serves its client alone: no shared server answers for ${r.index}`,
      next: `it rejoins on its own once one answers; restarting its client (pid ${r.ppid}) starts one at once`,
    }));
}

interface StaleFile {
  path: string;
  /** The place and the index's hash (`/tmp/qmd-0/mcp-<hash>`): what one server left. */
  group: string;
  kind: 'socket' | 'pidfile';
  pid: number | undefined;
  /** The index, where a record names it. */
  index?: string;
}

function groupOf(path: string): string {
  const match = /^(.*[/\\](?:mcp|http))-([0-9a-f]{16})/.exec(path);
  return match === null ? path : `${match[1]}-${match[2]}`;
}

/** A shared server's or the HTTP daemon's record whose pid is gone. */
function staleRecords(places: Place[], indexPath: string): StaleFile[] {
  const files: string[] = [];
  for (const place of places) {
    for (const name of list(place.dir)) {
      if (RETIRING_RECORD.test(name) || SHARED_RECORD.test(name)) files.push(join(place.dir, name));
    }
  }
  files.push(pidfilePath(indexPath));
  const stale: StaleFile[] = [];
  for (const path of files) {
    const record = readRecord(path);
    if (record?.pid === undefined || alive(record.pid)) continue;
    stale.push({
      path,
      group: groupOf(path),
      kind: 'pidfile',
      pid: record.pid,
      ...(record.index !== undefined && { index: record.index }),
    });
  }
  return stale;
}

/**
 * What a killed server left, one problem per server's files (its sockets and its record), with
 * the one command that removes them. Harmless to the next server (it takes the place over), but
 * nothing else removes a killed server's own socket, and `ls` of the place misleads a person.
 */
function staleProblems(stale: StaleFile[]): Check[] {
  const groups = new Map<string, StaleFile[]>();
  for (const file of stale) groups.set(file.group, [...(groups.get(file.group) ?? []), file]);
  return [...groups.values()].map((files) => {
    const kinds = new Set(files.map((f) => f.kind));
    const name = kinds.size === 2 ? 'stale socket and pidfile' : kinds.has('socket') ? 'stale socket' : 'stale pidfile';
    const pids = [...new Set(files.map((f) => f.pid).filter((p) => p !== undefined))];
    const index = files.find((f) => f.index !== undefined)?.index;
    const whose = `${index === undefined ? '' : `of ${index}, `}left by ${pids.length === 0 ? 'a server that is gone' : pids.length === 1 ? `pid ${pids[0]}, which is gone` : `pids ${pids.join(', ')}, which are gone`}`;
    return {
      name,
      mark: 'fail' as const,
      detail: whose,
      items: files.map((f) => `${f.path}: ${f.kind === 'socket' ? 'nothing listens on it' : 'its pid is gone'}`),
      next: `rm ${files.map((f) => f.path).join(' ')}`,
    };
  });
}

function readRecord(path: string): { pid?: number; index?: string } | undefined {
  try {
    const record = JSON.parse(readFileSync(path, 'utf8')) as { pid?: unknown; index?: unknown };
    return {
      ...(Number.isSafeInteger(record.pid) && { pid: record.pid as number }),
      ...(typeof record.index === 'string' && { index: record.index }),
    };
  } catch {
    // Gone, unreadable or not JSON: not a record doctor can judge.
    return undefined;
  }
}

function recordPid(path: string): number | undefined {
  return readRecord(path)?.pid;
}

async function probeSockets(places: Place[], ms: number): Promise<SocketFile[]> {
  const found: Array<Omit<SocketFile, 'probe'>> = [];
  for (const place of places) {
    // One entry per socket (inode): the index's path and a server's own name are one socket.
    const byInode = new Map<string, Omit<SocketFile, 'probe'>>();
    for (const name of list(place.dir)) {
      const match = SOCKET.exec(name);
      if (match === null) continue;
      const path = join(place.dir, name);
      const inode = inodeOf(path);
      if (inode === undefined) continue;
      const own = match[3] === undefined ? undefined : Number(match[3]);
      const seen = byInode.get(inode);
      if (seen !== undefined) {
        // Keep the own name (it carries the pid) first.
        if (own !== undefined) byInode.set(inode, { ...seen, path, links: [seen.path, ...seen.links], pid: own });
        else seen.links.push(path);
        continue;
      }
      const pid = own ?? (match[1] === 'mcp' ? recordPid(join(place.dir, `mcp-${match[2]}.json`)) : undefined);
      byInode.set(inode, { path, links: [], dir: place.dir, family: match[1] as 'mcp' | 'http', pid });
    }
    found.push(...byInode.values());
  }
  return Promise.all(found.map(async (s) => ({ ...s, probe: await probe(s.path, ms) })));
}

async function probe(path: string, ms: number): Promise<Probe> {
  const status = await askStatus(path, ms);
  if (!('unreachable' in status)) return { kind: 'answered', status };
  const why = status.unreachable;
  // The words of `ask` (src/serve/control/client.ts) for each way of not answering.
  if (why.includes('did not answer within')) return { kind: 'silent' };
  if (why.includes('left behind')) return { kind: 'stale' };
  if (why.includes('no such socket')) return { kind: 'gone' };
  return { kind: 'other', why };
}

/** The process records of every place (`<place>/procs/<pid>.json`) whose pid is alive. */
function recordsIn(places: Place[]): ProcessRecord[] {
  const records = new Map<number, ProcessRecord>();
  for (const place of places) {
    const dir = join(place.dir, 'procs');
    for (const name of list(dir)) {
      if (!/^\d+\.json$/.test(name)) continue;
      try {
        const record = JSON.parse(readFileSync(join(dir, name), 'utf8')) as ProcessRecord;
        if (Number.isSafeInteger(record.pid) && alive(record.pid)) records.set(record.pid, record);
      } catch {
        // Being written, or not a record.
      }
    }
  }
  return [...records.values()];
}

function fromRecord(record: ProcessRecord): ProcessEntry {
  return {
    pid: record.pid,
    role: record.role,
    index: record.index,
    client:
      record.client !== null
        ? `${record.client.name}${record.client.version === '' ? '' : ` ${record.client.version}`}`
        : record.role === 'plain' || record.role === 'relay'
          ? `pid ${record.ppid}`
          : null,
    startedAt: record.startedAt,
    version: record.version,
  };
}

/**
 * Whether `pid` runs: `kill(pid, 0)`, and where /proc is, not a zombie (a killed server whose
 * parent, the relay that started it, is gone too waits for an init that may not reap it).
 */
function alive(pid: number): boolean {
  return processExists(pid) && (!canVerifyProcesses() || readIdentity(pid) !== null);
}

function list(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

function isDir(dir: string): boolean {
  try {
    return statSync(dir).isDirectory();
  } catch {
    return false;
  }
}

function inodeOf(path: string): string | undefined {
  try {
    const s = statSync(path);
    return `${s.dev}:${s.ino}`;
  } catch {
    return undefined;
  }
}
