/**
 * The cheap cut of the generated tests, for proving in `npm test` that they kill a mutant
 * (test/mutants/): the shortest paths of a smaller model (in flight ≤ 1, one payload), each
 * replayed unobserved and then probed with what the machine ignores, all judged by the
 * contract oracle (./driver.ts `brokenGuarantee`). About 530 paths, generated in ~40 ms.
 * Imported from a mutated copy of the repository, it tests that copy's machine.
 */
import { lifecycleMachine } from '../../machines/lifecycle.js';
import { brokenGuarantee as firstBroken } from './driver.js';
import { lifecycleTraversal } from './model.js';
import { ignoredInputs, probe } from './probes.js';

export function brokenGuarantee(guarantee: string): Promise<string> {
  return firstBroken(guarantee, [
    {
      machine: lifecycleMachine,
      traversal: lifecycleTraversal({
        maxInflight: 1,
        startsDuringTeardown: true,
        exitCodeVariants: false,
        maxWrites: 1,
      }),
      ignoredAt: (path) => ignoredInputs(lifecycleMachine, path as never, { maxInflight: 1, maxWrites: 1 }),
      probe: probe as never,
    },
  ]);
}
