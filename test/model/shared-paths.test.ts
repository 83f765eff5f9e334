/**
 * Tests generated from the shared server's machine (`qmd mcp --shared`): every shortest path,
 * every transition no shortest path takes, every simple path, and probes of what the machine
 * ignores, replayed against the real host (test/support/host-harness.ts) with manual steps
 * and a simulated clock. Sessions are real children of the host's actor; in the traversal each
 * is a black box the world may end (./shared-model.ts says why). After every input the contract
 * oracle (./shared-oracle.ts) checks docs/design.md §1 and §2.2 against what was observed; after
 * every step the host is compared with the machine (./shared-replay.ts). The coverage check
 * computes the machine's states and transitions from its definition and fails if one is missed.
 *
 * Bounds: at most 2 sessions opened (the first with a handler in flight); two payload variants
 * of the first trigger (exit code 0 and an earlier 3) for the shortest paths, one for the simple
 * paths (3640 of them, enumerated in ~1.5 s). Under mutation testing (QMD_MUTATION=1) one
 * variant and no simple paths.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { getShortestPaths, getSimplePaths } from 'xstate/graph';
import { type ServerEvent, type ServerInput, sharedServerMachine } from '../../machines/shared-server.js';
import { otherTransitions, type Traversal } from './edges.js';
import { definedStates } from './model.js';
import { expectFullCoverage, expectNone, groupByTrigger, replayAll, withoutPrefixes } from './replay-all.js';
import { actorRecorder, SERVER_INPUT, type ServerBounds, serializeServer, serverEvents } from './shared-model.js';
import { probeAll, probeServer, serverIgnored } from './shared-probes.js';
import { replayServer } from './shared-replay.js';

const mutation = process.env.QMD_MUTATION === '1';
const MAX_SESSIONS = 2;
const traversal = (bounds: ServerBounds): Traversal<ServerEvent, ServerInput> => ({
  input: SERVER_INPUT,
  serializeState: serializeServer,
  events: serverEvents(bounds),
});
const full = traversal({ maxSessions: MAX_SESSIONS, exitCodeVariants: !mutation });
const shortest = getShortestPaths(sharedServerMachine, full);
const transitions = otherTransitions(sharedServerMachine, shortest, full);
const simple = mutation
  ? []
  : getSimplePaths(sharedServerMachine, traversal({ maxSessions: MAX_SESSIONS, exitCodeVariants: false }));
// A prefix of another path is replayed as part of it (the replay checks after every step).
const simpleToReplay = withoutPrefixes(simple);

const coverage = actorRecorder();

describe('paths generated from the shared server’s machine', () => {
  it('are counted, and reach every state', () => {
    console.error(
      `shared server model: ${shortest.length} shortest paths, ${transitions.length} transitions they do not take, ` +
        `${simple.length} simple paths (${simpleToReplay.length} not prefixes of another)`,
    );
    expect(shortest.length).toBeGreaterThan(100);
    if (!mutation) expect(simple.length).toBeGreaterThan(shortest.length);
    const ids = (v: unknown): string[] =>
      typeof v === 'string'
        ? [`sharedServer.${v}`]
        : Object.entries(v as object).flatMap(([k, s]) => [`sharedServer.${k}`, `sharedServer.${k}.${s}`]);
    const reached = new Set(shortest.flatMap((p) => ids(p.state.value)));
    // failedStep is left within the same step (eventless): no path rests there; coverage sees it.
    expect(definedStates(sharedServerMachine).filter((s) => !reached.has(s))).toEqual(['sharedServer.failedStep']);
  });

  it.each(groupByTrigger(shortest))('replay every shortest path starting %s', async (_, group) => {
    expectNone(await replayAll(group, coverage.observe, replayServer), group.length);
  });

  it.each(groupByTrigger(transitions))(
    'replay every transition no shortest path takes, starting %s',
    async (_, group) => {
      expectNone(await replayAll(group, coverage.observe, replayServer), group.length);
    },
  );

  it.each(groupByTrigger(shortest))(
    'probe the end of every shortest path starting %s with what the machine ignores',
    async (_, group) => {
      expectNone(
        await probeAll(group, (p) => serverIgnored(sharedServerMachine, p, MAX_SESSIONS), probeServer),
        group.length,
      );
    },
  );

  it.skipIf(simpleToReplay.length === 0).each(groupByTrigger(simpleToReplay))(
    'replay every simple path starting %s',
    async (_, group) => {
      expectNone(await replayAll(group, coverage.observe, replayServer), group.length);
    },
  );
});

afterAll(() => {
  if (!mutation) expectFullCoverage(coverage, expect, 'shared server model', sharedServerMachine);
});
