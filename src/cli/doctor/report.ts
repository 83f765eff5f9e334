/**
 * What `qmd doctor` finds, as data (`--json` prints it as is) and as the lines a person reads
 * (the peer's layout: a title, the index, one `✓`/`⚠`/`✗` line per check with its details
 * indented under it, then what only we can say: the processes, the places, the problems and
 * the command that fixes each).
 */
export type Mark = 'ok' | 'warn' | 'fail';

export interface Check {
  /** What was checked: `sqlite-vec`, `models`, `stale socket`. */
  name: string;
  mark: Mark;
  /** One line. */
  detail: string;
  /** Lines under it: one per collection, model, variable. */
  items?: string[];
  /** The error's code where there is one (`INDEX_CORRUPT`). */
  code?: string;
  /** The command that fixes it, or what to do. */
  next?: string;
}

/** The role a person knows a qmd process by. */
export type Role = 'plain' | 'relay' | 'shared' | 'retiring' | 'http' | 'daemon';

export const ROLE_NAMES: Readonly<Record<Role, string>> = {
  plain: 'plain server',
  relay: 'relay',
  shared: 'shared server',
  retiring: 'shared server, retiring',
  http: 'HTTP server',
  daemon: 'HTTP daemon',
};

export interface ProcessEntry {
  pid: number;
  role: Role;
  index: string | null;
  /** The MCP client it serves (`initialize`'s name and version), or its parent's pid. */
  client: string | null;
  startedAt: string | null;
  /** Its live sessions (a shared server), its version, the socket it answered on. */
  sessions?: number;
  version?: string;
  socket?: string;
  /** True when its socket took no answer within the bound (stopped, hung). */
  silent?: boolean;
}

export interface Place {
  dir: string;
  /** This qmd's place (`/tmp/qmd-<uid>`), or where an older qmd listened. */
  current: boolean;
  exists: boolean;
}

export interface DoctorReport {
  index: string;
  runtime: string;
  checks: Check[];
  processes: ProcessEntry[];
  places: Place[];
  /** What should not be, in the processes and places: each with its fix. */
  problems: Check[];
  /** No check and no problem is `fail`: doctor exits 0. */
  ok: boolean;
}

const MARKS: Readonly<Record<Mark, string>> = { ok: '✓', warn: '⚠', fail: '✗' };

/** The report as a person reads it. `now` makes ages testable. */
export function formatDoctor(report: DoctorReport, now = Date.now()): string {
  const lines = ['QMD Doctor', '', `Index: ${report.index}`, `Runtime: ${report.runtime}`];
  for (const check of report.checks) lines.push(...checkLines(check));
  lines.push('', `Processes of this user: ${report.processes.length === 0 ? 'none' : report.processes.length}`);
  for (const p of report.processes) lines.push(`  ${processLine(p, now)}`);
  lines.push('', 'Places looked in');
  for (const place of report.places) {
    const what = place.current ? 'this qmd’s place' : 'an older qmd’s place';
    lines.push(`  ${place.dir} (${what}${place.exists ? '' : '; absent'})`);
  }
  lines.push('');
  if (report.problems.length === 0) lines.push('✓ nothing that should not be');
  for (const problem of report.problems) lines.push(...checkLines(problem));
  const steps = [...report.checks, ...report.problems].filter((c) => c.mark !== 'ok' && c.next !== undefined);
  if (steps.length > 0) {
    lines.push('', 'Recommended next steps');
    for (const step of steps) lines.push(`  - ${step.name}: ${step.next}`);
  }
  const failed = [...report.checks, ...report.problems].filter((c) => c.mark === 'fail').length;
  lines.push('', failed === 0 ? 'No problems found.' : `${failed} problem${failed === 1 ? '' : 's'} found.`);
  return lines.join('\n');
}

function checkLines(check: Check): string[] {
  const code = check.code === undefined ? '' : `${check.code}: `;
  const next = check.next === undefined || check.mark === 'ok' ? '' : `. Next: ${check.next}`;
  return [
    `${MARKS[check.mark]} ${check.name}: ${code}${check.detail}${next}`,
    ...(check.items ?? []).map((i) => `  - ${i}`),
  ];
}

function processLine(p: ProcessEntry, now: number): string {
  const parts = [`pid ${p.pid}`, ROLE_NAMES[p.role]];
  if (p.startedAt !== null) parts.push(`up ${age(now - Date.parse(p.startedAt))}`);
  if (p.index !== null) parts.push(`index ${p.index}`);
  if (p.client !== null) parts.push(`client ${p.client}`);
  if (p.sessions !== undefined) parts.push(`${p.sessions} client${p.sessions === 1 ? '' : 's'}`);
  if (p.version !== undefined) parts.push(`qmd ${p.version}`);
  if (p.silent === true) parts.push('DOES NOT ANSWER');
  return parts.join(', ');
}

/** `4 s`, `12 min`, `3 h 5 min`, `2 d 4 h`. */
export function age(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '?';
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s} s`;
  const min = Math.floor(s / 60);
  if (min < 60) return `${min} min`;
  const h = Math.floor(min / 60);
  if (h < 24) return `${h} h ${min % 60} min`;
  return `${Math.floor(h / 24)} d ${h % 24} h`;
}
