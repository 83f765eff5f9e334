import type { Contender } from './interleave.js';
import { ratio, type Summary, summarize } from './stats.js';
import type { Cell, Goal, Table, Unit } from './types.js';

export interface LatencyTableOptions {
  title: string;
  unit: Unit;
  /** Name of the contender every ratio is against (the bare SDK server). */
  baseline?: string;
  /** Name of the floor, for a second ratio. */
  floor?: string;
  /** Name of the peer, for a third ratio (a column only when it ran). */
  peer?: string;
  /** Failed samples per contender (not in the distribution). */
  failures?: Map<string, number>;
  /** Extra columns after the ratios, per contender. */
  extra?: {
    columns: Array<{ label: string; unit: Unit }>;
    cells: (name: string, summaries: Map<string, Summary>) => Cell[];
  };
}

/**
 * One row per contender: n, p50, p90, max, then p50 ratios against the baseline and the floor.
 * A skipped contender's row says why in place of its numbers.
 */
export function latencyTable(
  contenders: readonly Contender[],
  samples: Map<string, number[]>,
  options: LatencyTableOptions,
): { table: Table; summaries: Map<string, Summary> } {
  const summaries = new Map<string, Summary>();
  for (const c of contenders) if (c.skip === undefined) summaries.set(c.name, summarize(samples.get(c.name) ?? []));
  const base = options.baseline === undefined ? undefined : summaries.get(options.baseline);
  const floor = options.floor === undefined ? undefined : summaries.get(options.floor);
  const peer = options.peer === undefined ? undefined : summaries.get(options.peer);
  const columns = [
    { label: 'contender', unit: 'text' as Unit },
    { label: 'n', unit: 'count' as Unit },
    { label: 'p50', unit: options.unit },
    { label: 'p90', unit: options.unit },
    { label: 'max', unit: options.unit },
    ...(base ? [{ label: 'p50 ÷ SDK', unit: 'x' as Unit }] : []),
    ...(floor ? [{ label: 'p50 ÷ floor', unit: 'x' as Unit }] : []),
    ...(peer ? [{ label: 'p50 ÷ peer', unit: 'x' as Unit }] : []),
    ...(options.failures ? [{ label: 'failed', unit: 'count' as Unit }] : []),
    ...(options.extra?.columns ?? []),
  ];
  const rows = contenders.map((c): Cell[] => {
    const s = summaries.get(c.name);
    const extra = options.extra?.cells(c.name, summaries) ?? [];
    if (s === undefined) {
      return [c.name, c.skip ?? 'skipped', ...columns.slice(2, columns.length - extra.length).map(() => '—'), ...extra];
    }
    return [
      c.name,
      s.n,
      s.p50,
      s.p90,
      s.max,
      ...(base ? [ratio(s.p50, base.p50)] : []),
      ...(floor ? [ratio(s.p50, floor.p50)] : []),
      ...(peer ? [ratio(s.p50, peer.p50)] : []),
      ...(options.failures ? [options.failures.get(c.name) ?? 0] : []),
      ...extra,
    ];
  });
  return { table: { title: options.title, columns, rows }, summaries };
}

/** A goal "ours ÷ baseline ≤ limit" on p50s (unmeasured when either side is missing). */
export function ratioGoal(
  name: string,
  limit: number,
  ours: Summary | undefined,
  baseline: Summary | undefined,
  missing = 'not measured',
): Goal {
  const r = ratio(ours?.p50, baseline?.p50);
  if (!Number.isFinite(r)) return { name, target: `≤ ${limit}×`, measured: missing, met: null };
  return { name, target: `≤ ${limit}×`, measured: `${r.toFixed(2)}×`, met: r <= limit };
}
