/**
 * `node --expose-gc bench/experiments/scan-memory.mjs DIR`: what the read phase's listing
 * (src/indexing/scan.ts) keeps per file — tinyglobby's sorted path list and the `found` set —
 * as live heap after a full GC, and what the process's RSS does meanwhile (the glob's
 * transient garbage). Run on one collection of the scale corpora (bench/scale/corpus.ts);
 * figures in docs/design.md §8.5.
 */
import { glob } from 'tinyglobby';

const root = process.argv[2];
if (root === undefined || typeof globalThis.gc !== 'function') {
  console.error('usage: node --expose-gc bench/experiments/scan-memory.mjs DIR');
  process.exit(2);
}
const mb = (bytes) => Number((bytes / 2 ** 20).toFixed(1));
globalThis.gc();
const before = process.memoryUsage();
const started = performance.now();
const paths = await glob('**/*.md', {
  cwd: root,
  onlyFiles: true,
  followSymbolicLinks: false,
  dot: false,
  ignore: ['**/node_modules/**'],
});
const globMs = Math.round(performance.now() - started);
const unswept = process.memoryUsage();
globalThis.gc();
const listed = process.memoryUsage();
paths.sort();
const found = new Set(paths);
globalThis.gc();
const withSet = process.memoryUsage();
console.log(
  JSON.stringify({
    files: found.size,
    globMs,
    rssMb: { before: mb(before.rss), afterGlob: mb(unswept.rss), withSet: mb(withSet.rss) },
    heapMb: {
      before: mb(before.heapUsed),
      afterGlobUnswept: mb(unswept.heapUsed),
      afterGlob: mb(listed.heapUsed),
      withSet: mb(withSet.heapUsed),
    },
    liveBytesPerFile: {
      list: Math.round((listed.heapUsed - before.heapUsed) / paths.length),
      set: Math.round((withSet.heapUsed - listed.heapUsed) / paths.length),
    },
    rssBytesPerFile: Math.round((withSet.rss - before.rss) / paths.length),
  }),
);
