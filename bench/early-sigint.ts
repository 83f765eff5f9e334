/**
 * Ctrl-C in the first second of a long command (docs/design.md §6): `qmd update` on an index
 * with half its notes changed gets one SIGINT at a seeded moment 100–1,100 ms after the spawn
 * (the window where it used to die by the signal), and the outcome is counted: exit 130 with
 * its line (its own exit), killed by the signal (no line), or finished first (exit 0). With
 * `--before`, an older build gets the same moments, interleaved (before, after, before …).
 *
 *   npm run build && npx tsx bench/early-sigint.ts [--before OLD/dist/qmd.mjs] [--runs 20] [--seed 44]
 *
 * Prints a table, writes `bench/results-early-sigint.md`.
 */
import { writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { QMD_BIN, qmdEnv, runQmd, tempWorkspace } from '../test/support/qmd.js';
import { seededRandom } from '../test/support/seeded.js';
import { spawnProcess } from '../test/support/spawn.js';

const arg = (name: string): string | undefined => {
  const at = process.argv.indexOf(name);
  return at > 0 ? process.argv[at + 1] : undefined;
};
const BEFORE = arg('--before');
const RUNS = Number(arg('--runs') ?? 20);
const SEED = Number(arg('--seed') ?? 44);
const RESULTS = fileURLToPath(new URL('./results-early-sigint.md', import.meta.url));

const random = seededRandom(SEED);
const MOMENTS = Array.from({ length: RUNS }, () => 100 + Math.floor(random() * 1000));

const FILES = 300;
const ws = tempWorkspace(
  Object.fromEntries(Array.from({ length: FILES }, (_, i) => [`n${i}.md`, `# old ${i}\n\nold${i}.\n`])),
);
type Outcome = '130, its line' | 'killed by SIGINT' | 'finished first (0)' | string;
const outcomes: Record<string, Outcome[]> = { before: [], after: [] };
const killedAt: Record<string, number[]> = { before: [], after: [] };
try {
  const env = qmdEnv(ws.index);
  const added = await runQmd(['collection', 'add', ws.notesDir, '--name', 'notes'], env);
  if (added.code !== 0) throw new Error(added.stderr);
  const builds = BEFORE === undefined ? ['after'] : ['before', 'after'];
  for (const [i, moment] of MOMENTS.entries()) {
    for (const build of builds) {
      const word = `w${i}${build}`;
      for (let n = 0; n < FILES; n += 2)
        writeFileSync(join(ws.notesDir, `n${n}.md`), `# ${word} ${n}\n\n${word}${n}.\n`);
      const p = spawnProcess(process.execPath, [build === 'before' ? BEFORE! : QMD_BIN, 'update'], { env });
      p.child.stdin?.end();
      await new Promise<void>((resolve) => p.child.once('spawn', () => resolve()));
      await new Promise((resolve) => setTimeout(resolve, moment));
      if (p.child.exitCode === null) p.child.kill('SIGINT');
      const exit = await p.closed;
      const outcome =
        exit.signal === 'SIGINT'
          ? 'killed by SIGINT'
          : exit.code === 130 && /Interrupted|Stopping after|Quitting at once/.test(p.stderr())
            ? '130, its line'
            : exit.code === 0
              ? 'finished first (0)'
              : `exit ${exit.code ?? exit.signal}: ${p.stderr().trim().split('\n').at(-1)}`;
      outcomes[build]!.push(outcome);
      if (outcome === 'killed by SIGINT') killedAt[build]!.push(moment);
      console.log(`${build} at ${moment} ms: ${outcome}`);
      // Whatever it left, the next run starts from a finished update.
      await runQmd(['update'], env);
    }
  }
} finally {
  ws.cleanup();
}

const count = (build: string, what: string) => outcomes[build]!.filter((o) => o === what).length;
const rows = Object.keys(outcomes)
  .filter((build) => outcomes[build]!.length > 0)
  .map((build) => {
    const other = outcomes[build]!.filter(
      (o) => !['130, its line', 'killed by SIGINT', 'finished first (0)'].includes(o),
    );
    const at =
      killedAt[build]!.length === 0 ? '—' : `${Math.min(...killedAt[build]!)}–${Math.max(...killedAt[build]!)} ms`;
    return `| ${build} | ${RUNS} | ${count(build, '130, its line')} | ${count(build, 'killed by SIGINT')} | ${at} | ${count(build, 'finished first (0)')} | ${other.length === 0 ? '—' : other.join('; ')} |`;
  });
const table = [
  '| build | SIGINTs | exit 130 with its line | killed by the signal | those at | finished first | other |',
  '|---|---|---|---|---|---|---|',
  ...rows,
].join('\n');
console.log(`\n${table}`);
writeFileSync(
  RESULTS,
  `# Ctrl-C in the first second of \`qmd update\`\n\n\`npx tsx bench/early-sigint.ts${BEFORE === undefined ? '' : ' --before OLD/dist/qmd.mjs'} --runs ${RUNS} --seed ${SEED}\` on Node ${process.versions.node}, ${cpus().length} cores, load ${loadavg()[0]!.toFixed(1)} at the end (shared machine). One SIGINT per run, at a seeded moment 100–1,100 ms after the spawn; the builds interleaved on the same moments. Moments: ${MOMENTS.join(', ')} ms.\n\n${table}\n`,
);
