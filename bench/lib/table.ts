import type { BenchmarkResult, Cell, Column, Goal, Table } from './types.js';

/** One cell as text: numbers by unit, NaN as "n/a", strings as they are. */
export function formatCell(cell: Cell, column: Column): string {
  if (typeof cell === 'string') return cell;
  if (!Number.isFinite(cell)) return 'n/a';
  switch (column.unit) {
    case 'ms':
      return cell >= 100 ? cell.toFixed(0) : cell >= 10 ? cell.toFixed(1) : cell.toFixed(2);
    case 'us':
      return cell >= 100 ? cell.toFixed(0) : cell.toFixed(1);
    case 'MB':
      return cell.toFixed(1);
    case 'x':
      return `${cell.toFixed(2)}×`;
    case 'pct':
      return `${cell >= 0 ? '+' : ''}${cell.toFixed(1)}%`;
    case 'per-s':
      return cell >= 100 ? Math.round(cell).toLocaleString('en-US') : cell.toFixed(1);
    case 'count':
      return Number.isInteger(cell) ? String(cell) : cell.toFixed(1);
    default:
      return String(cell);
  }
}

function header(column: Column): string {
  const unit = { ms: 'ms', MB: 'MB', us: 'µs', 'per-s': '/s' }[column.unit as string];
  return unit === undefined || column.label.includes(unit) ? column.label : `${column.label} (${unit})`;
}

function cells(table: Table): string[][] {
  return table.rows.map((row) => table.columns.map((column, i) => formatCell(row[i] ?? '', column)));
}

const numeric = (column: Column): boolean => column.unit !== 'text';

/** A table for the terminal: aligned columns, numbers right-aligned. */
export function renderText(table: Table): string {
  const head = table.columns.map(header);
  const body = cells(table);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((row) => (row[i] ?? '').length)));
  const line = (row: string[]) =>
    row
      .map((text, i) => {
        const column = table.columns[i] as Column;
        const width = widths[i] ?? 0;
        return numeric(column) && i > 0 ? text.padStart(width) : text.padEnd(width);
      })
      .join('  ')
      .trimEnd();
  const rule = widths.map((w) => '─'.repeat(w)).join('  ');
  return [table.title, line(head), rule, ...body.map(line)].join('\n');
}

/** A GitHub-flavoured markdown table. */
export function renderMarkdown(table: Table): string {
  const escapePipes = (text: string) => text.replaceAll('|', '\\|');
  const head = `| ${table.columns.map((c) => escapePipes(header(c))).join(' | ')} |`;
  const align = `|${table.columns.map((c, i) => (numeric(c) && i > 0 ? '---:' : ':---')).join('|')}|`;
  const body = cells(table).map((row) => `| ${row.map(escapePipes).join(' | ')} |`);
  return [`**${table.title}**`, '', head, align, ...body].join('\n');
}

export function verdict(goal: Goal): string {
  return goal.met === null ? '—' : goal.met ? 'met' : 'MISSED';
}

/** Goals as a table: every figure against its target. */
export function goalTable(results: readonly BenchmarkResult[]): Table {
  return {
    title: 'Goals',
    columns: [
      { label: 'benchmark', unit: 'text' },
      { label: 'goal', unit: 'text' },
      { label: 'target', unit: 'text' },
      { label: 'measured', unit: 'text' },
      { label: 'verdict', unit: 'text' },
    ],
    rows: results.flatMap((r) => r.goals.map((g) => [r.name, g.name, g.target, g.measured, verdict(g)])),
  };
}
