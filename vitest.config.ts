import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Spawned-process tests build on `dist/` (npm test builds first) and wait for real
    // events with generous bounds; nothing here asserts wall-clock speed.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // node-llama-cpp is native and node:sqlite holds files open: keep each test file in its own process.
    isolate: true,
    restoreMocks: true,
    // Each test is a bounded run: a machine that loops fails it, naming the loop (docs/design.md §4).
    setupFiles: ['test/support/bound-each-test.ts'],
    // A change that breaks the core breaks hundreds of tests; after the 20th failure the rest
    // of the run is cancelled, so CI (and `vitest run test/model` with a looping machine) ends
    // in seconds with the first failures printed, not after every generated path has failed.
    // QMD_ALL_FAILURES=1 runs everything (and lifts the driver's five-per-group stop, §4).
    bail: process.env.QMD_ALL_FAILURES === '1' ? 0 : 20,
  },
});
