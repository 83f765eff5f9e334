import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

// `npm run test:mutation` (StrykerJS) runs the in-process lifecycle tests once per mutant.
// Spawned-process tests are left out (Stryker cannot see coverage across processes), and
// QMD_MUTATION makes the generated-path test replay its shortest paths only: the simple
// paths take ~30 s per run, which would turn hundreds of mutants into hours.
// (Not mergeConfig: it concatenates `include` arrays instead of replacing them.)
export default defineConfig({
  test: {
    ...base.test,
    include: ['test/model/**/*.test.ts', 'test/lifecycle/**/*.test.ts'],
    exclude: ['test/lifecycle/process.test.ts'],
    env: { QMD_MUTATION: '1' },
  },
});
