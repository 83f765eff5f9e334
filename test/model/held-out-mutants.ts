/**
 * Mutants kept out of ./mutants.ts (`npm run test:mutants` does not run them): wrong machines
 * that do not break a guarantee so much as never end, for the tests of the run bounds
 * (./driver.test.ts) and `bench/experiments/looping-mutant.ts`.
 */
import type { Mutant } from './mutants.js';

/**
 * The lifecycle whose failed step goes back to draining: with a step that rejects at once
 * (a bare machine's, or a host's `disposeStore: 'throw'`) it cycles failedStep → draining →
 * disposingStore on promise rejections alone, and no timer ever fires again.
 */
export const FAILED_STEP_LOOPS: Mutant = {
  name: 'failed-step-loops',
  breaks: 'a failed step goes on to the next step',
  file: 'machines/lifecycle.ts',
  edits: [
    {
      search: "always: [{ guard: 'failedWhileClosingTransport', target: 'draining' }, { target: 'done' }],",
      replace: "always: [{ guard: 'failedWhileClosingTransport', target: 'draining' }, { target: 'draining' }],",
    },
  ],
};
