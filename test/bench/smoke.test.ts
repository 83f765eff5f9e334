/**
 * The benchmarks are programs (`npm run bench`), not tests: this only runs each one with tiny
 * counts through the same entry point, so they cannot rot. It checks the shape of what they
 * return — tables with rows, numbers that are numbers — and never a speed.
 */
import { describe, expect, it } from 'vitest';
import { machineInfo } from '../../bench/lib/machine.js';
import { resultsMarkdown } from '../../bench/lib/markdown.js';
import type { BenchmarkResult } from '../../bench/lib/types.js';
import { benchmarks, runBenchmark } from '../../bench/run.js';

const results: BenchmarkResult[] = [];

describe('bench smoke (quick mode)', () => {
  for (const { name } of benchmarks) {
    it(`${name} runs and reports tables of finite numbers`, async () => {
      const result = await runBenchmark(name, { quick: true, log: () => {} });
      results.push(result);
      expect(result.name).toBe(name);
      expect(result.tables.length).toBeGreaterThan(0);
      for (const table of result.tables) {
        expect(table.title).not.toBe('');
        expect(table.columns.length).toBeGreaterThan(1);
        expect(table.rows.length).toBeGreaterThan(0);
        for (const row of table.rows) {
          expect(row).toHaveLength(table.columns.length);
          for (const cell of row) {
            // A number is a measurement; a string is a label or why there is none ("not available yet").
            if (typeof cell === 'number')
              expect(Number.isFinite(cell), `${table.title}: ${row.join(' | ')}`).toBe(true);
            else expect(typeof cell).toBe('string');
          }
          // A sample that failed to run is rot (a contender that no longer starts, a changed reply).
          table.columns.forEach((column, i) => {
            if (/^(failed|failed to run|client failed)$/.test(column.label) && typeof row[i] === 'number') {
              expect(row[i], `${table.title}: ${row.join(' | ')}`).toBe(0);
            }
          });
        }
      }
      expect(result.goals.length).toBeGreaterThan(0);
      for (const goal of result.goals) {
        expect(goal.name).not.toBe('');
        expect(goal.target).not.toBe('');
        expect(goal.measured).not.toBe('');
        expect([true, false, null]).toContain(goal.met);
      }
    }, 600_000);
  }

  it('renders the results file with every benchmark', () => {
    const markdown = resultsMarkdown(
      { machine: machineInfo(), loadAtEnd: '0 / 0 / 0', seconds: 1, quick: true, command: 'test' },
      results,
    );
    for (const result of results) expect(markdown).toContain(result.title);
    expect(markdown).toContain('| benchmark | goal | target | measured | verdict |');
  });
});
