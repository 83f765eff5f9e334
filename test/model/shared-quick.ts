/**
 * The cheap cut of the shared server's generated tests, for proving in `npm test` that they
 * kill a mutant (test/mutants/), as ./quick.ts does for the lifecycle: the shortest paths of
 * both machines (one payload variant), each replayed and probed with what the machine ignores,
 * then run to the end, all judged by the contract oracle alone (./driver.ts `brokenGuarantee`).
 * Imported from a mutated copy of the repository, it tests that copy's machines.
 */
import { sessionMachine } from '../../machines/session.js';
import { sharedServerMachine } from '../../machines/shared-server.js';
import { brokenGuarantee as firstBroken } from './driver.js';
import { serverTraversal, sessionTraversal } from './shared-model.js';
import { probeServer, probeSession, serverIgnored, sessionIgnored } from './shared-probes.js';

export function brokenGuarantee(guarantee: string): Promise<string> {
  return firstBroken(guarantee, [
    {
      machine: sessionMachine,
      traversal: sessionTraversal({ maxInflight: 1, startsDuringTeardown: true }),
      ignoredAt: (path) => sessionIgnored(sessionMachine, path as never, 1),
      probe: probeSession as never,
    },
    {
      machine: sharedServerMachine,
      traversal: serverTraversal({ maxSessions: 2, exitCodeVariants: false }),
      ignoredAt: (path) => serverIgnored(sharedServerMachine, path as never, 2),
      probe: probeServer as never,
    },
  ]);
}
