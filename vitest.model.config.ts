import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

// `npm run test:mutation:model` (stryker.model.config.json): StrykerJS mutates machines/ (the
// lifecycle, the shared server and the session) and runs only the generated tests, test/model/
// (paths, probes, the contract oracles, the property tests), to measure what they alone catch,
// apart from the hand-written tests. QMD_MUTATION=1 as in vitest.mutation.config.ts: shortest paths, the transitions
// they miss and their probes with one payload variant, no simple paths (their enumeration
// alone takes ~12 s per run); the property tests set earlier exit codes. A mutant that hangs a
// test fails it after 60 s (a passing test of 6 s took over 10 s on the shared 2-core machine
// under load, failing the dry run).
// (Not mergeConfig: it concatenates `include` arrays instead of replacing them.)
export default defineConfig({
  test: {
    ...base.test,
    include: ['test/model/**/*.test.ts'],
    testTimeout: 60_000,
    env: { QMD_MUTATION: '1' },
  },
});
