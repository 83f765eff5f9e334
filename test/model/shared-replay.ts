/**
 * One generated path of the shared server's machine or of the session's, replayed against the
 * real host. After every input the contract oracle (./shared-oracle.ts, independent of the
 * machines) checks what was observed; after every step of the path the host's actor is
 * compared with the machine's snapshot (state, the context that matters, the ordered calls).
 * A broken guarantee is reported before any disagreement between host and machine
 * (./driver.ts `replaySteps`). At the end, if the server is done, the watchdog's time passes.
 */
import { expect } from 'vitest';
import type { AnyMachineSnapshot, EventObject, InspectionEvent } from 'xstate';
import type { SessionEvent } from '../../machines/session.js';
import type { ServerEvent } from '../../machines/shared-server.js';
import { stateName } from '../../src/lifecycle/trace.js';
import { replaySteps } from './driver.js';
import { actorRecorder, SESSION_ID } from './shared-model.js';
import { SharedGuaranteeBroken } from './shared-oracle.js';
import { advance, performServer, performSession, serverWorld, sessionWorld, type World } from './shared-perform.js';

type Snapshot = AnyMachineSnapshot;
export type Steps<E extends EventObject> = Array<{ event: E; state: Snapshot }>;
type Observer = (event: InspectionEvent) => void;

/** Replays `steps` in `w` (./driver.ts `replaySteps`); the oracle judges inside `perform`. */
function replay<E extends EventObject>(
  w: World,
  steps: Steps<E>,
  perform: (w: World, event: E) => Promise<void>,
  compare: (step: { event: E; state: Snapshot }, where: string) => void,
): Promise<void> {
  return replaySteps(steps, {
    perform: (event) => perform(w, event),
    isVerdict: (error) => error instanceof SharedGuaranteeBroken,
    compare,
    end: async (asMachineSays) => {
      if (w.oracle.contract.finishedAt === undefined) return;
      await advance(w, w.timing.watchdogMs);
      asMachineSays(() => expect(w.h.exits, 'the watchdog exits').toHaveLength(1));
    },
  });
}

const SERVER_CALLS: Record<string, string[]> = {
  connected: [],
  closingTransport: ['closeListener'],
  draining: ['closeListener'],
  disposingStore: ['closeListener', 'disposeStore'],
  done: ['closeListener', 'disposeStore'],
};

/** Replays a path of the server's machine; `coverage` also observes the host's actors. */
export async function replayServer(steps: Steps<ServerEvent>, coverage?: Observer): Promise<void> {
  const actors = actorRecorder();
  const w = serverWorld(actors.observe, ...(coverage ? [coverage] : []));
  await replay(w, steps, performServer, ({ state: expected }, where) => {
    const { h } = w;
    expect(h.lifecycle.state(), where).toBe(stateName(expected.value));
    const actual = actors.server()!.getSnapshot().context;
    const view = (c: typeof actual) => ({
      sessions: c.sessions,
      opened: c.opened,
      priorExitCode: c.priorExitCode,
      triggerType: c.triggerType,
      failedSteps: c.failedSteps.map((f: { step: string }) => f.step),
      drain: c.drain,
      escalated: c.escalatedBy !== null,
    });
    expect(view(actual), where).toEqual(view(expected.context));
    const top = typeof expected.value === 'string' ? expected.value : Object.keys(expected.value)[0]!;
    const server = h.steps().filter((s) => s === 'closeListener' || s === 'disposeStore');
    if (top === 'failedStep') expect(server.length, where).toBeGreaterThan(0);
    else expect(server, where).toEqual(SERVER_CALLS[top]);
    // Each session: nothing while up and serving, its server closed once teardown told it to
    // end, both steps once it is done.
    for (let n = 1; n <= expected.context.opened; n++) {
      const id = `session-${n}`;
      const calls = h.steps().filter((s) => s.endsWith(`:${id}`));
      const live = (expected.context.sessions as string[]).includes(id);
      const want = !live ? ['closeServer', 'releaseSession'] : top === 'connected' ? [] : ['closeServer'];
      expect(calls, `${where}: ${id}`).toEqual(want.map((s) => `${s}:${id}`));
    }
  });
}

const SESSION_CALLS: Record<string, string[]> = {
  serving: [],
  closingServer: ['closeServer'],
  draining: ['closeServer'],
  releasing: ['closeServer', 'releaseSession'],
  done: ['closeServer', 'releaseSession'],
};

/** Replays a path of the session's machine, the session being the first its world opens. */
export async function replaySession(steps: Steps<SessionEvent>, coverage?: Observer): Promise<void> {
  const actors = actorRecorder();
  const w = await sessionWorld(actors.observe, ...(coverage ? [coverage] : []));
  await replay(w, steps, performSession, ({ state: expected }, where) => {
    const actual = actors.session(SESSION_ID)!.getSnapshot();
    expect(actual.value, where).toBe(expected.value);
    const view = (c: typeof actual.context) => ({
      inflight: c.inflight,
      trigger: c.trigger,
      escalated: c.escalated,
      failedSteps: c.failedSteps.map((f: { step: string }) => f.step),
      drain: c.drain,
    });
    expect(view(actual.context), where).toEqual(view(expected.context));
    const calls = w.h.steps().filter((s) => s.endsWith(`:${SESSION_ID}`));
    if (expected.value === 'failedStep') expect(calls.length, where).toBeGreaterThan(0);
    else expect(calls, where).toEqual(SESSION_CALLS[expected.value as string]!.map((s) => `${s}:${SESSION_ID}`));
  });
}
