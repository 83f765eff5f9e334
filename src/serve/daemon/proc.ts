import { readFileSync } from 'node:fs';

/**
 * Who a PID is, from `/proc` (Linux). A PID alone names nothing once its process exits: the
 * kernel hands it to the next process that needs one, and the peer's `stop` signalled such
 * strangers. The start time (field 22 of `/proc/PID/stat`, clock ticks since boot) never
 * repeats for one PID within a boot, the boot id tells boots apart, and the command line says
 * it is still the program we started.
 */
export interface ProcessIdentity {
  pid: number;
  /** Field 22 of `/proc/PID/stat`: when it started, in clock ticks since boot. */
  startTicks: number;
  /** `/proc/sys/kernel/random/boot_id`: start times restart at every boot. */
  bootId: string;
  /** `/proc/PID/cmdline`, split on NUL. */
  cmdline: string[];
}

const PROC = '/proc';

/**
 * Test-only: `QMD_TEST_NO_PROC=1` makes this reader answer "unavailable", so the e2e suites can
 * prove on Linux that no feature needs /proc (as on macOS and Windows). Read from the process
 * environment, not the config: it is not a setting, and a shared server inherits it from its relay.
 */
function procHidden(): boolean {
  return process.env.QMD_TEST_NO_PROC === '1';
}

/**
 * `/proc` is Linux's. Nothing needs it: the server's socket is the authority
 * (`src/serve/control/`); where it exists it only adds a check (`src/serve/daemon/pidfile.ts`).
 */
export function canVerifyProcesses(): boolean {
  if (procHidden()) return false;
  try {
    readFileSync(`${PROC}/self/stat`);
    return true;
  } catch {
    return false;
  }
}

export function readBootId(): string {
  return readFileSync(`${PROC}/sys/kernel/random/boot_id`, 'utf8').trim();
}

/**
 * Field 3 (state) and field 22 (starttime) of a `/proc/PID/stat` line. The second field, the
 * command name in parentheses, may itself contain spaces and `)`, so fields are counted from
 * the last `)`.
 */
export function parseStat(stat: string): { state: string; startTicks: number } | null {
  const close = stat.lastIndexOf(')');
  if (close === -1) return null;
  const fields = stat
    .slice(close + 1)
    .trim()
    .split(/\s+/);
  // fields[0] is field 3 of the line, so field N is fields[N - 3].
  const state = fields[0];
  const startTicks = Number(fields[22 - 3]);
  if (state === undefined || !Number.isSafeInteger(startTicks)) return null;
  return { state, startTicks };
}

/**
 * The identity of a running process, or `null` if there is none by that PID — an exited
 * process not yet reaped by its parent (a zombie, state Z or X) counts as gone.
 */
export function readIdentity(pid: number): ProcessIdentity | null {
  if (procHidden() || !Number.isSafeInteger(pid) || pid <= 0) return null;
  try {
    const stat = parseStat(readFileSync(`${PROC}/${pid}/stat`, 'utf8'));
    if (stat === null || stat.state === 'Z' || stat.state === 'X') return null;
    const raw = readFileSync(`${PROC}/${pid}/cmdline`, 'utf8');
    const cmdline = raw.split('\0');
    if (cmdline.at(-1) === '') cmdline.pop();
    return { pid, startTicks: stat.startTicks, bootId: readBootId(), cmdline };
  } catch {
    return null;
  }
}

/** Why `actual` is not the process `expected` describes, or `null` if it is that process. */
export function identityMismatch(
  expected: Omit<ProcessIdentity, 'pid'>,
  actual: ProcessIdentity | null,
): string | null {
  if (actual === null) return 'is not running';
  if (actual.bootId !== expected.bootId) return 'was recorded before the machine last booted';
  if (actual.startTicks !== expected.startTicks) return 'is another process now (its start time differs)';
  if (actual.cmdline.join('\0') !== expected.cmdline.join('\0'))
    return `is another program now (${actual.cmdline.slice(0, 3).join(' ')})`;
  return null;
}
