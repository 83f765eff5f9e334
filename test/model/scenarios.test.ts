/**
 * The lifecycle's deterministic scenarios (./scenarios.ts): inputs the traversal does not
 * reach, chosen from the machine's inputs and the contract's rules, each judged by the contract
 * oracle after every input. The second line behind the generated paths, ahead of the property
 * test: a rule of the oracle that some plausible wrong machine breaks is broken here first.
 */
import { describe, it } from 'vitest';
import { expectNone } from './driver.js';
import { boundConfigs, boundScenarios, exitCodeScenarios, runAll, TRIGGERS, triggerScenarios } from './scenarios.js';

// Under mutation testing (Stryker), pairs of triggers only: the triples take most of this file's time.
const mutation = process.env.QMD_MUTATION === '1';

describe('deterministic scenarios of the lifecycle', () => {
  it.each(boundConfigs().map((c) => [JSON.stringify(c), c] as const))(
    'bounds %s, with time passing over each',
    async (key) => {
      const list = boundScenarios().filter((s) => JSON.stringify(s.config) === key);
      expectNone(await runAll(list), list.length);
    },
  );

  it('the exit code set before the trigger and in each teardown state', async () => {
    const list = exitCodeScenarios();
    expectNone(await runAll(list), list.length);
  });

  it.each(TRIGGERS)('%s followed by each other trigger, in each teardown state', async (first) => {
    const list = triggerScenarios(!mutation).filter((s) => s.cmds[1] === first);
    expectNone(await runAll(list), list.length);
  });
});
