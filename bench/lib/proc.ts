import { readdirSync, readFileSync } from 'node:fs';

/** `/proc/PID/status` field in kB (VmRSS, VmHWM…), or undefined when the process is gone. */
export function statusKb(pid: number, field: 'VmRSS' | 'VmHWM'): number | undefined {
  try {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match?.[1] === undefined ? undefined : Number(match[1]);
  } catch {
    return undefined;
  }
}

/**
 * Proportional set size from `/proc/PID/smaps_rollup`: what the process costs when pages it
 * shares (the node binary, above all) are split between the processes sharing them. VmRSS
 * counts every shared page in full in each process.
 */
export function pssKb(pid: number): number | undefined {
  try {
    const match = /^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'));
    return match?.[1] === undefined ? undefined : Number(match[1]);
  } catch {
    return undefined;
  }
}

/** The state letter from `/proc/PID/stat` (R, S, Z…), or undefined when there is no such process. */
export function processState(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name is in parentheses and may contain spaces: the state follows the last ')'.
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  } catch {
    return undefined;
  }
}

/** Running (a zombie has exited: it only waits for its parent to reap it). */
export function isAlive(pid: number): boolean {
  const state = processState(pid);
  return state !== undefined && state !== 'Z' && state !== 'X';
}

function readText(file: string): string {
  try {
    return readFileSync(file, 'latin1');
  } catch {
    return '';
  }
}

/**
 * Live processes whose command line or environment contains `marker`. Finds servers that
 * were never seen by pid (e.g. spawned just before their client was killed) and is immune to
 * pid reuse: an unrelated process that got a recycled pid does not carry the marker.
 */
export function findByMarker(marker: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    if (pid === process.pid) continue;
    const cmdline = readText(`/proc/${pid}/cmdline`);
    if (cmdline.includes(marker) || readText(`/proc/${pid}/environ`).includes(marker)) {
      if (isAlive(pid)) found.push(pid);
    }
  }
  return found;
}

/** Whether `pid` is alive and still the process we started (its cmdline or environ has `marker`). */
export function isAliveWithMarker(pid: number, marker: string): boolean {
  if (!isAlive(pid)) return false;
  return readText(`/proc/${pid}/cmdline`).includes(marker) || readText(`/proc/${pid}/environ`).includes(marker);
}

/** The pids of `pid`'s descendants, from /proc (children before grandchildren). */
export function descendants(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readText(`/proc/${entry}/stat`);
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    if (!children.has(ppid)) children.set(ppid, []);
    children.get(ppid)?.push(Number(entry));
  }
  const found: number[] = [];
  for (let queue = [pid]; queue.length > 0; ) {
    const next = children.get(queue.shift() as number) ?? [];
    found.push(...next);
    queue.push(...next);
  }
  return found;
}

/**
 * VmRSS or VmHWM of `pid` and its descendants, summed (kB): a server behind a launcher that
 * re-spawns node (the peer's `bin`) costs both processes. Undefined when `pid` is gone.
 */
export function treeStatusKb(pid: number, field: 'VmRSS' | 'VmHWM'): number | undefined {
  const own = statusKb(pid, field);
  if (own === undefined) return undefined;
  return descendants(pid).reduce((sum, child) => sum + (statusKb(child, field) ?? 0), own);
}
