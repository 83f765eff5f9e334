import { linkSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { identityMismatch, type ProcessIdentity, readIdentity } from './proc.js';

/**
 * The daemon's pidfile: `<index>.mcp.pid`, next to the index it serves.
 *
 * Why there: a daemon serves one index, so `--index`/`QMD_INDEX` pick the daemon and its
 * pidfile together (`qmd mcp stop --index X` stops X's); the index directory exists and is
 * writable on every platform (WAL needs it), where `$XDG_RUNTIME_DIR` is Linux-session-only;
 * and it is per user. A runtime dir would vanish at reboot; here the file survives one, which
 * is harmless because the record carries the boot id and the start time, and `stop` signals
 * nothing unless the PID is still that very process.
 */
export interface PidRecord extends Omit<ProcessIdentity, 'pid'> {
  pid: number;
  host: string;
  port: number;
  url: string;
  index: string;
  version: string;
  startedAt: string;
}

export function pidfilePath(indexPath: string): string {
  return `${indexPath}.mcp.pid`;
}

export function daemonLogPath(indexPath: string): string {
  return `${indexPath}.mcp.log`;
}

/** The record, `null` when there is no pidfile, or `'corrupt'` when it cannot be read as one. */
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
      Number.isSafeInteger(record.startTicks) &&
      typeof record.bootId === 'string' &&
      Array.isArray(record.cmdline) &&
      typeof record.url === 'string';
    return valid ? record : 'corrupt';
  } catch {
    return 'corrupt';
  }
}

/** Why the recorded process is not running any more as itself, or `null` if it is. */
export function staleReason(record: PidRecord): string | null {
  return identityMismatch(record, readIdentity(record.pid));
}

export function removePidfile(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // Already gone: that is what we wanted.
  }
}

export type ClaimResult = { claimed: true } | { claimed: false; holder: PidRecord };

/**
 * Writes `record` as the pidfile unless a live daemon holds it. The file appears whole or not
 * at all (written aside, then hard-linked into place; `link` fails if the name exists), so two
 * daemons starting at once cannot both win, and a reader never sees half a record. A stale or
 * corrupt pidfile is replaced.
 */
export function claimPidfile(path: string, record: PidRecord): ClaimResult {
  const aside = `${path}.${record.pid}.tmp`;
  writeFileSync(aside, `${JSON.stringify(record, null, 2)}\n`, { mode: 0o600 });
  try {
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        linkSync(aside, path);
        return { claimed: true };
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
      const holder = readPidfile(path);
      if (holder !== null && holder !== 'corrupt' && staleReason(holder) === null) return { claimed: false, holder };
      removePidfile(path);
    }
    throw new Error(`could not claim ${path}: another daemon keeps replacing it`);
  } finally {
    removePidfile(aside);
  }
}

/** Removes the pidfile if it still records this process (a newer daemon's is left alone). */
export function releasePidfile(path: string, pid: number, startTicks: number): void {
  const record = readPidfile(path);
  if (record !== null && record !== 'corrupt' && record.pid === pid && record.startTicks === startTicks)
    removePidfile(path);
}
