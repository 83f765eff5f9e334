import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

// `npm run test:mutation:model` (stryker.model.config.json): StrykerJS mutates machines/ and
// runs only the generated tests, test/model/ (paths, probes, the contract oracle, the property
// test), to measure what they alone catch (issue 12). QMD_MUTATION=1 as in
// vitest.mutation.config.ts: shortest paths and their probes with one payload variant, no
// simple paths (their enumeration alone takes ~12 s per run); the property test sets earlier
// exit codes. A mutant that hangs a test fails it after 10 s.
// (Not mergeConfig: it concatenates `include` arrays instead of replacing them.)
export default defineConfig({
  test: {
    ...base.test,
    include: ['test/model/**/*.test.ts'],
    testTimeout: 10_000,
    env: { QMD_MUTATION: '1' },
  },
});
