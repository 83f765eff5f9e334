/**
 * `npx tsx bench/experiments/looping-mutant.ts [--ref REF] [--folder test/model] [--timeout S] [--baseline] [--out FILE]`:
 * does a wrong machine that loops fail the tests, or hang them? The held-out lifecycle mutant
 * whose failedStep goes back to draining (test/model/held-out-mutants.ts; with a step that
 * rejects at once it cycles failedStep → draining → disposingStore on promise rejections
 * alone) is applied to a copy of the tree under the system's temporary folder (the working
 * tree, or `--ref`'s commit through `git archive`); then `vitest run FOLDER` runs there, on the
 * Node this script runs on, killed after `--timeout` seconds (default 300). Prints the time it
 * took (wall, and the CPU of the whole vitest tree), how it ended, each file's time and the
 * tests that failed; `--baseline` first runs the same folder on an unmutated copy, for the
 * time it takes on this machine now; `--out FILE` writes it all. Run it once per Node:
 * `PATH=/work/main/.ci/runtimes/node_modules/node22/bin:$PATH npx tsx …`.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { FAILED_STEP_LOOPS } from '../../test/model/held-out-mutants.js';
import { applyMutant, type Mutant } from '../../test/model/mutants.js';
import { mutatedCopy } from '../../test/support/mutant-copy.js';

const args = process.argv.slice(2);
const option = (name: string): string | undefined => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const ref = option('--ref');
const folder = option('--folder') ?? 'test/model';
const timeoutS = Number(option('--timeout') ?? 300);
const out = option('--out');

const ROOT = join(import.meta.dirname, '../..');
const PATHS = ['machines', 'src', 'test', 'package.json', 'tsconfig.json', 'vitest.config.ts', 'vitest.fast.config.ts'];
/** A copy of the tree (the working tree, or `ref`'s) with `mutant` applied (`null`: none), in a fresh temporary folder. */
function copyOf(mutant: Mutant | null): string {
  const dir = mkdtempSync(join(tmpdir(), `qmd-looping-mutant-${mutant?.name ?? 'none'}-`));
  if (ref === undefined) return mutatedCopy(ROOT, dir, mutant, PATHS, true);
  const archive = spawnSync('git', ['archive', '--format=tar', ref, ...PATHS], { cwd: ROOT, maxBuffer: 1 << 30 });
  if (archive.status !== 0) throw new Error(`git archive ${ref}: ${archive.stderr.toString()}`);
  const untar = spawnSync('tar', ['-x', '-C', dir], { input: archive.stdout });
  if (untar.status !== 0) throw new Error(`tar: ${untar.stderr.toString()}`);
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
  if (mutant === null) return dir;
  const file = join(dir, mutant.file);
  writeFileSync(file, applyMutant(mutant, readFileSync(file, 'utf8')));
  return dir;
}

interface Report {
  numPassedTests: number;
  numFailedTests: number;
  testResults: Array<{
    name: string;
    startTime: number;
    endTime: number;
    assertionResults: Array<{ fullName: string; status: string; failureMessages: string[] }>;
  }>;
}

/** Runs `vitest run FOLDER` in `dir` under /usr/bin/time (the CPU of the whole tree), killed after `timeoutS`. */
async function runVitest(dir: string, label: string): Promise<string[]> {
  const results = join(dir, 'vitest-results.json');
  const cpu = join(dir, 'cpu.txt');
  const vitest = join(ROOT, 'node_modules/vitest/vitest.mjs');
  const load = loadavg()[0]!.toFixed(1);
  const started = performance.now();
  const child = spawn(
    '/usr/bin/time',
    [
      '-f',
      '%U %S',
      '-o',
      cpu,
      process.execPath,
      vitest,
      'run',
      folder,
      '--reporter=dot',
      '--reporter=json',
      `--outputFile.json=${results}`,
    ],
    { cwd: dir, detached: true, stdio: 'ignore' },
  );
  let killed = false;
  const timer = setTimeout(() => {
    killed = true;
    // The whole group: vitest's forks would outlive their parent.
    process.kill(-child.pid!, 'SIGKILL');
  }, timeoutS * 1000);
  const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
  clearTimeout(timer);
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  const tree = ref === undefined ? 'the working tree' : `git ${ref}`;
  const head = `Node ${process.version}, ${tree}, ${label}: vitest run ${folder}`;
  if (killed) return [`${head} still running after ${timeoutS} s: killed (load ${load} at the start)`];
  // time(1) puts "Command exited with non-zero status N" first when vitest fails.
  const times = existsSync(cpu) ? (readFileSync(cpu, 'utf8').trim().split('\n').at(-1) ?? '') : '';
  const [user, sys] = times.split(/\s+/).map(Number);
  const report = JSON.parse(readFileSync(results, 'utf8')) as Report;
  const lines = [
    `${head} ended (exit ${code}) in ${seconds} s, CPU ${(user! + sys!).toFixed(1)} s (load ${load} at the start): ` +
      `${report.numFailedTests} tests failed, ${report.numPassedTests} passed`,
  ];
  for (const file of report.testResults) {
    const failed = file.assertionResults.filter((t) => t.status === 'failed');
    lines.push(
      `  ${file.name.slice(dir.length + 1)}: ${((file.endTime - file.startTime) / 1000).toFixed(1)} s, ${failed.length} failed`,
    );
    for (const test of failed) {
      // The line that names what broke (a guarantee, a bound), else the first.
      const said = (test.failureMessages[0] ?? '').split('\n').filter((l) => l.trim() !== '');
      const why = said.find((l) => /guarantee "|run bound passed/.test(l)) ?? said[0] ?? '';
      lines.push(`    - ${test.fullName}: ${why.trim().slice(0, 240)}`);
    }
  }
  return lines;
}

const lines: string[] = [];
for (const mutant of args.includes('--baseline') ? [null, FAILED_STEP_LOOPS] : [FAILED_STEP_LOOPS]) {
  const dir = copyOf(mutant);
  try {
    const label = mutant === null ? 'unmutated' : `${mutant.name} applied`;
    const run = await runVitest(dir, label);
    console.log(run.join('\n'));
    lines.push(...run);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
if (out) writeFileSync(out, `${lines.join('\n')}\n`);
