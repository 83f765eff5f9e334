import { parseTrace, type TraceEntry, type TraceRun } from './trace-parse.js';

export interface TimelineOptions {
  /** Every run in the file, not only the last one. */
  all?: boolean;
}

/**
 * `qmd lifecycle trace FILE`: the path a shutdown took, as text. For each run: the trigger,
 * every state entered with how long it lasted (until the next state was entered), which step
 * failed and why, how the drain ended, and the exit code. The last run by default.
 */
export function renderTimeline(jsonl: string, options: TimelineOptions = {}): string {
  const trace = parseTrace(jsonl);
  const out: string[] = [];
  if (trace.runs.length === 0) out.push('No lifecycle runs in this trace.');
  const shown = options.all ? trace.runs : trace.runs.slice(-1);
  shown.forEach((run, i) => {
    if (i > 0) out.push('');
    const number = trace.runs.indexOf(run) + 1;
    out.push(...renderRun(run, number, trace.runs.length));
  });
  if (trace.truncatedTail) {
    out.push('', `Line ${trace.skipped.at(-1)} is cut short (the process died mid-write?); it was skipped.`);
  }
  const others = trace.truncatedTail ? trace.skipped.slice(0, -1) : trace.skipped;
  if (others.length > 0) out.push('', `Skipped line(s) that are not trace entries: ${others.join(', ')}.`);
  return `${out.join('\n')}\n`;
}

const STEP_OF_STATE: Record<string, string> = { closingTransport: 'closeTransport', disposingStore: 'disposeStore' };

const DRAIN_WORDS: Record<string, string> = {
  idle: 'every handler settled',
  deadline: 'the deadline passed with handlers still in flight',
  cutShort: 'cut short by a second trigger',
};

function renderRun(run: TraceRun, number: number, total: number): string[] {
  const head = [`Run ${number} of ${total}`];
  if (run.pid !== null) head.push(`pid ${run.pid}`);
  if (run.actor !== null) head.push(run.actor);
  if (run.startedAt) head.push(`started ${run.startedAt}`);
  const lines = [head.join(', ')];
  const entries = run.entries;
  const last = entries.at(-1);
  // The state that leaves for teardown: `connected` (a shared server's `connected.idle` too), a session's `serving`.
  const serving = (state: string | undefined) => state === 'serving' || state?.split('.')[0] === 'connected';
  const triggerEntry = entries.find((entry, i) => i > 0 && serving(entries[i - 1]?.state) && !serving(entry.state));
  if (triggerEntry) {
    const words = last?.reason ? `${last.reason} (${triggerEntry.event})` : triggerEntry.event;
    lines.push(`Trigger: ${words} at ${ms(triggerEntry.ms)}`);
  } else lines.push('Trigger: none recorded');

  const failures = last?.failedSteps ?? [];
  let failureIndex = 0;
  const rows = entries.map((entry, i) => {
    const next = entries[i + 1];
    const took = next ? ms(next.ms - entry.ms) : '';
    let note = `on ${entry.event}`;
    if (entry.state === 'failedStep') {
      note += `: ${describeFailure(entry, entries[i - 1], failures[failureIndex])}`;
      failureIndex++;
    }
    if (entry.state === 'done' && entry.exitCode !== undefined) note += `: exit ${entry.exitCode}`;
    return [ms(entry.ms), entry.state, took, note];
  });
  lines.push(...table([['at', 'state', 'took', ''], ...rows]).map((row) => `  ${row}`));

  if (run.complete && last) {
    if (last.drain) lines.push(`Drain: ${last.drain} (${DRAIN_WORDS[last.drain] ?? last.drain})`);
    lines.push(
      failures.length === 0
        ? 'Failed steps: none'
        : `Failed steps: ${failures.map((f) => `${f.step} (${f.error})`).join(', ')}`,
    );
    if (last.exitCode !== undefined) lines.push(`Exit code: ${last.exitCode}`);
    if (triggerEntry) lines.push(`Teardown took ${ms(last.ms - triggerEntry.ms)}`);
  } else if (last) {
    lines.push(`Not finished: the last state entered was ${last.state} (killed, crashed, or still running).`);
  }
  return lines;
}

/** The failed step and its error: from the `done` line when there is one, else from the path. */
function describeFailure(
  entry: TraceEntry,
  before: TraceEntry | undefined,
  recorded: { step: string; error: string } | undefined,
): string {
  if (recorded) return `${recorded.step} failed (${recorded.error})`;
  const step = (before && STEP_OF_STATE[before.state]) ?? before?.state ?? 'a step';
  const why = entry.event.startsWith('xstate.after.') ? 'timed out' : 'threw';
  return `${step} ${why}`;
}

function ms(value: number): string {
  return `${value.toFixed(1)} ms`;
}

/** Columns padded to their widest cell; the time columns right-aligned. */
function table(rows: string[][]): string[] {
  const widths: number[] = [];
  for (const row of rows) {
    row.forEach((cell, i) => {
      widths[i] = Math.max(widths[i] ?? 0, cell.length);
    });
  }
  const right = new Set([0, 2]);
  return rows.map((row) =>
    row
      .map((cell, i) => (right.has(i) ? cell.padStart(widths[i] ?? 0) : cell.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd(),
  );
}
