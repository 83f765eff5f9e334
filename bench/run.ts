/**
 * `npm run bench` (builds first): runs every benchmark, or those named, prints each table and
 * writes a results file.
 *
 *   npm run bench                          # all, full counts → bench/results.md
 *   npm run bench -- exit startup          # a subset → bench/.tmp/results-partial.md
 *   npm run bench -- --quick               # tiny counts (also QMD_BENCH_QUICK=1) → bench/.tmp/results-quick.md
 *   npm run bench -- --out FILE            # write the results there instead
 *   npm run bench -- --scale 0.5           # every benchmark's interleaved rounds × 0.5 (at least 3;
 *                                          # also QMD_BENCH_SCALE): for a loaded machine
 *
 * Only a full run overwrites `bench/results.md`, the file the README quotes. Benchmarks are
 * programs, not tests: nothing here asserts a speed. `test/bench/smoke.test.ts` runs each one
 * through `runBenchmark(name, { quick: true })` so they cannot rot.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { disposalBenchmark } from './benchmarks/disposal.js';
import { exitBenchmark } from './benchmarks/exit.js';
import { orphansBenchmark } from './benchmarks/orphans.js';
import { rssBenchmark } from './benchmarks/rss.js';
import { searchBenchmark } from './benchmarks/search.js';
import { sharedBenchmark } from './benchmarks/shared.js';
import { startupBenchmark } from './benchmarks/startup.js';
import { toolCallBenchmark } from './benchmarks/tool-call.js';
import { headlineTable } from './lib/headline.js';
import { loadAverage, machineInfo } from './lib/machine.js';
import { formatDuration, resultsMarkdown, resultText } from './lib/markdown.js';
import { ROOT, staleBuild, TMP } from './lib/paths.js';
import { renderText } from './lib/table.js';
import type { Benchmark, BenchmarkOptions, BenchmarkResult } from './lib/types.js';

/** The order `npm run bench` runs them in, and the results file lists them in. */
export const benchmarks: readonly Benchmark[] = [
  exitBenchmark,
  startupBenchmark,
  rssBenchmark,
  toolCallBenchmark,
  searchBenchmark,
  orphansBenchmark,
  disposalBenchmark,
  sharedBenchmark,
];

const stderrLog = (line: string): void => {
  process.stderr.write(`[bench] ${line}\n`);
};

/** Runs one benchmark by name. */
export async function runBenchmark(name: string, options: Partial<BenchmarkOptions> = {}): Promise<BenchmarkResult> {
  const benchmark = benchmarks.find((b) => b.name === name);
  if (benchmark === undefined) {
    throw new Error(`unknown benchmark "${name}"; known: ${benchmarks.map((b) => b.name).join(', ')}`);
  }
  const started = performance.now();
  const report = await benchmark.run({ quick: options.quick ?? false, log: options.log ?? stderrLog });
  return { name: benchmark.name, title: benchmark.title, seconds: (performance.now() - started) / 1000, ...report };
}

interface Args {
  names: string[];
  quick: boolean;
  out?: string;
  scale?: number;
}

function parseArgs(argv: readonly string[]): Args {
  const args: Args = { names: [], quick: process.env.QMD_BENCH_QUICK === '1' };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--quick') args.quick = true;
    else if (arg === '--out') args.out = argv[++i];
    else if (arg.startsWith('--out=')) args.out = arg.slice('--out='.length);
    else if (arg === '--scale') args.scale = Number(argv[++i]);
    else if (arg.startsWith('--scale=')) args.scale = Number(arg.slice('--scale='.length));
    else if (arg === '--help' || arg === '-h') {
      process.stdout.write(
        `usage: npm run bench -- [--quick] [--out FILE] [--scale F] [${benchmarks.map((b) => b.name).join('|')} ...]\n`,
      );
      process.exit(0);
    } else args.names.push(arg);
  }
  return args;
}

async function main(argv: readonly string[]): Promise<void> {
  const args = parseArgs(argv);
  const names = args.names.length > 0 ? args.names : benchmarks.map((b) => b.name);
  for (const name of names) {
    if (!benchmarks.some((b) => b.name === name)) throw new Error(`unknown benchmark "${name}"`);
  }
  if (args.scale !== undefined) {
    if (!(args.scale > 0)) throw new Error('--scale takes a number > 0');
    process.env.QMD_BENCH_SCALE = String(args.scale);
  }
  const partial = args.names.length > 0;
  const out =
    args.out ??
    (args.quick
      ? join(TMP, 'results-quick.md')
      : partial
        ? join(TMP, 'results-partial.md')
        : join(ROOT, 'bench/results.md'));
  const stale = staleBuild();
  if (stale !== undefined) process.stderr.write(`bench: warning: ${stale}\n`);
  const machine = machineInfo();
  process.stdout.write(
    `qmd benchmarks: ${names.join(', ')}${args.quick ? ' (quick)' : ''}\n` +
      `node ${machine.node}, ${machine.cpuCount} × ${machine.cpuModel}, commit ${machine.commit}, load average ${machine.loadAtStart}\n\n`,
  );
  const started = performance.now();
  const results: BenchmarkResult[] = [];
  for (const name of names) {
    const result = await runBenchmark(name, { quick: args.quick });
    results.push(result);
    process.stdout.write(`${resultText(result)}\n\n`);
  }
  const headline = headlineTable(results);
  if (headline !== undefined) process.stdout.write(`${renderText(headline)}\n\n`);
  const seconds = (performance.now() - started) / 1000;
  // bench/runtime.ts runs this under another Node and names its own command line.
  const command = process.env.QMD_BENCH_COMMAND ?? `npm run bench${argv.length > 0 ? ` -- ${argv.join(' ')}` : ''}`;
  const markdown = resultsMarkdown({ machine, loadAtEnd: loadAverage(), seconds, quick: args.quick, command }, results);
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, markdown);
  process.stdout.write(`all done in ${formatDuration(seconds)}; wrote ${relative(process.cwd(), out) || out}\n`);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main(process.argv.slice(2)).catch((error: unknown) => {
    process.stderr.write(`bench: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exitCode = 1;
  });
}
