import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

// `npm run test:mutation` (StrykerJS) runs the in-process lifecycle tests once per mutant.
// Spawned-process tests are left out (Stryker cannot see coverage across processes), and
// QMD_MUTATION makes the generated-path test replay its shortest paths only: the simple
// paths take ~30 s per run, which would turn hundreds of mutants into hours.
// The README/SVG check (test/viz/artifacts.test.ts) is in: it is the one oracle for the
// machine's `description`s, and costs about a second.
// A mutant that leaves a promise unsettled (a step, `done`) hangs its test: 10 s, not the
// base config's 60 s, fails it (every test here finishes in well under a second).
// (Not mergeConfig: it concatenates `include` arrays instead of replacing them.)
export default defineConfig({
  test: {
    ...base.test,
    include: ['test/model/**/*.test.ts', 'test/lifecycle/**/*.test.ts', 'test/viz/artifacts.test.ts'],
    exclude: ['test/lifecycle/process.test.ts'],
    testTimeout: 10_000,
    env: { QMD_MUTATION: '1' },
  },
});
