import { PEER, QMD_IDLE, SDK } from './sessions.js';
import { formatCell } from './table.js';
import type { BenchmarkResult, Cell, Table, Unit } from './types.js';

/** The three start-up figures the README's goals are judged by: which benchmark, which of its tables, in what unit. */
const MEASURES: ReadonlyArray<{ label: string; benchmark: string; table: number; unit: Unit }> = [
  { label: 'spawn → initialize answered', benchmark: 'startup', table: 0, unit: 'ms' },
  { label: 'idle RSS (VmRSS)', benchmark: 'rss', table: 0, unit: 'MB' },
  { label: 'stdin close → exit, idle', benchmark: 'exit', table: 0, unit: 'ms' },
];

/** A contender's p50 in a table, or undefined when it has no row or did not run. */
function p50(table: Table, contender: string): number | undefined {
  const column = table.columns.findIndex((c) => c.label === 'p50');
  const cell = table.rows.find((row) => row[0] === contender)?.[column];
  return typeof cell === 'number' && Number.isFinite(cell) ? cell : undefined;
}

/**
 * qmd, the bare SDK server and the peer side by side, p50s from one run, with qmd's ratios to
 * each; undefined when none of the three benchmarks ran. A peer that did not run reads "—".
 */
export function headlineTable(results: readonly BenchmarkResult[]): Table | undefined {
  const rows: Cell[][] = [];
  for (const measure of MEASURES) {
    const table = results.find((r) => r.name === measure.benchmark)?.tables[measure.table];
    if (table === undefined) continue;
    const [ours, sdk, peer] = [QMD_IDLE, SDK, PEER].map((name) => p50(table, name));
    const show = (value: number | undefined) =>
      value === undefined ? '—' : `${formatCell(value, { label: '', unit: measure.unit })} ${measure.unit}`;
    const ratio = (base: number | undefined) =>
      ours === undefined || base === undefined ? '—' : `${(ours / base).toFixed(2)}×`;
    rows.push([measure.label, show(ours), show(sdk), show(peer), ratio(sdk), ratio(peer)]);
  }
  if (rows.length === 0) return undefined;
  return {
    title: 'qmd against the bare SDK server and the peer (p50s, one interleaved run)',
    columns: [
      { label: 'measure', unit: 'text' },
      { label: 'qmd mcp', unit: 'text' },
      { label: 'bare SDK server', unit: 'text' },
      { label: 'peer', unit: 'text' },
      { label: 'qmd ÷ SDK', unit: 'text' },
      { label: 'qmd ÷ peer', unit: 'text' },
    ],
    rows,
  };
}
