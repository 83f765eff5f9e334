import type { AnyActorRef, InspectionEvent, StateValue } from 'xstate';
import type { Log } from '../log.js';
import type { Clock } from './clock.js';
import { createJsonlFile } from './trace.js';

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

/** One line of the shared server's trace: the lifecycle's fields, plus which actor entered the state. */
export interface MachineTraceLine {
  ms: number;
  event: string;
  state: string;
  /** `sharedServer`, or the session's id (`session-3`). */
  actor: string;
  pid: number;
  startedAt?: string;
  exitCode?: number;
  reason?: string | null;
}

/**
 * `QMD_SHARED_TRACE`, for a machine with children (the shared server and its sessions): one
 * JSONL line per state entered by any actor of the system, microsteps included, in the order
 * XState inspects them, through the lifecycle trace's file writer (`createJsonlFile`).
 */
export function createMachineTraceWriter(
  file: string,
  clock: Clock,
  log: Log,
  rootName: string,
  startedAt = clock.now(),
) {
  const out = createJsonlFile(file, log);
  const write = (line: MachineTraceLine): void => out.write(line);
  const last = new Map<string, string>();
  return {
    observe(event: InspectionEvent): void {
      if (event.type !== '@xstate.microstep' && event.type !== '@xstate.snapshot') return;
      const snapshot = event.snapshot as { value?: StateValue; output?: { exitCode?: number; reason?: string } };
      if (snapshot.value === undefined) return;
      const isRoot = event.actorRef.sessionId === event.rootId;
      const actorId = isRoot ? rootName : (event.actorRef as AnyActorRef).id;
      const state = stateName(snapshot.value);
      // A final state's output is on the snapshot after its macrostep, not on the microstep.
      if (state === 'done' && snapshot.output === undefined) return;
      if (last.get(event.actorRef.sessionId) === state) return;
      last.set(event.actorRef.sessionId, state);
      const line: MachineTraceLine = {
        ms: Math.round((clock.now() - startedAt) * 100) / 100,
        event: event.event.type,
        state,
        actor: actorId,
        pid: process.pid,
      };
      if (event.event.type === 'xstate.init' && isRoot) line.startedAt = new Date().toISOString();
      if (state === 'done' && snapshot.output) {
        line.exitCode = snapshot.output.exitCode;
        line.reason = snapshot.output.reason ?? null;
      }
      write(line);
    },
    close: () => out.close(),
  };
}
