/**
 * Reads a `QMD_LIFECYCLE_TRACE` (or `QMD_SHARED_TRACE`) file: JSON Lines, one object per state
 * entered, in the one line format `src/lifecycle/trace.ts` writes for every machine. Runs are
 * appended to one file; a run starts with the line whose event is `xstate.init`. Several
 * processes may share the file and interleave, and a shared server writes its own lines and each session's (the
 * `actor` field), so lines are grouped by `pid` and actor.
 */
import type { TraceLine } from '../lifecycle/trace.js';

/** A line as read back: the writer's `TraceLine`, with `pid` optional in older files. */
export type TraceEntry = Omit<TraceLine, 'pid'> & { pid?: number };

export interface TraceRun {
  pid: number | null;
  actor: string | null;
  startedAt: string | null;
  entries: TraceEntry[];
  /** Reached `done`; otherwise the process was killed, crashed, or is still running. */
  complete: boolean;
}

export interface ParsedTrace {
  runs: TraceRun[];
  /** 1-based numbers of the lines that are not trace entries. */
  skipped: number[];
  /** The last line is cut short: the writer died mid-line (or is writing it now). */
  truncatedTail: boolean;
}

export function parseTrace(jsonl: string): ParsedTrace {
  const runs: TraceRun[] = [];
  const open = new Map<string, TraceRun>();
  const skipped: number[] = [];
  const lines = jsonl.split('\n');
  let lastContent = -1;
  lines.forEach((line, i) => {
    if (line.trim() === '') return;
    lastContent = i;
    const entry = toEntry(line);
    if (!entry) {
      skipped.push(i + 1);
      return;
    }
    const pid = entry.pid ?? null;
    const actor = entry.actor ?? null;
    const key = `${pid}|${actor ?? ''}`;
    let run = open.get(key);
    if (!run || entry.event === 'xstate.init' || entry.startedAt !== undefined) {
      run = { pid, actor, startedAt: entry.startedAt ?? null, entries: [], complete: false };
      runs.push(run);
      open.set(key, run);
    }
    run.entries.push(entry);
    if (entry.state === 'done' || entry.exitCode !== undefined) run.complete = true;
  });
  return { runs, skipped, truncatedTail: lastContent !== -1 && skipped.at(-1) === lastContent + 1 };
}

function toEntry(line: string): TraceEntry | null {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return null;
  }
  const e = value as Partial<TraceEntry> | null;
  if (!e || typeof e !== 'object' || typeof e.ms !== 'number' || typeof e.state !== 'string') return null;
  if (typeof e.event !== 'string') return null;
  return e as TraceEntry;
}
