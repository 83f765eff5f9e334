/**
 * Tests generated from the lifecycle's machine, run by ./driver.ts: every shortest path, every
 * transition no shortest path takes and every simple path, replayed against the real host with
 * hand-written fakes and a simulated clock; the end of every shortest path probed with what the
 * machine ignores. After every step the contract oracle (./oracle.ts) checks docs/design.md's
 * guarantees against what was observed, with expectations worked out from the inputs alone,
 * not from the machine; then the replay checks that the host did what the machine says: the
 * state and the ordered calls; at the end, the exit-code rule, the order of the steps, removed
 * listeners and pending timers (see ./replay.ts). The coverage check computes the machine's
 * states and transitions from its own definition and fails if the replays missed one.
 *
 * Bounds: the shortest paths (and the transitions they miss) let handlers start in any state,
 * in flight ≤ 2, with two payload variants of every first trigger (exit code 0, and an earlier
 * 3; one under mutation testing: half the paths, the same transitions). The simple paths are
 * bounded further so the enumeration stays in seconds (the full model has far more than 10^5):
 * handlers start only while connected (a closed transport dispatches nothing new) and the first
 * trigger has one payload and no index write of the watcher (the shortest paths offer one write
 * in every state). The shortest paths and the property test cover the rest.
 * The lifecycle alone replays its shortest paths a second time unobserved (no trace, no
 * inspector: how it runs in production), where the host counts handlers in the gate while
 * connected and hands the count over with the trigger.
 */
import { lifecycleMachine } from '../../machines/lifecycle.js';
import { describeGeneratedTests, mutation } from './driver.js';
import { lifecycleTraversal, transitionRecorder } from './model.js';
import { ignoredInputs, probe } from './probes.js';
import { replay } from './replay.js';

const MAX_INFLIGHT = 2;
// One write of the watcher at a time, as the engine writes one batch at a time; in every state.
const MAX_WRITES = 1;

describeGeneratedTests({
  label: 'lifecycle model',
  title: 'paths generated from the machine',
  machine: lifecycleMachine,
  full: lifecycleTraversal({
    maxInflight: MAX_INFLIGHT,
    startsDuringTeardown: true,
    exitCodeVariants: !mutation,
    maxWrites: MAX_WRITES,
  }),
  // No writes in the simple paths: with one write in flight their number does not finish
  // enumerating in minutes; the shortest paths, the transitions they miss and the probes reach
  // every (state, writes) pair and every transition with a write in flight.
  simple: lifecycleTraversal({
    maxInflight: MAX_INFLIGHT,
    startsDuringTeardown: false,
    exitCodeVariants: false,
    maxWrites: 0,
  }),
  replay,
  ignoredAt: (path) => ignoredInputs(lifecycleMachine, path, { maxInflight: MAX_INFLIGHT, maxWrites: MAX_WRITES }),
  probe,
  recorder: transitionRecorder,
  // failedStep is left within the same step (eventless), so no path rests there; the coverage
  // check sees it entered.
  transient: ['lifecycle.failedStep'],
  unobserved: true,
});
