/**
 * `npm run test:mutants [NAME…]`: proves the generated tests judge the machine.
 * Each hand-written mutant of `machines/` (test/model/mutants.ts, with the shared server's and
 * the session's from test/model/shared-mutants.ts and those written from the contract alone in
 * test/model/more-mutants.ts) is applied to a fresh copy of the repository in the OS temp dir
 * (node_modules linked, the working tree untouched), and the deterministic tests of test/model
 * run there one file at a time (scenarios, tampering tests, paths, then the pure rules), each
 * stopping at its first failure. A mutant is killed when one fails; the property tests are not
 * run: a kill must not depend on a random draw. The table says which test failed first, which
 * guarantees the oracle named, and how long it took; below it, each rule of both oracles with
 * the first deterministic test that broke it. Writes test/model/mutants-results.md.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { MUTANTS, type Mutant } from '../test/model/mutants.js';
import { GUARANTEES } from '../test/model/oracle.js';
import { SHARED_GUARANTEES } from '../test/model/shared-oracle.js';
import { mutatedCopy } from '../test/support/mutant-copy.js';

const ROOT = resolve(import.meta.dirname, '..');
const COPIED = ['machines', 'src', 'test', 'package.json', 'tsconfig.json', 'vitest.config.ts'];
/** A mutant that makes a test hang is stopped here and reported as such, never as killed. */
const RUN_LIMIT_MS = 15 * 60_000;

interface AssertionResult {
  fullName: string;
  status: string;
  failureMessages: string[];
}
interface Report {
  testResults: Array<{ name: string; assertionResults: AssertionResult[]; message?: string }>;
}

interface Outcome {
  name: string;
  verdict: 'killed' | 'SURVIVED' | 'ERROR';
  by: string;
  guarantees: string[];
  message: string;
  seconds: number;
}

const GUARANTEE = /guarantee "([^"]+)" broken: [^\n]*/g;

/**
 * The deterministic test files, in the order a mutant meets them: the scenarios chosen on
 * purpose, the tampering tests, the generated paths (all judged by an oracle, so a kill names the
 * rule it broke), then the machines' pure rules (machines.test.ts, which names none).
 * The property tests are not among them: a mutant must die by a test that fails every time.
 */
const LIFECYCLE_FILES = [
  'test/model/scenarios.test.ts',
  'test/model/oracle.test.ts',
  'test/model/paths.test.ts',
  'test/model/machines.test.ts',
];
const SHARED_FILES = [
  'test/model/shared-scenarios.test.ts',
  'test/model/shared-oracle.test.ts',
  'test/model/session-paths.test.ts',
  'test/model/shared-paths.test.ts',
  'test/model/machines.test.ts',
];

function filesFor(mutant: Mutant): string[] {
  const shared = mutant.file === 'machines/shared-server.ts' || mutant.file === 'machines/session.ts';
  const mine = shared ? SHARED_FILES : LIFECYCLE_FILES;
  // Then the rest: the shared host uses triggers.ts too.
  return [
    ...mine,
    ...[...LIFECYCLE_FILES, ...SHARED_FILES].filter((f, i, all) => !mine.includes(f) && all.indexOf(f) === i),
  ];
}

/** Runs one test file in the mutated copy, stopping at its first failing test; the failures, or null if it could not run. */
function runFile(dir: string, file: string): Array<{ test: string; text: string }> | null {
  const out = join(dir, 'vitest-results.json');
  rmSync(out, { force: true });
  const child = spawnSync(
    process.execPath,
    [join(ROOT, 'node_modules/vitest/vitest.mjs'), 'run', file, '--bail=1', '--reporter=json', `--outputFile=${out}`],
    // Every failure of a group, not the first five: the table names every rule a mutant broke.
    {
      cwd: dir,
      encoding: 'utf8',
      timeout: RUN_LIMIT_MS,
      env: { ...process.env, QMD_MUTATION: '', QMD_ALL_FAILURES: '1' },
    },
  );
  if (!existsSync(out)) {
    console.error(child.error?.message ?? child.stderr.split('\n').slice(-5).join(' '));
    return null;
  }
  const report = JSON.parse(readFileSync(out, 'utf8')) as Report;
  const failed = report.testResults.flatMap((f) =>
    f.assertionResults
      .filter((a) => a.status === 'failed')
      .map((a) => ({ test: a.fullName, text: a.failureMessages.join('\n') })),
  );
  // A file that failed to load (a mutant that breaks the import) has a message and no results.
  for (const f of report.testResults) {
    if (f.assertionResults.length === 0 && f.message) failed.push({ test: '(file)', text: f.message });
  }
  return failed;
}

function run(name: string): Outcome {
  const mutant = MUTANTS.find((m) => m.name === name)!;
  const dir = mkdtempSync(join(tmpdir(), `qmd-mutant-${name}-`));
  const started = performance.now();
  const seconds = () => Math.round((performance.now() - started) / 100) / 10;
  try {
    mutatedCopy(ROOT, dir, mutant, COPIED);
    for (const file of filesFor(mutant)) {
      const failed = runFile(dir, file);
      if (failed === null) {
        return { name, verdict: 'ERROR', by: file, guarantees: [], message: 'no results', seconds: seconds() };
      }
      const first = failed.find((f) => f.text.includes(' broken: ')) ?? failed[0];
      if (!first) continue;
      const guarantees = [...new Set(failed.flatMap((f) => [...f.text.matchAll(GUARANTEE)].map((m) => m[1]!)))];
      const message = [...first.text.matchAll(GUARANTEE)][0]?.[0] ?? first.text.split('\n')[0]!;
      return { name, verdict: 'killed', by: `${file} > ${first.test}`, guarantees, message, seconds: seconds() };
    }
    return { name, verdict: 'SURVIVED', by: '', guarantees: [], message: '', seconds: seconds() };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Which of an oracle's rules some mutant made fail, and for the others whether a tampering test
 * proves them with tampered observations: every rule must be able to fail. The lifecycle's
 * oracle is judged by the lifecycle's mutants, the shared server's by the shared ones (some
 * names are the same in both).
 */
function ruleCoverage(
  outcomes: Outcome[],
  title: string,
  guarantees: readonly string[],
  tamperingTest: string,
  files: readonly string[],
): string {
  const tampered = readFileSync(join(ROOT, tamperingTest), 'utf8');
  const mine = outcomes.filter((o) => files.includes(MUTANTS.find((m) => m.name === o.name)!.file));
  const lines = guarantees.map((g) => {
    const by = mine.filter((o) => o.guarantees.includes(g));
    if (by.length > 0) {
      const first = by[0]!.by.replace(/ > .*? > /, ' > ');
      return `| "${g}" | ${first} | ${by.map((o) => `\`${o.name}\``).join(', ')} |`;
    }
    const tamper = tampered.includes(`broken('${g}')`) ? `${tamperingTest} (a tampered host)` : 'NOTHING';
    return `| "${g}" | ${tamper} | |`;
  });
  const head = '| rule | first deterministic test that broke it | mutants it named |\n|---|---|---|';
  return `Each rule of ${title}, and the first deterministic test that can break it:\n\n${head}\n${lines.join('\n')}`;
}

function table(outcomes: Outcome[]): string {
  const cell = (s: string) => s.replaceAll('|', '\\|').replaceAll('\n', ' ');
  const rows = outcomes.map((o) =>
    [
      `\`${o.name}\``,
      o.verdict,
      cell(o.by),
      cell(o.guarantees.map((g) => `"${g}"`).join(', ')),
      cell(o.message.length > 260 ? `${o.message.slice(0, 257)}…` : o.message),
      `${o.seconds} s`,
    ].join(' | '),
  );
  return [
    '| mutant | verdict | first failing deterministic test | guarantees named | first message | time |',
    '|---|---|---|---|---|---|',
    ...rows.map((r) => `| ${r} |`),
  ].join('\n');
}

const names = process.argv.slice(2);
const unknown = names.filter((n) => !MUTANTS.some((m) => m.name === n));
if (unknown.length > 0) throw new Error(`no such mutant: ${unknown.join(', ')}`);
const outcomes: Outcome[] = [];
for (const mutant of MUTANTS.filter((m) => names.length === 0 || names.includes(m.name))) {
  const outcome = run(mutant.name);
  outcomes.push(outcome);
  console.error(`${outcome.verdict.padEnd(8)} ${mutant.name} (${outcome.seconds} s) ${outcome.message.slice(0, 160)}`);
}
const summary = `${outcomes.filter((o) => o.verdict === 'killed').length}/${outcomes.length} killed`;
const rules = [
  ruleCoverage(outcomes, 'the lifecycle’s oracle', GUARANTEES, 'test/model/oracle.test.ts', [
    'machines/lifecycle.ts',
    'machines/triggers.ts',
    // The exit-code rules every machine shares: their mutants meet the lifecycle's tests first.
    'machines/teardown.ts',
  ]),
  ruleCoverage(outcomes, 'the shared server’s oracle', SHARED_GUARANTEES, 'test/model/shared-oracle.test.ts', [
    'machines/shared-server.ts',
    'machines/session.ts',
  ]),
].join('\n\n');
console.log(`\n${table(outcomes)}\n\n${summary}\n\n${rules}`);
if (names.length === 0) {
  // Only the part between the markers is generated; the prose around it is written by hand.
  const results = join(ROOT, 'test/model/mutants-results.md');
  const [before, rest] = readFileSync(results, 'utf8').split('<!-- mutants:begin -->');
  const after = rest?.split('<!-- mutants:end -->')[1];
  if (after === undefined) throw new Error(`${results} lacks the <!-- mutants:begin/end --> markers`);
  const generated = `${table(outcomes)}\n\n${summary}, Node ${process.version}.\n\n${rules}`;
  writeFileSync(results, `${before}<!-- mutants:begin -->\n${generated}\n<!-- mutants:end -->${after}`);
}
if (outcomes.some((o) => o.verdict !== 'killed')) process.exitCode = 1;
