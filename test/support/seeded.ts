/**
 * mulberry32: a small seeded generator of numbers in [0, 1), good enough to pick the points a
 * test or a benchmark types Ctrl-C at. The same seed gives the same points: a test names its
 * seed (`QMD_TEST_SEED` replays it).
 */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The seed of this run: `QMD_TEST_SEED` when set (a replay), else a fresh one. */
export function testSeed(): number {
  return Number(process.env.QMD_TEST_SEED ?? Math.floor(Math.random() * 2 ** 31));
}
