import { closeSync, openSync, writeSync } from 'node:fs';
import type { InspectionEvent, SnapshotFrom } from 'xstate';
import type { LifecycleMachine } from '../../machines/lifecycle.js';
import { computeExitCode } from '../../machines/teardown.js';
import type { Log } from '../log.js';
import type { Clock } from './clock.js';

/** One line of `QMD_LIFECYCLE_TRACE`: a state entered, when, and on which event. */
export interface TraceLine {
  /** Milliseconds since the lifecycle started. */
  ms: number;
  /** The type of the event being processed when the state was entered. */
  event: string;
  /** The state value entered. */
  state: string;
  pid: number;
  inflight: number;
  /** On the first line of a run: when it started. */
  startedAt?: string;
  /** On the line for `done`: what the machine output. */
  exitCode?: number;
  reason?: string | null;
  drain?: string | null;
  failedSteps?: { step: string; error: string }[];
}

type LifecycleSnapshot = SnapshotFrom<LifecycleMachine>;

/**
 * Writes one JSONL line per state entered, from XState's inspection API: the initial state
 * (the root's `xstate.init` snapshot) and every microstep, so states passed through within one
 * step by eventless transitions (`failedStep`, a `draining` that is idle at once) are there too.
 * Appends, so several runs can share one file; each run's first line has `startedAt`.
 * Writes synchronously (a handful of lines per run) so a trace survives a crash; a write that
 * fails is warned about once and never breaks teardown.
 */
/**
 * A trace file: JSON lines appended synchronously (a handful per run, so a trace survives a
 * crash); a write that fails is warned about once and never breaks teardown.
 */
export function createJsonlFile(file: string, log: Log) {
  let fd: number | undefined;
  let failed = false;
  return {
    write(line: object): void {
      if (failed) return;
      try {
        fd ??= openSync(file, 'a');
        writeSync(fd, `${JSON.stringify(line)}\n`);
      } catch (error) {
        failed = true;
        log.warn(`cannot write the lifecycle trace to ${file}: ${(error as Error).message}`);
      }
    },
    close(): void {
      // Stryker disable next-line ConditionalExpression: a shortcut only; closeSync(undefined) throws, and that is swallowed below
      if (fd === undefined) return;
      try {
        closeSync(fd);
      } catch {
        // Nothing left to lose.
      }
      fd = undefined;
    },
  };
}

export function createTraceWriter(file: string, clock: Clock, log: Log, startedAt = clock.now()) {
  const out = createJsonlFile(file, log);
  const write = (line: TraceLine): void => out.write(line);
  let last: string | undefined;
  const record = (eventType: string, snapshot: LifecycleSnapshot): void => {
    // The machine is flat: its state value is the state's name.
    const state = snapshot.value;
    if (state === last) return;
    last = state;
    const ms = Math.round((clock.now() - startedAt) * 100) / 100;
    const line: TraceLine = {
      ms,
      event: eventType,
      state,
      pid: process.pid,
      inflight: snapshot.context.inflight,
    };
    if (eventType === 'xstate.init') line.startedAt = new Date().toISOString();
    if (state === 'done') {
      line.reason = snapshot.context.reason;
      line.drain = snapshot.context.drain;
      line.failedSteps = snapshot.context.failedSteps;
      // What the machine outputs, from the same rule (`summarize` in machines/lifecycle.ts).
      line.exitCode = computeExitCode(snapshot.context);
    }
    write(line);
  };
  return {
    observe(event: InspectionEvent): void {
      if (event.actorRef.sessionId !== event.rootId) return;
      // A macrostep's snapshot repeats the state of its last microstep (deduplicated above),
      // except for the first one, `xstate.init`: the initial state has no microstep.
      if (event.type === '@xstate.microstep' || event.type === '@xstate.snapshot') {
        record(event.event.type, event.snapshot as LifecycleSnapshot);
      }
    },
    close: () => out.close(),
  };
}
