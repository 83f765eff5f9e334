/**
 * The lifecycle's deterministic scenarios (./scenarios.ts): inputs the traversal does not
 * reach, chosen from the machine's inputs and the contract's rules, each judged by the contract
 * oracle after every input. The second line behind the generated paths, ahead of the property
 * test: a rule of the oracle that some plausible wrong machine breaks is broken here first.
 */
import { describe, expect, it } from 'vitest';
import { boundScenarios, exitCodeScenarios, runAll, triggerScenarios } from './scenarios.js';

const mutation = process.env.QMD_MUTATION === '1';

describe('deterministic scenarios of the lifecycle', () => {
  it('every bound at 0, 1 and its default, with time passing over it', async () => {
    const list = boundScenarios();
    expect(await runAll(list)).toEqual([]);
  });

  it('the exit code set before the trigger and in each teardown state', async () => {
    expect(await runAll(exitCodeScenarios())).toEqual([]);
  });

  // Under mutation testing (Stryker), pairs only: the triples take most of this file's time.
  it('each trigger followed by each other trigger, in each teardown state', async () => {
    expect(await runAll(triggerScenarios(!mutation))).toEqual([]);
  });
});
