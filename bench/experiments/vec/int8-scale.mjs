/**
 * How a float vector should become int8 for the coarse pass: sqlite-vec 0.1.9's
 * `vec_quantize_int8(v, 'unit')` (a fixed step of 2/255 over [-1, 1]) against one scale per
 * vector (largest component → ±127, what `src/store/vectors/vectors.ts` does). Recall@10 of the
 * coarse pass with C candidates plus an exact re-score, computed in JS on 20,000 clustered
 * unit vectors (lib.mjs), 30 held-out queries.
 *
 *   node bench/experiments/vec/int8-scale.mjs [dims]     (64 or 768)
 */
import { clustered } from './lib.mjs';

const N = 20000,
  D = Number(process.argv[2] ?? 768),
  Q = 30;
const all = [...clustered(N + Q, D, 1)];
const data = all.slice(0, N),
  queries = all.slice(N);
const unit = (v) => Int8Array.from(v, (x) => Math.max(-128, Math.min(127, Math.trunc((x + 1) / (2 / 255) - 128))));
const perVec = (v) => {
  let m = 0;
  for (const x of v) m = Math.max(m, Math.abs(x));
  const s = m === 0 ? 0 : 127 / m;
  return Int8Array.from(v, (x) => Math.round(x * s));
};
const cos = (a, b) => {
  let d = 0,
    na = 0,
    nb = 0;
  for (let i = 0; i < a.length; i++) {
    d += a[i] * b[i];
    na += a[i] * a[i];
    nb += b[i] * b[i];
  }
  return d / Math.sqrt(na * nb || 1);
};
for (const [name, fn] of [
  ['unit', unit],
  ['per-vector', perVec],
]) {
  const codes = data.map(fn);
  for (const C of [10, 20, 40, 100]) {
    let hit = 0;
    for (const q of queries) {
      const truth = new Set(
        data
          .map((v, i) => [cos(q, v), i])
          .sort((a, b) => b[0] - a[0])
          .slice(0, 10)
          .map((x) => x[1]),
      );
      const qc = fn(q);
      const cand = codes
        .map((c, i) => [cos(qc, c), i])
        .sort((a, b) => b[0] - a[0])
        .slice(0, C)
        .map((x) => x[1]);
      const top = cand
        .map((i) => [cos(q, data[i]), i])
        .sort((a, b) => b[0] - a[0])
        .slice(0, 10);
      for (const [, i] of top) if (truth.has(i)) hit++;
    }
    console.log(D, name, 'C', C, 'recall@10', (hit / (10 * Q)).toFixed(3));
  }
}
