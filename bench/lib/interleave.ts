/**
 * Runs contenders in interleaved rounds — round r measures every contender once, starting
 * with contender r mod n (A B C, B C A, C A B, …) — so that whatever else the machine is
 * doing (other test suites, thermal drift, a GC in the runner) lands on all of them alike
 * instead of on whichever ran last. Warm-up rounds are measured and thrown away.
 *
 * A contender with `skip` set is never measured (e.g. "not available yet"): it gets no samples.
 */
export interface Contender {
  name: string;
  /** Why this contender cannot run here; it is reported, not measured. */
  skip?: string;
}

export interface InterleaveOptions {
  rounds: number;
  warmup?: number;
  /** Called after each round (progress on stderr). */
  onRound?: (round: number, rounds: number) => void;
}

/**
 * `QMD_BENCH_SCALE` (`npm run bench -- --scale F`) multiplies every benchmark's rounds, never
 * below 3: fewer rounds on a machine too loaded for the full counts. The tables' `n` column
 * shows what ran.
 */
export function scaledRounds(rounds: number): number {
  const scale = Number(process.env.QMD_BENCH_SCALE ?? '1');
  if (!(scale > 0) || scale === 1) return rounds;
  return Math.max(Math.min(3, rounds), Math.round(rounds * scale));
}

/**
 * `measure(contender, round)` returns one sample or several (a sample may yield many numbers,
 * e.g. one per query); samples come back per contender name, in measurement order.
 */
export async function interleave<C extends Contender>(
  contenders: readonly C[],
  options: InterleaveOptions,
  measure: (contender: C, round: number) => Promise<number | number[]>,
): Promise<Map<string, number[]>> {
  const active = contenders.filter((c) => c.skip === undefined);
  const samples = new Map<string, number[]>(contenders.map((c) => [c.name, []]));
  const warmup = options.warmup ?? 0;
  const rounds = scaledRounds(options.rounds);
  for (let round = 0; round < warmup + rounds; round++) {
    for (let i = 0; i < active.length; i++) {
      const contender = active[(round + i) % active.length] as C;
      const value = await measure(contender, round);
      if (round >= warmup) samples.get(contender.name)?.push(...(Array.isArray(value) ? value : [value]));
    }
    if (round >= warmup) options.onRound?.(round - warmup + 1, rounds);
  }
  return samples;
}

/** Runs `task` over `items` with at most `limit` at once; results in item order. */
export async function pool<T, R>(items: readonly T[], limit: number, task: (item: T, index: number) => Promise<R>) {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const index = next++;
      results[index] = await task(items[index] as T, index);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  return results;
}
