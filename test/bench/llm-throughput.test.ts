/**
 * bench/llm-throughput.ts is a program, not a test: this runs it once with tiny counts so it
 * cannot rot (the GPU check runs its bundled build on the device machine). It checks the table's
 * shape and that both sides measured something, never a speed.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const BENCH = fileURLToPath(new URL('../../bench/llm-throughput.ts', import.meta.url));

it('llm-throughput measures qmd and raw node-llama-cpp for each model, in one table', () => {
  const run = spawnSync(
    process.execPath,
    ['--import', 'tsx', BENCH, '--threads', '1', '--rounds', '1', '--chunks', '2', '--docs', '2', '--expansions', '1'],
    { encoding: 'utf8', timeout: 240_000 },
  );
  expect(run.status, run.stderr).toBe(0);
  const rows = run.stdout.split('\n').filter((line) => /^\| (embedding|ranking|generation) \|/.test(line));
  expect(rows.map((row) => row.split('|')[1]?.trim())).toEqual(['embedding', 'ranking', 'generation']);
  for (const row of rows) {
    const [qmd, raw] = [...row.matchAll(/\| ([\d.]+) [a-z/]+ /g)].map((m) => Number(m[1]));
    expect(qmd).toBeGreaterThan(0);
    expect(raw).toBeGreaterThan(0);
    expect(row).toContain('| off | cpu | 1 | 0/3 |');
  }
}, 300_000);
