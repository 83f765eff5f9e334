/**
 * What every benchmark returns: tables of numbers and its goals, checked against what it
 * measured. Cells stay numbers until they are rendered, so the smoke test can check their
 * shape; a cell that could not be measured is a string saying why (e.g. "not available yet").
 */
export type Unit = 'ms' | 'MB' | 'x' | 'count' | 'per-s' | 'us' | 'pct' | 'text';

export interface Column {
  label: string;
  unit: Unit;
}

export type Cell = number | string;

export interface Table {
  title: string;
  columns: Column[];
  rows: Cell[][];
}

export interface Goal {
  /** What is compared, e.g. "stdin close → exit, qmd idle vs bare SDK (p50)". */
  name: string;
  /** e.g. "≤ 1.5×". */
  target: string;
  /** The figure, rendered, e.g. "1.21×" or "not available yet". */
  measured: string;
  /** `null` when it could not be measured. */
  met: boolean | null;
}

export interface BenchmarkReport {
  tables: Table[];
  goals: Goal[];
  /** Lines of context: sizes, settings, what a contender stands for, anything skipped. */
  notes: string[];
}

export interface BenchmarkOptions {
  /** Tiny counts: the smoke test and a quick look (`--quick`, `QMD_BENCH_QUICK=1`). */
  quick: boolean;
  /** Progress lines (stderr). */
  log: (line: string) => void;
}

export interface Benchmark {
  /** Short name used on the command line, e.g. `exit`. */
  name: string;
  title: string;
  run(options: BenchmarkOptions): Promise<BenchmarkReport>;
}

export interface BenchmarkResult extends BenchmarkReport {
  name: string;
  title: string;
  /** Wall time of the benchmark, setup included. */
  seconds: number;
}
