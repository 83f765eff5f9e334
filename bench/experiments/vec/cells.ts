/**
 * How well do the inverted file's cells (src/store/vectors/cells.ts) hold the true neighbours, apart
 * from SQLite? N clustered vectors in memory, cells trained as the index trains them, each
 * vector assigned by the two-level search (`searched` nearest groups) or exactly; then, for
 * held-out queries of the data's clusters, the share of the exact top 10 found in the
 * `probes` nearest cells (the IVF's recall ceiling: the re-score is exact).
 *
 *   npx tsx bench/experiments/vec/cells.ts [--n 200000] [--dims 768] [--cells 512] [--rounds 6]
 */
import { Cells } from '../../../src/store/vectors/cells.js';
// @ts-expect-error: a plain .mjs helper of the experiments, without types.
import { clustered } from './lib.mjs';

const args = process.argv.slice(2);
const flag = (name: string, d: string) => (args.includes(name) ? (args[args.indexOf(name) + 1] as string) : d);
const N = Number(flag('--n', '200000'));
const D = Number(flag('--dims', '768'));
const CELLS = Number(flag('--cells', '512'));
const ROUNDS = Number(flag('--rounds', '6'));
const Q = 30;
const data = new Float32Array(N * D);
const queries: Float32Array[] = [];
let i = 0;
for (const v of clustered(N + Q, D, 1) as Iterable<Float32Array>) {
  if (i < N) data.set(v, i * D);
  else queries.push(v);
  i++;
}
const sampleSize = Math.min(N, CELLS * 32);
const sample = new Float32Array(sampleSize * D);
for (let s = 0; s < sampleSize; s++) {
  const at = Math.floor((s * N) / sampleSize);
  sample.set(data.subarray(at * D, (at + 1) * D), s * D);
}
let t = performance.now();
const cells = Cells.train(sample, D, CELLS, ROUNDS);
console.log(`trained ${cells.count} cells in ${((performance.now() - t) / 1000).toFixed(1)} s (rounds ${ROUNDS})`);
const truth = queries.map((q) => {
  const scores: [number, number][] = [];
  for (let j = 0; j < N; j++) {
    let s = 0;
    for (let d = 0; d < D; d++) s += (q[d] as number) * (data[j * D + d] as number);
    scores.push([j, s]);
  }
  return scores
    .sort((a, b) => b[1] - a[1])
    .slice(0, 10)
    .map(([j]) => j);
});
for (const searched of [3, 8, 1000]) {
  t = performance.now();
  const cellOf = new Int32Array(N);
  for (let j = 0; j < N; j++) cellOf[j] = cells.assign(data.subarray(j * D, (j + 1) * D), searched);
  const ms = performance.now() - t;
  const parts = [
    `groups searched ${searched >= 1000 ? 'all' : searched}: assign ${((ms * 1000) / N).toFixed(1)} µs a vector`,
  ];
  for (const probes of [8, 16, 32, 64]) {
    let found = 0;
    for (const [qi, q] of queries.entries()) {
      const near = new Set(cells.nearest(q, probes));
      found += (truth[qi] as number[]).filter((j) => near.has(cellOf[j] as number)).length;
    }
    parts.push(`probes ${probes}: ${(found / (10 * Q)).toFixed(3)}`);
  }
  console.log(parts.join('; '));
}
