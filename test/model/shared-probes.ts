/**
 * Self-loop probes for the shared server's machine and the session's, as ./probes.ts does for
 * the lifecycle: a path never contains an input the machine ignores, so at the end of every
 * shortest path the world offers everything it can do there; the inputs the machine ignores
 * (a relay connecting during teardown, a signal while disposing, a late socket close after the
 * release began, a bound's worth of time while serving…) are performed one after another,
 * judged by the contract oracle alone. Then the world ends: `shutdown()`, and time for every
 * bound and the watchdog, so every probe also runs the server to its end, where the oracle
 * checks the store's one disposal after every session, the exit code and the timers.
 */
import type { AnyMachineSnapshot, AnyStateMachine } from 'xstate';
import type { SessionEvent } from '../../machines/session.js';
import type { ServerEvent } from '../../machines/shared-server.js';
import type { Path } from './driver.js';
import { ignoredBy, inflightAt } from './graph.js';
import type { SharedTiming } from './shared-contract.js';
import { SESSION_ID, serializeServer, serializeSession } from './shared-model.js';
import {
  act,
  advance,
  open,
  performServer,
  performSession,
  serverFollows,
  serverWorld,
  sessionWorld,
  startHandler,
  type World,
} from './shared-perform.js';

/** Long enough for every bound of the server and of each session, one after another, and the watchdog. */
function timePasses(t: SharedTiming): number {
  return t.idleMs + 2 * t.stepMs + t.drainMs + 2 * (2 * t.sessionStepMs + t.sessionDrainMs) + t.watchdogMs;
}

const raw = <E>(type: string) => ({ type }) as unknown as E;

/**
 * A bound passing, once per delay: named after whichever active state defines it, so that an
 * `after` the machine does take there is not taken for an ignored one.
 */
function bounds<E>(snapshot: AnyMachineSnapshot, delays: string[]): E[] {
  const ids = (snapshot as unknown as { _nodes: Array<{ id: string }> })._nodes.map((n) => n.id);
  return delays.map((delay) => {
    const own = ids.map((id) => `xstate.after.${delay}.${id}`).find((t) => snapshot.can(raw(t)));
    return raw<E>(own ?? `xstate.after.${delay}.${ids.at(-1)}`);
  });
}

export function serverIgnored(machine: AnyStateMachine, path: Path<ServerEvent>, maxSessions: number): ServerEvent[] {
  const last = path.steps.at(-1)!.state;
  const c = last.context;
  const inputs: ServerEvent[] = [
    // A relay may try to connect whatever the server is doing (the world's own bound).
    ...(c.opened < maxSessions ? [{ type: 'session.opened', id: `session-${c.opened + 1}` } as const] : []),
    { type: 'signal.received', signal: 'SIGTERM' },
    { type: 'signal.received', signal: 'SIGINT' },
    { type: 'shutdown.requested', reason: 'test' },
    ...['closeListener', 'disposeStore'].flatMap((s) => [
      raw<ServerEvent>(`xstate.done.actor.${s}`),
      raw<ServerEvent>(`xstate.error.actor.${s}`),
    ]),
    ...bounds<ServerEvent>(last, ['idleTimeout', 'stepTimeout', 'drainTimeout']),
  ];
  return last.status === 'active' ? ignoredBy(machine, path, inputs, serializeServer) : [];
}

export function sessionIgnored(
  machine: AnyStateMachine,
  path: Path<SessionEvent>,
  maxInflight: number,
): SessionEvent[] {
  const last = path.steps.at(-1)!.state;
  const inflight = inflightAt(path);
  const inputs: SessionEvent[] = [
    { type: 'connection.ended' },
    { type: 'connection.closed' },
    { type: 'transport.closed' },
    { type: 'server.closing' },
    { type: 'server.escalated' },
    ...(inflight < maxInflight ? [{ type: 'handler.started' } as const] : []),
    ...(inflight > 0 ? [{ type: 'handler.settled' } as const] : []),
    ...['closeServer', 'releaseSession'].flatMap((s) => [
      raw<SessionEvent>(`xstate.done.actor.${s}`),
      raw<SessionEvent>(`xstate.error.actor.${s}`),
    ]),
    ...bounds<SessionEvent>(last, ['stepTimeout', 'drainTimeout']),
  ];
  return last.status === 'active' ? ignoredBy(machine, path, inputs, serializeSession) : [];
}

const STEP_RESULT = /^xstate\.(done|error)\.actor\.(\w+)$/;

/** Replays a server path, then each probe, then the end of the world; the oracle checks throughout. */
export async function probeServer(path: Path<ServerEvent>, probes: ServerEvent[]): Promise<void> {
  const w = serverWorld();
  for (const step of path.steps.slice(1)) await performServer(w, step.event);
  for (const event of probes) {
    const step = STEP_RESULT.exec(event.type);
    // The world can answer only a step the host is running and that has not answered yet.
    if (step && !w.h.stepRunning(step[2]!)) continue;
    if (event.type !== 'session.opened') await performServer(w, event);
    else {
      const id = await open(w);
      if (id !== null) await startHandler(w, id);
    }
  }
  await endOfTheWorld(w);
}

/** Replays a session path, then each probe, then the end of the world. */
export async function probeSession(path: Path<SessionEvent>, probes: SessionEvent[]): Promise<void> {
  const w = await sessionWorld();
  for (const step of path.steps.slice(1)) await performSession(w, step.event);
  for (const event of probes) {
    const step = STEP_RESULT.exec(event.type);
    if (step && !w.h.stepRunning(`${step[2]}:${SESSION_ID}`)) continue;
    if (event.type === 'handler.settled' && !w.h.handlers.some((x) => !x.settled)) continue;
    await performSession(w, event);
  }
  await endOfTheWorld(w);
}

async function endOfTheWorld(w: World): Promise<void> {
  await act(w, { kind: 'shutdown', reason: 'the end' }, () => void w.h.lifecycle.shutdown('the end'));
  await serverFollows(w);
  await advance(w, timePasses(w.timing));
  if (w.oracle.contract.finishedAt === undefined)
    throw new Error('the contract has the server still up after every bound');
}
