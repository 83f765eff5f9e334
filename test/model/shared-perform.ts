/**
 * Doing in the real world what a traversal's event stands for, against the real shared host
 * (test/support/host-harness.ts), and telling the contract oracle every input as it is done;
 * the oracle checks after each one. Every step of the server and of its sessions waits for
 * the world's say-so (manual), time moves only when a bound is due.
 *
 * A session's end (`xstate.done.actor.session-N` in the server's traversal) is produced as in
 * production: its connection ends (odd sessions by a half-close, even ones by their transport
 * closing) unless the server already told it to end, its server closes, its handlers settle,
 * its socket is released; the host's machine receives the done event from the real child.
 */
import type { InspectionEvent } from 'xstate';
import type { SessionEvent } from '../../machines/session.js';
import type { ServerEvent } from '../../machines/shared-server.js';
import { flush } from '../support/fake-clock.js';
import { createSharedHarness, type SharedHarness } from '../support/host-harness.js';
import type { ConnectionEnd, SharedInput, SharedTiming } from './shared-contract.js';
import { SERVER_WORLD, SESSION_ID, SESSION_WORLD } from './shared-model.js';
import { SharedOracle } from './shared-oracle.js';

export interface World {
  h: SharedHarness;
  oracle: SharedOracle;
  timing: SharedTiming;
}

function world(timing: SharedTiming, observers: Array<(event: InspectionEvent) => void>): World {
  const h = createSharedHarness({
    idleTimeoutMs: timing.idleMs,
    drainTimeoutMs: timing.drainMs,
    stepTimeoutMs: timing.stepMs,
    sessionDrainTimeoutMs: timing.sessionDrainMs,
    sessionStepTimeoutMs: timing.sessionStepMs,
    watchdogMs: timing.watchdogMs,
    closeListener: 'manual',
    disposeStore: 'manual',
    closeServer: 'manual',
    releaseSession: 'manual',
    ...(observers.length > 0 && { inspect: observers }),
  });
  return { h, oracle: new SharedOracle(timing), timing };
}

/** The server's traversal starts with the server up and no session. */
export function serverWorld(...observers: Array<(event: InspectionEvent) => void>): World {
  return world(SERVER_WORLD, observers);
}

/** The session's traversal starts with one session open (`SESSION_ID`). */
export async function sessionWorld(...observers: Array<(event: InspectionEvent) => void>): Promise<World> {
  const w = world(SESSION_WORLD, observers);
  await open(w);
  return w;
}

/** One input: tell the oracle, do it, let promises settle, check. */
export async function act(w: World, input: SharedInput, deed: () => unknown): Promise<void> {
  w.oracle.feed(input);
  await deed();
  await flush();
  w.oracle.check(w.h);
}

export async function open(w: World): Promise<string | null> {
  let id: string | null = null;
  await act(w, { kind: 'open' }, () => {
    id = w.h.open();
  });
  return id;
}

export async function startHandler(w: World, session: string): Promise<void> {
  const handler = w.h.startHandler(session);
  w.oracle.feed({ kind: 'handler.start', session, handler });
  await flush();
  w.oracle.check(w.h);
}

export async function settleHandler(w: World, session: string): Promise<void> {
  const handler = w.h.handlers.find((x) => x.session === session && !x.settled);
  if (!handler) throw new Error(`no handler of ${session} in flight to settle`);
  await act(w, { kind: 'handler.settle', handler }, () => handler.settle());
}

/** Settles a running step; a failure is an Error for one step of each pair, a bare string for the other. */
export async function settleStep(w: World, key: string, ok: boolean): Promise<void> {
  if (!w.h.stepRunning(key)) throw new Error(`${key} is not running`);
  if (ok) {
    await act(w, { kind: 'step.resolve', step: key }, () => w.h.settleStep(key));
    return;
  }
  const message = `${key} failed in the model`;
  const asError = key === 'closeListener' || key.startsWith('closeServer:');
  await act(w, { kind: 'step.reject', step: key, message }, () =>
    w.h.settleStep(key, asError ? new Error(message) : message),
  );
}

export async function advance(w: World, ms: number): Promise<void> {
  await act(w, { kind: 'advance', ms }, () => w.h.clock.advance(ms));
}

async function withExitCode(w: World, exitCode: number | undefined): Promise<void> {
  if (exitCode === undefined) return;
  await act(w, { kind: 'exitCode', code: exitCode }, () => {
    w.h.exitCode = exitCode;
  });
}

const STEP_RESULT = /^xstate\.(done|error)\.actor\.(closeListener|disposeStore|closeServer|releaseSession)$/;
const SESSION_DONE = /^xstate\.done\.actor\.(session-\d+)$/;
const AFTER = /^xstate\.after\.(idleTimeout|stepTimeout|drainTimeout)\./;

/** Does what an event of the server's traversal stands for. */
export async function performServer(w: World, event: ServerEvent): Promise<void> {
  const e = event as ServerEvent & { exitCode?: number; signal?: string; reason?: string };
  const { h } = w;
  switch (e.type) {
    case 'session.opened': {
      const id = await open(w);
      if (id === null) throw new Error('the host refused a relay');
      // Odd sessions come with a handler in flight, so a hurry has something to abort.
      if (Number(id.slice('session-'.length)) % 2 === 1) await startHandler(w, id);
      return;
    }
    case 'signal.received':
      await withExitCode(w, e.exitCode);
      await act(w, { kind: 'signal', signal: e.signal }, () => h.signal(e.signal));
      return;
    case 'shutdown.requested':
      await withExitCode(w, e.exitCode);
      await act(w, { kind: 'shutdown', reason: e.reason }, () => void h.lifecycle.shutdown(e.reason));
      return;
  }
  const step = STEP_RESULT.exec(e.type);
  const done = SESSION_DONE.exec(e.type);
  const after = AFTER.exec(e.type);
  if (step) await settleStep(w, step[2]!, step[1] === 'done');
  else if (done) await endSession(w, done[1]!);
  else if (after)
    await advance(
      w,
      { idleTimeout: w.timing.idleMs, stepTimeout: w.timing.stepMs, drainTimeout: w.timing.drainMs }[
        after[1] as 'idleTimeout'
      ],
    );
  else throw new Error(`no way to perform ${e.type}`);
}

/** Ends a session the way production does (see the file's comment). */
export async function endSession(w: World, id: string): Promise<void> {
  const { h } = w;
  if (!h.calls.includes(`closeServer:${id}`)) {
    const type: ConnectionEnd = Number(id.slice('session-'.length)) % 2 === 1 ? 'connection.ended' : 'transport.closed';
    await act(w, { kind: 'connection', session: id, type }, () => h.trigger(id, type));
  }
  if (h.stepRunning(`closeServer:${id}`)) await settleStep(w, `closeServer:${id}`, true);
  while (h.handlers.some((x) => x.session === id && !x.settled)) await settleHandler(w, id);
  if (h.stepRunning(`releaseSession:${id}`)) await settleStep(w, `releaseSession:${id}`, true);
}

/** In the session's traversal the server's own steps succeed as soon as they run. */
export async function serverFollows(w: World): Promise<void> {
  for (const key of ['closeListener', 'disposeStore']) if (w.h.stepRunning(key)) await settleStep(w, key, true);
}

/** Does what an event of the session's traversal stands for. */
export async function performSession(w: World, event: SessionEvent): Promise<void> {
  const { h } = w;
  const type = event.type as string;
  switch (type) {
    case 'connection.ended':
    case 'connection.closed':
    case 'transport.closed':
      await act(w, { kind: 'connection', session: SESSION_ID, type }, () => h.trigger(SESSION_ID, type));
      break;
    case 'server.closing':
      await act(w, { kind: 'shutdown', reason: 'test' }, () => void h.lifecycle.shutdown('test'));
      break;
    case 'server.escalated':
      // Only a server in teardown hurries its sessions: a second signal does.
      if (h.lifecycle.state().startsWith('connected')) {
        await act(w, { kind: 'shutdown', reason: 'test' }, () => void h.lifecycle.shutdown('test'));
        await serverFollows(w);
      }
      await act(w, { kind: 'signal', signal: 'SIGINT' }, () => h.signal('SIGINT'));
      break;
    case 'handler.started':
      await startHandler(w, SESSION_ID);
      break;
    case 'handler.settled':
      await settleHandler(w, SESSION_ID);
      break;
    default: {
      const step = STEP_RESULT.exec(type);
      const after = AFTER.exec(type);
      if (step) await settleStep(w, `${step[2]}:${SESSION_ID}`, step[1] === 'done');
      else if (after?.[1] === 'stepTimeout') await advance(w, w.timing.sessionStepMs);
      else if (after?.[1] === 'drainTimeout') await advance(w, w.timing.sessionDrainMs);
      else throw new Error(`no way to perform ${type}`);
    }
  }
  await serverFollows(w);
}
