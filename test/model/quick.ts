/**
 * The cheap cut of the generated tests, for proving in `npm test` that they kill a mutant
 * (test/mutants/): the shortest paths of a smaller model (in flight ≤ 1, one payload), each
 * replayed unobserved and then probed with what the machine ignores, all judged by the
 * contract oracle. About 530 paths, generated in ~40 ms.
 * Imported from a mutated copy of the repository, it tests that copy's machine.
 */
import { getShortestPaths } from 'xstate/graph';
import { lifecycleMachine } from '../../machines/lifecycle.js';
import { eventsFor, INPUT, serializeState } from './model.js';
import { ignoredInputs, probe } from './probes.js';

/**
 * Replays the cut until a failure names `guarantee` (the one a mutant is meant to break);
 * returns that message, or, if none does, every distinct failure seen (empty: all passed).
 */
export async function brokenGuarantee(guarantee: string): Promise<string> {
  const paths = getShortestPaths(lifecycleMachine, {
    input: INPUT,
    serializeState,
    events: eventsFor({ maxInflight: 1, startsDuringTeardown: true, exitCodeVariants: false }),
  });
  const others = new Set<string>();
  for (const path of paths) {
    try {
      await probe(path, ignoredInputs(lifecycleMachine, path, 1));
    } catch (error) {
      const message = (error as Error).message;
      if (message.includes(`guarantee "${guarantee}" broken: `)) return message;
      others.add(message.split(' broken: ')[0]!);
    }
  }
  return [...others].join('; ');
}
