/**
 * The model behind the generated tests of `qmd mcp --shared`: which events the world can
 * produce in each state of the shared server's machine and of the session's, how to serialise
 * their snapshots, and what transitions and states they define (from their definitions).
 *
 * Spawned children, decided here: XState's graph tools apply the pure `transition`, which
 * spawns a session's ref but never runs it (docs/design.md §5), so a session never reaches
 * `done` inside the server's traversal. The server is therefore traversed with each session
 * as a black box: for every live session the world may end it, offered as the event the server
 * really receives, `xstate.done.actor.session-N` (with an output). What happens inside a session
 * is the session machine's own traversal. Neither replay injects a done event: a session ends
 * the way production ends it, through its triggers and steps (./shared-perform.ts), and the
 * real host turns that into the done event. Two traversals, one per machine, each with the
 * real host around it, so each machine's coverage is complete on its own.
 */
import {
  __unsafe_getAllOwnEventDescriptors,
  type AnyActorRef,
  type AnyMachineSnapshot,
  type InspectionEvent,
} from 'xstate';
import type { SessionEvent } from '../../machines/session.js';
import type { ServerEvent } from '../../machines/shared-server.js';
import type { Traversal } from './driver.js';
import { takenKey } from './graph.js';
import type { SharedTiming } from './shared-contract.js';

type Snapshot = AnyMachineSnapshot;

/**
 * Time in the server's traversal: the server's bounds are what paths advance by; the sessions'
 * are longer than any path (1500 + 4000 + 1500 ms of server bounds), so a session ends only
 * when the path says so. None is a machine default: a machine that ignored its input would fail.
 */
export const SERVER_WORLD: SharedTiming = {
  idleMs: 30_000,
  drainMs: 4000,
  stepMs: 1500,
  sessionDrainMs: 70_000,
  sessionStepMs: 50_000,
  watchdogMs: 1000,
};

/** Time in the session's traversal: the other way round, the server's bounds never pass in a path. */
export const SESSION_WORLD: SharedTiming = {
  idleMs: 1_000_000,
  drainMs: 100_000,
  stepMs: 2500,
  sessionDrainMs: 4000,
  sessionStepMs: 1500,
  watchdogMs: 1000,
};

export const SERVER_INPUT = {
  idleTimeoutMs: SERVER_WORLD.idleMs,
  drainTimeoutMs: SERVER_WORLD.drainMs,
  stepTimeoutMs: SERVER_WORLD.stepMs,
  sessionDrainTimeoutMs: SERVER_WORLD.sessionDrainMs,
  sessionStepTimeoutMs: SERVER_WORLD.sessionStepMs,
};

/** The session the session's traversal follows: the first (and only) one its world opens. */
export const SESSION_ID = 'session-1';
export const SESSION_INPUT = {
  id: SESSION_ID,
  drainTimeoutMs: SESSION_WORLD.sessionDrainMs,
  stepTimeoutMs: SESSION_WORLD.sessionStepMs,
};

export interface ServerBounds {
  /** Sessions opened at most (ids are never reused, so the graph needs a bound on the total). */
  maxSessions: number;
  /** Two payload variants for the first trigger (exit code 0, and an earlier 3), or one. */
  exitCodeVariants: boolean;
}

/**
 * Events offered to the server in a snapshot, from its own event descriptors, with payloads:
 * a relay connecting, a session ending (`xstate.done.actor.*` → one done event per live
 * session), signals (SIGTERM or SIGHUP first, SIGINT during teardown), `shutdown()` while up,
 * step results and bounds. The drain deadline fires once per drain: it is offered only while
 * nothing has hurried the drain yet (a signal's `cutShort` hides whether it already passed;
 * probes and the property test pass it after a signal).
 */
export function serverEvents(bounds: ServerBounds) {
  return (snapshot: Snapshot): ServerEvent[] => {
    if (snapshot.status !== 'active') return [];
    const c = snapshot.context;
    const up = typeof snapshot.value === 'object';
    const raw = (type: string) => ({ type }) as unknown as ServerEvent;
    return __unsafe_getAllOwnEventDescriptors(snapshot).flatMap((type): ServerEvent[] => {
      switch (type) {
        case 'session.opened':
          return c.opened < bounds.maxSessions ? [{ type, id: `session-${c.opened + 1}` }] : [];
        case 'signal.received':
          if (!up) return [{ type, signal: 'SIGINT' }];
          return bounds.exitCodeVariants
            ? [
                { type, signal: 'SIGTERM', exitCode: 0 },
                { type, signal: 'SIGHUP', exitCode: 3 },
              ]
            : [{ type, signal: 'SIGTERM', exitCode: 0 }];
        case 'shutdown.requested':
          if (!up) return [];
          return bounds.exitCodeVariants
            ? [
                { type, reason: 'test', exitCode: 0 },
                { type, reason: 'test', exitCode: 3 },
              ]
            : [{ type, reason: 'test', exitCode: 0 }];
        case 'xstate.done.actor.*':
          return (c.sessions as string[]).map(
            (id) =>
              ({
                type: `xstate.done.actor.${id}`,
                output: { session: id, trigger: 'connection.ended', drain: 'idle', failedSteps: [] },
              }) as ServerEvent,
          );
        default:
          if (type.startsWith('xstate.after.drainTimeout.') && c.drain !== null) return [];
          return [raw(type)];
      }
    });
  };
}

/** The server's traversal with these bounds. */
export function serverTraversal(bounds: ServerBounds): Traversal<ServerEvent> {
  return { input: SERVER_INPUT, serializeState: serializeServer, events: serverEvents(bounds) };
}

export function serializeServer(snapshot: Snapshot): string {
  const c = snapshot.context;
  return JSON.stringify([
    snapshot.value,
    c.sessions,
    c.opened,
    c.priorExitCode,
    c.triggerType,
    // A set, not a list: a broken machine that repeats a step must still give a finite graph.
    [...new Set(c.failedSteps.map((f: { step: string }) => f.step))],
    c.drain,
    c.escalatedBy !== null,
  ]);
}

export interface SessionBounds {
  maxInflight: number;
  /** Handlers may start after the session began ending (true: a request read before its server closed). */
  startsDuringTeardown: boolean;
}

/** Events offered to a session: its own descriptors, handler events bounded by `maxInflight`. */
export function sessionEvents(bounds: SessionBounds) {
  return (snapshot: Snapshot): SessionEvent[] => {
    if (snapshot.status !== 'active') return [];
    const inflight = snapshot.context.inflight as number;
    const serving = snapshot.value === 'serving';
    return __unsafe_getAllOwnEventDescriptors(snapshot).flatMap((type): SessionEvent[] => {
      switch (type) {
        case 'handler.started':
          return inflight < bounds.maxInflight && (serving || bounds.startsDuringTeardown) ? [{ type }] : [];
        case 'handler.settled':
          return inflight > 0 ? [{ type }] : [];
        default:
          return [{ type } as SessionEvent];
      }
    });
  };
}

/** The session's traversal with these bounds. */
export function sessionTraversal(bounds: SessionBounds): Traversal<SessionEvent> {
  return { input: SESSION_INPUT, serializeState: serializeSession, events: sessionEvents(bounds) };
}

export function serializeSession(snapshot: Snapshot): string {
  const c = snapshot.context;
  return JSON.stringify([
    snapshot.value,
    c.inflight,
    c.trigger,
    c.escalated,
    [...new Set(c.failedSteps.map((f: { step: string }) => f.step))],
    c.drain,
  ]);
}

// ---- what the real actors did ------------------------------------------------------------

/**
 * An inspector for the shared host: records the states every actor entered and the keys of the
 * transitions it took (keyed by ./graph.ts's `takenKey`, so coverage compares with `definedTransitions`),
 * and keeps the actors, so a replay can compare the host's actors with the machine's snapshots.
 */
export function actorRecorder() {
  const taken = new Set<string>();
  const states = new Set<string>();
  const actors = new Map<string, AnyActorRef>();
  let root: AnyActorRef | undefined;
  const observe = (event: InspectionEvent): void => {
    if (event.type === '@xstate.actor') {
      const ref = event.actorRef as AnyActorRef;
      if (ref.sessionId === event.rootId) root = ref;
      else actors.set(ref.id, ref);
    }
    if (event.type !== '@xstate.microstep') return;
    const nodes = (event.snapshot as unknown as { _nodes: Array<{ id: string }> })._nodes;
    for (const node of nodes) states.add(node.id);
    for (const t of event._transitions as never[]) taken.add(takenKey(t));
  };
  return {
    taken,
    states,
    observe,
    /** The server's actor. */
    server: () => root,
    /** A session's actor, by the id it was spawned under (kept once it is done). */
    session: (id: string) => actors.get(id),
  };
}

export type ActorRecorder = ReturnType<typeof actorRecorder>;
