/**
 * Every vitest config's setup file: each test is one bounded run (./run-bounds.ts), so a
 * machine that loops in any test, through any host or an actor the test made, fails that test
 * at once with the loop's states named instead of hanging the file. The runs a test opens
 * itself (test/model's replays, scenarios and property sequences) count their own
 * transitions inside it.
 */
import { afterAll, aroundEach } from 'vitest';
import { bounded, looseTrip, RunBoundError, TEST_BOUNDS } from './run-bounds.js';

aroundEach(async (runTest, context) => {
  await bounded(`the test "${context.task.name}"`, runTest, TEST_BOUNDS);
});

afterAll(() => {
  const tripped = looseTrip();
  if (tripped !== undefined) throw new RunBoundError(`run bound passed outside any test: ${tripped}`);
});
