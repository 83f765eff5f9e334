import { randomUUID } from 'node:crypto';
import { linkSync, readFileSync, rmSync, unlinkSync } from 'node:fs';
import { processExists } from '../../lifecycle/parent.js';
import { replacePrivateFile, writePrivateFile } from '../../private-file.js';
import { askStatus } from '../control/client.js';
import { canVerifyProcesses, identityMismatch, type ProcessIdentity, readIdentity } from './proc.js';

/**
 * A server's record: the HTTP daemon's pidfile `<index>.mcp.pid` (beside the index it serves,
 * so `--index` picks the daemon and its pidfile together), and the shared server's record beside
 * its socket. It says who claimed the index (one server per index) and where to find it; it is
 * never the authority on whether that server runs, and nothing ever signals the PID in it. The
 * authority is the server's own control socket (`src/serve/control/`), whose path is derived from
 * the index, not read from here: a tampered record can point at nothing.
 */
export interface PidRecord {
  pid: number;
  /** Random per process: tells this run's record from a later run's, with no /proc. */
  instance: string;
  host: string;
  port: number;
  url: string;
  index: string;
  version: string;
  startedAt: string;
  /** The control socket (or Windows pipe) that answers for this server. */
  control: string;
  /** Linux only, an extra check (`src/serve/daemon/proc.ts`): absent where /proc is not. */
  identity?: Omit<ProcessIdentity, 'pid'>;
  /**
   * Set once its control socket listens (`markListening`): from then on a holder whose socket
   * does not answer is gone, whatever its PID says (a SIGKILLed server's PID can still be
   * there, unreaped, when a new server looks at its record).
   */
  listening?: boolean;
}

/** The part of a record that says who this process is. */
export function selfRecord(): Pick<PidRecord, 'pid' | 'instance' | 'identity'> {
  const identity = readIdentity(process.pid);
  return {
    pid: process.pid,
    instance: randomUUID(),
    ...(identity !== null && {
      identity: { startTicks: identity.startTicks, bootId: identity.bootId, cmdline: identity.cmdline },
    }),
  };
}

export function pidfilePath(indexPath: string): string {
  return `${indexPath}.mcp.pid`;
}

export function daemonLogPath(indexPath: string): string {
  return `${indexPath}.mcp.log`;
}

/** The record, `null` when there is no file, or `'corrupt'` when it cannot be read as one. */
export function readPidfile(path: string): PidRecord | null | 'corrupt' {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  try {
    const record = JSON.parse(text) as PidRecord;
    const valid =
      Number.isSafeInteger(record.pid) &&
      typeof record.instance === 'string' &&
      typeof record.url === 'string' &&
      typeof record.startedAt === 'string';
    return valid ? record : 'corrupt';
  } catch {
    return 'corrupt';
  }
}

export function removePidfile(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // Already gone: that is what we wanted.
  }
}

/**
 * Between claiming its record and listening on its socket a server opens its index: a holder
 * whose socket does not answer yet is "starting" for this long after its record's start time,
 * if its PID exists (and, where /proc is, is still the process that wrote it).
 */
export const STARTING_WITHIN_MS = 30_000;

/**
 * Whether the holder of a record is alive, judged without /proc: its control socket answers
 * (`control`, derived from the index by the caller, never taken from the record), or it is
 * starting (see `STARTING_WITHIN_MS`). A record with neither is stale.
 */
export async function holderAlive(holder: PidRecord, control: string, now = Date.now()): Promise<boolean> {
  if (!('unreachable' in (await askStatus(control)))) return true;
  if (holder.listening === true) return false;
  const age = now - Date.parse(holder.startedAt);
  if (!(age >= 0 && age < STARTING_WITHIN_MS) || !processExists(holder.pid)) return false;
  // Where /proc is, every genuine record carries the holder's identity, which tells a recycled
  // PID (or a forged record) from the holder; elsewhere the age bound must do.
  if (canVerifyProcesses())
    return holder.identity !== undefined && identityMismatch(holder.identity, readIdentity(holder.pid)) === null;
  return true;
}

/** Says in the record at `path` (if it is still this run's) that its control socket listens. */
export function markListening(path: string, record: PidRecord): void {
  const current = readPidfile(path);
  if (current === null || current === 'corrupt' || current.instance !== record.instance) return;
  replacePrivateFile(
    path,
    `${path}.${record.pid}.listening`,
    `${JSON.stringify({ ...record, listening: true }, null, 2)}\n`,
  );
}

export type ClaimResult = { claimed: true } | { claimed: false; holder: PidRecord };

/**
 * Writes `record` as the record at `path` unless a live server holds it (`holderAlive`). The
 * file appears whole or not at all (written aside, then hard-linked into place; `link` fails if
 * the name exists), so two servers starting at once cannot both win, and a reader never sees
 * half a record. A stale or corrupt record is replaced.
 */
export async function claimPidfile(path: string, record: PidRecord): Promise<ClaimResult> {
  const aside = `${path}.${record.pid}.tmp`;
  // A leftover of a crash, or a link planted there, goes first: the record is made afresh.
  rmSync(aside, { force: true });
  writePrivateFile(aside, `${JSON.stringify(record, null, 2)}\n`, 'exclusive');
  try {
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        linkSync(aside, path);
        return { claimed: true };
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
      const holder = readPidfile(path);
      if (holder !== null && holder !== 'corrupt' && (await holderAlive(holder, record.control)))
        return { claimed: false, holder };
      removePidfile(path);
    }
    throw new Error(`could not claim ${path}: another server keeps replacing it`);
  } finally {
    removePidfile(aside);
  }
}

/** Removes the record if it is still this run's (a newer server's is left alone). */
export function releasePidfile(path: string, instance: string): void {
  const record = readPidfile(path);
  if (record !== null && record !== 'corrupt' && record.instance === instance) removePidfile(path);
}
