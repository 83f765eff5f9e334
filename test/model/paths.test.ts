/**
 * Tests generated from the machine: every shortest path and every simple
 * path, replayed against the real host with hand-written fakes and a simulated clock. After
 * every step the contract oracle (./oracle.ts) checks docs/design.md's guarantees
 * against what was observed, with expectations worked out from the inputs alone, not from
 * the machine; then the replay checks that the host did what the machine says: the state
 * and the ordered calls; at the end, the exit-code rule, the order of the steps, removed
 * listeners and pending timers (see ./replay.ts).
 * The coverage check computes the machine's states and transitions from its own definition
 * and fails if the replays missed one.
 */

import { afterAll, describe, expect, it } from 'vitest';
import { getShortestPaths, getSimplePaths } from 'xstate/graph';
import { lifecycleMachine } from '../../machines/lifecycle.js';
import { lifecycleTraversal, otherTransitions } from './edges.js';
import { definedStates, eventsFor, INPUT, serializeState, transitionRecorder } from './model.js';
import { probeAll } from './probes.js';
import { expectFullCoverage, expectNone, groupByTrigger, replayAll, withoutPrefixes } from './replay-all.js';

// The full event model: handlers may start in any state, in-flight ≤ 2, two payload
// variants of every first trigger (exit code 0, and an earlier 3).
// (Under mutation testing, one payload variant: half the paths, the same transitions.)
const mutation = process.env.QMD_MUTATION === '1';
const bounds = { maxInflight: 2, startsDuringTeardown: true, exitCodeVariants: !mutation };
const shortest = getShortestPaths(lifecycleMachine, { input: INPUT, serializeState, events: eventsFor(bounds) });

// Every transition of the same graph that no shortest path takes: the path to its source and
// the transition (./edges.ts). Cheap, so it runs under mutation testing too.
const transitions = otherTransitions(lifecycleMachine, shortest, lifecycleTraversal(bounds));

// Every trigger kind, every step outcome, the deadline, in-flight ≤ 2. Bounded further so
// the enumeration stays in seconds (the full model has far more than 10^5 simple paths):
// handlers start only while connected (a closed transport dispatches nothing new) and the
// first trigger has one payload. The shortest paths and the property test cover the rest.
// Under mutation testing (vitest.mutation.config.ts) only the shortest paths are replayed.
const simple = mutation
  ? []
  : getSimplePaths(lifecycleMachine, {
      input: INPUT,
      serializeState,
      events: eventsFor({ maxInflight: 2, startsDuringTeardown: false, exitCodeVariants: false }),
    });

// A path that is a prefix of another is replayed as part of it: the replay checks the state
// and the calls after every step, so the longer replay asserts everything the prefix would.
const simpleToReplay = withoutPrefixes(simple);

const coverage = transitionRecorder();

describe('paths generated from the machine', () => {
  it('are counted, and reach every state', () => {
    console.error(
      `lifecycle model: ${shortest.length} shortest paths, ${transitions.length} transitions they do not take, ` +
        `${simple.length} simple paths (${simpleToReplay.length} not prefixes of another)`,
    );
    expect(shortest.length).toBeGreaterThan(100);
    if (!mutation) expect(simple.length).toBeGreaterThan(shortest.length);
    const reached = new Set(shortest.map((p) => `lifecycle.${String(p.state.value)}`));
    // failedStep is left within the same step (eventless), so no path rests there; the
    // coverage check below sees it entered.
    expect(definedStates().filter((s) => !reached.has(s))).toEqual(['lifecycle.failedStep']);
  });

  it.each(groupByTrigger(shortest))('replay every shortest path starting %s', async (_, group) => {
    expectNone(await replayAll(group, coverage.observe), group.length);
  });

  // Unobserved (no trace, no inspector: how it runs in production) the host counts handlers
  // in the gate while connected and hands the count over with the trigger. Same paths, same
  // expectations.
  it.each(groupByTrigger(shortest))('replay every shortest path starting %s, unobserved', async (_, group) => {
    expectNone(await replayAll(group), group.length);
  });

  it.each(groupByTrigger(transitions))(
    'replay every transition no shortest path takes, starting %s',
    async (_, group) => {
      expectNone(await replayAll(group, coverage.observe), group.length);
    },
  );

  // Paths never show an input the machine ignores; the contract may still say it matters.
  // Every state a shortest path reaches gets every such input, judged by the oracle alone.
  it.each(groupByTrigger(shortest))(
    'probe the end of every shortest path starting %s with what the machine ignores',
    async (_, group) => {
      expectNone(await probeAll(lifecycleMachine, group, 2), group.length);
    },
  );

  it.skipIf(simpleToReplay.length === 0).each(groupByTrigger(simpleToReplay))(
    'replay every simple path starting %s',
    async (_, group) => {
      expectNone(await replayAll(group, coverage.observe), group.length);
    },
  );
});

// Shortest paths alone do not take every transition (two edges into one vertex: the shortest
// path takes one), so the coverage check needs the simple paths too.
afterAll(() => {
  if (!mutation) expectFullCoverage(coverage, expect, 'lifecycle model');
});
