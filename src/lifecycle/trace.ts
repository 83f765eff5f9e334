import { closeSync, writeSync } from 'node:fs';
import type { AnyActorRef, InspectionEvent, StateValue } from 'xstate';
import type { Log } from '../log.js';
import { openPrivateFile } from '../private-file.js';
import type { Clock } from './clock.js';

/**
 * One line of a trace (`QMD_LIFECYCLE_TRACE`, `QMD_SHARED_TRACE`): a state entered, when, on
 * which event, by which actor. Every machine writes this one shape; `src/viz/trace-parse.ts`
 * reads it.
 */
export interface TraceLine {
  /** Milliseconds since the host started. */
  ms: number;
  /** The type of the event being processed when the state was entered. */
  event: string;
  /** The state value entered, nested states dotted (`connected.idle`). */
  state: string;
  pid: number;
  /** In a machine with children (the shared server): `sharedServer`, or the session's id. */
  actor?: string;
  /** Handlers in flight, for a machine that counts them (the lifecycle, a session). */
  inflight?: number;
  /** The watcher's index writes in flight (the lifecycle), when there are any. */
  writes?: number;
  /** On the first line of a run: when it started. */
  startedAt?: string;
  /** On the line for `done`: what the machine output. */
  exitCode?: number;
  reason?: string | null;
  drain?: string | null;
  failedSteps?: { step: string; error: string }[];
}

/**
 * `connected.idle` for `{ connected: 'idle' }`: nested state values as one dotted name, the
 * way traces and breadcrumbs print them.
 */
export function stateName(value: StateValue): string {
  if (typeof value === 'string') return value;
  return Object.entries(value)
    .map(([key, inner]) => (inner === undefined ? key : `${key}.${stateName(inner as StateValue)}`))
    .join(',');
}

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
        // The path is the user's (QMD_LIFECYCLE_TRACE): never through a link, 0600.
        fd ??= openPrivateFile(file, 'append');
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

interface TracedSnapshot {
  value?: StateValue;
  context?: { inflight?: unknown; writes?: unknown };
  output?: { exitCode?: number; reason?: string; drain?: string; failedSteps?: { step: string; error: string }[] };
}

export interface TraceOptions {
  /** Name the actor on every line, the root by this name: for a machine with children. */
  actorName?: string;
  /** The time `ms` counts from (the host's start); now by default. */
  startedAt?: number;
}

/**
 * Writes one JSONL line per state entered by any actor of the system, from XState's inspection
 * API: each initial state (an actor's `xstate.init` snapshot) and every microstep, so states
 * passed through within one step by eventless transitions (`failedStep`, a `draining` that is
 * idle at once) are there too. A `done` line carries the machine's output, which is on the
 * snapshot after its macrostep. Appends, so several runs can share one file; each run's first
 * line has `startedAt`. Invoked promise actors (the teardown steps) have no state: no line.
 */
export function createTraceWriter(file: string, clock: Clock, log: Log, options: TraceOptions = {}) {
  const out = createJsonlFile(file, log);
  const startedAt = options.startedAt ?? clock.now();
  const last = new Map<string, string>();
  return {
    observe(event: InspectionEvent): void {
      if (event.type !== '@xstate.microstep' && event.type !== '@xstate.snapshot') return;
      const snapshot = event.snapshot as TracedSnapshot;
      if (snapshot.value === undefined) return;
      const isRoot = event.actorRef.sessionId === event.rootId;
      const state = stateName(snapshot.value);
      if (state === 'done' && snapshot.output === undefined) return;
      if (last.get(event.actorRef.sessionId) === state) return;
      last.set(event.actorRef.sessionId, state);
      const line: TraceLine = {
        ms: Math.round((clock.now() - startedAt) * 100) / 100,
        event: event.event.type,
        state,
        pid: process.pid,
      };
      if (options.actorName !== undefined) line.actor = isRoot ? options.actorName : (event.actorRef as AnyActorRef).id;
      const inflight = snapshot.context?.inflight;
      if (typeof inflight === 'number') line.inflight = inflight;
      const writes = snapshot.context?.writes;
      if (typeof writes === 'number' && writes > 0) line.writes = writes;
      if (event.event.type === 'xstate.init' && isRoot) line.startedAt = new Date().toISOString();
      const output = snapshot.output;
      if (state === 'done' && output) {
        line.reason = output.reason ?? null;
        if (output.drain !== undefined) line.drain = output.drain;
        if (output.failedSteps !== undefined) line.failedSteps = output.failedSteps;
        if (output.exitCode !== undefined) line.exitCode = output.exitCode;
      }
      out.write(line);
    },
    close: () => out.close(),
  };
}
