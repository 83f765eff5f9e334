import { configDefaults, defineConfig } from 'vitest/config';
import base from './vitest.config.js';

// `npm run test:fast`: the tests that start no process, so they need no `npm run build` (nothing
// runs dist/). test/support/no-spawn.ts makes child_process throw, so a file that spawns fails
// here until it is added to `exclude`: the list cannot silently let a spawning test in.
// Loading node-llama-cpp spawns a process too (it tests its binding in a child), so the tests
// that embed are out. QMD_MUTATION=1, as under mutation testing: the generated tests replay
// every shortest path and every transition those miss, but not the simple paths, which alone
// take over a minute here; `npm test` runs them all.
// (Not mergeConfig: it concatenates arrays instead of replacing them.)
export default defineConfig({
  test: {
    ...base.test,
    setupFiles: ['test/support/bound-each-test.ts', 'test/support/no-spawn.ts'],
    env: { QMD_MUTATION: '1' },
    exclude: [
      ...configDefaults.exclude,
      'test/e2e/**', // spawn dist/qmd.mjs
      'test/bench/smoke.test.ts', // runs the benchmarks' children
      'test/bench/llm-throughput.test.ts', // runs bench/llm-throughput.ts and its children
      'test/cli/code-cache.test.ts', // a child Node fills the compile cache
      'test/lifecycle/process.test.ts', // the host in a child, killed by signals
      'test/llm/process.test.ts', // node-llama-cpp in a child
      'test/store/errors.test.ts', // chattr
      'test/indexing/kill.test.ts', // SIGKILLs a writer child
      'test/store/sqlite.test.ts', // a second process on the database
      'test/indexing/update.test.ts', // mkfifo
      'test/watch/exit.test.ts', // a process with a started watcher, left to exit
      'test/watch/vectors.test.ts', // node-llama-cpp
      // node-llama-cpp's binding check:
      'test/llm/dispose.test.ts',
      'test/llm/embedder.test.ts',
      'test/llm/model-errors.test.ts',
      'test/llm/models.test.ts',
      'test/mcp/query.test.ts',
      'test/indexing/chunk-counts.test.ts',
      'test/indexing/embed-stop.test.ts',
      'test/indexing/embeddings.test.ts',
      'test/search/folder-vectors.test.ts',
      'test/search/query.test.ts',
      'test/core/query-models.test.ts',
      'test/core/remembered-model.test.ts',
      'test/search/scores.test.ts',
      'test/store/status.test.ts',
      'test/store/vectors/vector-index.test.ts',
    ],
  },
});
