/**
 * Tests generated from the session's machine (one client of `qmd mcp --shared`): every
 * shortest path, every transition no shortest path takes, every simple path, and probes of
 * what the machine ignores, replayed against the real shared host with one session open, the
 * server's own steps succeeding at once and its bounds beyond every path (./shared-model.ts).
 * `server.closing` is the server's `shutdown()`, `server.escalated` a signal during its
 * teardown, as in production. The contract oracle checks after every input; the host's child
 * actor is compared with the machine after every step; coverage of the session machine's
 * states and transitions is computed from its definition.
 *
 * Bounds: at most 2 handlers in flight; for the shortest paths handlers may start in any state
 * before done, for the simple paths only while serving.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { getShortestPaths, getSimplePaths } from 'xstate/graph';
import { type SessionEvent, type SessionInput, sessionMachine } from '../../machines/session.js';
import { otherTransitions, type Traversal } from './edges.js';
import { definedStates } from './model.js';
import { expectFullCoverage, expectNone, groupByTrigger, replayAll, withoutPrefixes } from './replay-all.js';
import { actorRecorder, SESSION_INPUT, type SessionBounds, serializeSession, sessionEvents } from './shared-model.js';
import { probeAll, probeSession, sessionIgnored } from './shared-probes.js';
import { replaySession } from './shared-replay.js';

const mutation = process.env.QMD_MUTATION === '1';
const MAX_INFLIGHT = 2;
const traversal = (bounds: SessionBounds): Traversal<SessionEvent, SessionInput> => ({
  input: SESSION_INPUT,
  serializeState: serializeSession,
  events: sessionEvents(bounds),
});
const full = traversal({ maxInflight: MAX_INFLIGHT, startsDuringTeardown: true });
const shortest = getShortestPaths(sessionMachine, full);
const transitions = otherTransitions(sessionMachine, shortest, full);
const simple = mutation
  ? []
  : getSimplePaths(sessionMachine, traversal({ maxInflight: MAX_INFLIGHT, startsDuringTeardown: false }));
const simpleToReplay = withoutPrefixes(simple);

const coverage = actorRecorder();

describe('paths generated from the session’s machine', () => {
  it('are counted, and reach every state', () => {
    console.error(
      `session model: ${shortest.length} shortest paths, ${transitions.length} transitions they do not take, ` +
        `${simple.length} simple paths (${simpleToReplay.length} not prefixes of another)`,
    );
    expect(shortest.length).toBeGreaterThan(100);
    if (!mutation) expect(simple.length).toBeGreaterThan(shortest.length);
    const reached = new Set(shortest.map((p) => `session.${String(p.state.value)}`));
    expect(definedStates(sessionMachine).filter((s) => !reached.has(s))).toEqual(['session.failedStep']);
  });

  it.each(groupByTrigger(shortest))('replay every shortest path starting %s', async (_, group) => {
    expectNone(await replayAll(group, coverage.observe, replaySession), group.length);
  });

  it.each(groupByTrigger(transitions))(
    'replay every transition no shortest path takes, starting %s',
    async (_, group) => {
      expectNone(await replayAll(group, coverage.observe, replaySession), group.length);
    },
  );

  it.each(groupByTrigger(shortest))(
    'probe the end of every shortest path starting %s with what the machine ignores',
    async (_, group) => {
      expectNone(
        await probeAll(group, (p) => sessionIgnored(sessionMachine, p, MAX_INFLIGHT), probeSession),
        group.length,
      );
    },
  );

  it.skipIf(simpleToReplay.length === 0).each(groupByTrigger(simpleToReplay))(
    'replay every simple path starting %s',
    async (_, group) => {
      expectNone(await replayAll(group, coverage.observe, replaySession), group.length);
    },
  );
});

afterAll(() => {
  if (!mutation) expectFullCoverage(coverage, expect, 'session model', sessionMachine);
});
