/**
 * Tests generated from the shared server's machine (`qmd mcp --shared`), run by ./driver.ts:
 * every shortest path, every transition no shortest path takes, every simple path, and probes
 * of what the machine ignores, replayed against the real host (test/support/host-harness.ts)
 * with manual steps and a simulated clock. Sessions are real children of the host's actor; in
 * the traversal each is a black box the world may end (./shared-model.ts says why). After every
 * input the contract oracle (./shared-oracle.ts) checks docs/design.md §1 and §2.2 against what
 * was observed; after every step the host is compared with the machine (./shared-replay.ts).
 * The coverage check computes the machine's states and transitions from its definition and
 * fails if one is missed.
 *
 * Bounds: at most 2 sessions opened (the first with a handler in flight); two payload variants
 * of the first trigger (exit code 0 and an earlier 3) for the shortest paths, one for the simple
 * paths (3640 of them, enumerated in ~1.5 s). Under mutation testing (QMD_MUTATION=1) one
 * variant and no simple paths.
 */
import { sharedServerMachine } from '../../machines/shared-server.js';
import { describeGeneratedTests, mutation } from './driver.js';
import { actorRecorder, serverTraversal } from './shared-model.js';
import { probeServer, serverIgnored } from './shared-probes.js';
import { replayServer } from './shared-replay.js';

const MAX_SESSIONS = 2;

describeGeneratedTests({
  label: 'shared server model',
  title: 'paths generated from the shared server’s machine',
  machine: sharedServerMachine,
  full: serverTraversal({ maxSessions: MAX_SESSIONS, exitCodeVariants: !mutation }),
  simple: serverTraversal({ maxSessions: MAX_SESSIONS, exitCodeVariants: false }),
  replay: replayServer,
  ignoredAt: (path) => serverIgnored(sharedServerMachine, path, MAX_SESSIONS),
  probe: probeServer,
  recorder: actorRecorder,
  // failedStep is left within the same step (eventless): no path rests there; coverage sees it.
  transient: ['sharedServer.failedStep'],
});
