/**
 * Recorded seeds for the property tests, so a failure found by chance can be replayed: every run prints the seed it used, and
 * `QMD_FC_SEED` (with `QMD_FC_PATH`, both as fast-check prints them on a failure) replays a run
 * exactly: `QMD_FC_SEED=… QMD_FC_PATH=… npx vitest run test/model/properties.test.ts`. A failure
 * found this way becomes a fixed case (the `examples` of each property test), run every time
 * before the random ones, so what a random run once found is never left to chance again.
 */
export function seedOptions(label: string): { seed: number; path?: string } {
  const given = process.env.QMD_FC_SEED;
  const seed = given === undefined ? (Date.now() ^ (Math.random() * 0x7fffffff)) | 0 : Number(given);
  const path = process.env.QMD_FC_PATH;
  console.error(`${label}: fast-check seed ${seed}${path ? `, path ${path}` : ''} (replay: QMD_FC_SEED=${seed})`);
  return { seed, ...(path !== undefined && { path }) };
}
