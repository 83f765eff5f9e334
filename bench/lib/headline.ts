import { PEER, QMD_IDLE, SDK } from './sessions.js';
import { formatCell } from './table.js';
import type { BenchmarkResult, Cell, Table, Unit } from './types.js';

interface Measure {
  label: string;
  benchmark: string;
  table: number;
  unit: Unit;
  /** The rows of qmd, the bare SDK server and the peer (the spawned benchmarks' names unless given). */
  rows?: [string | undefined, string | undefined, string | undefined];
  /** The column read (`p50` unless given). */
  column?: string;
}

/**
 * The figures the README's goals are judged by (start-up, RSS, exit), then the search figures
 * (`bench:runtime` runs `search` too): which benchmark, which of its tables, in what unit.
 */
const MEASURES: readonly Measure[] = [
  { label: 'spawn → initialize answered', benchmark: 'startup', table: 0, unit: 'ms' },
  { label: 'idle RSS (VmRSS)', benchmark: 'rss', table: 0, unit: 'MB' },
  { label: 'stdin close → exit, idle', benchmark: 'exit', table: 0, unit: 'ms' },
  { label: 'SIGTERM → exit, idle', benchmark: 'exit', table: 1, unit: 'ms' },
  {
    label: 'BM25 `query` over MCP, 10,000 notes',
    benchmark: 'search',
    table: 2,
    unit: 'ms',
    rows: ['10,000 notes, qmd mcp (BM25)', undefined, '10,000 notes, peer (BM25: lex, no rerank)'],
  },
  {
    label: 'hybrid `query` over MCP (tiny model)',
    benchmark: 'search',
    table: 2,
    unit: 'ms',
    rows: ['30 notes embedded, qmd mcp (hybrid: BM25 + vectors, tiny model)', undefined, undefined],
  },
  {
    label: 'indexing 10,000 notes, files/s (whole command)',
    benchmark: 'search',
    table: 0,
    unit: 'per-s',
    rows: ['10,000 notes', undefined, '10,000 notes, peer (qmd 2.8.3)'],
    column: 'files/s wall',
  },
];

/** A contender's figure in a table, or undefined when it has no row or did not run. */
function figure(table: Table, contender: string | undefined, label = 'p50'): number | undefined {
  if (contender === undefined) return undefined;
  const column = table.columns.findIndex((c) => c.label === label);
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
    const [ours, sdk, peer] = (measure.rows ?? [QMD_IDLE, SDK, PEER]).map((name) =>
      figure(table, name, measure.column),
    );
    if (ours === undefined) continue;
    const unit = measure.unit === 'per-s' ? '' : ` ${measure.unit}`;
    const show = (value: number | undefined) =>
      value === undefined ? '—' : `${formatCell(value, { label: '', unit: measure.unit })}${unit}`;
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
