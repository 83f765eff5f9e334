/** What a benchmark reports for one contender: the sample count and its distribution. */
export interface Summary {
  n: number;
  p50: number;
  p90: number;
  max: number;
  min: number;
}

/**
 * The `q`-quantile (0–1) of `sorted` (ascending), interpolated linearly between the two
 * nearest ranks (R's type 7, numpy's default), so p50 of an even count is the midpoint.
 */
export function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const at = (sorted.length - 1) * q;
  const low = Math.floor(at);
  const high = Math.ceil(at);
  const a = sorted[low] as number;
  const b = sorted[high] as number;
  return a + (b - a) * (at - low);
}

export function summarize(samples: readonly number[]): Summary {
  const sorted = [...samples].sort((a, b) => a - b);
  return {
    n: sorted.length,
    p50: quantile(sorted, 0.5),
    p90: quantile(sorted, 0.9),
    max: sorted.at(-1) ?? Number.NaN,
    min: sorted[0] ?? Number.NaN,
  };
}

/** `a / b`, or NaN when either is missing or `b` is 0 (rendered as "n/a"). */
export function ratio(a: number | undefined, b: number | undefined): number {
  if (a === undefined || b === undefined || !Number.isFinite(a) || !Number.isFinite(b) || b === 0) return Number.NaN;
  return a / b;
}
