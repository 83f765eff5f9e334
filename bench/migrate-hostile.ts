/**
 * `qmd migrate` given a hostile qmd 2.x `index.yml`: a 50 MB `global_context`, a 41 MB file of
 * 600,000 collections, control bytes in names and contexts, and a plan the real run could not
 * keep (a folder gone, two collections of one folder). For each, `--dry-run` and the real run:
 * the exit code, the seconds, the peak RSS (`/usr/bin/time`), and the first line it printed.
 *
 *   npm run build && npx tsx bench/migrate-hostile.ts [--before DIST/qmd.mjs] [--cap-s 120]
 *
 * A run still going after `--cap-s` is killed and shown so. With `--before`, an older build is
 * measured too. Prints the table and writes bench/results-migrate-hostile.md.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { QMD_BIN, qmdEnv } from '../test/support/qmd.js';
import { spawnProcess } from '../test/support/spawn.js';

const arg = (name: string): string | undefined => {
  const at = process.argv.indexOf(name);
  return at > 0 ? process.argv[at + 1] : undefined;
};
const BEFORE = arg('--before');
const CAP_S = Number(arg('--cap-s') ?? 120);
const RESULTS = fileURLToPath(new URL('./results-migrate-hostile.md', import.meta.url));

const dir = mkdtempSync(join(tmpdir(), 'qmd-migrate-hostile-'));
const notes = join(dir, 'notes');
mkdirSync(notes);
writeFileSync(join(notes, 'a.md'), '# A\n\nA note.\n');

function input(name: string, text: string): string {
  const file = join(dir, `${name}.yml`);
  writeFileSync(file, text);
  return file;
}

const INPUTS: Array<{ name: string; file: string }> = [
  {
    name: '50 MB global_context',
    file: input('global', `global_context: "${'a'.repeat(50 * 1024 * 1024)}"\ncollections:\n  notes:\n    path: ${notes}\n`),
  },
  {
    name: '41 MB, 600,000 collections',
    file: input(
      'many',
      `collections:\n${Array.from({ length: 600_000 }, (_, i) => `  c${i}:\n    path: ${notes}/n${i}\n    pattern: "**/*.md"\n`).join('')}`,
    ),
  },
  {
    name: 'control bytes in a name and a context',
    file: input(
      'control',
      `collections:\n  "no\\ttes\\e[31m":\n    path: ${notes}\n    context:\n      "": "red \\e[31malert\\e[0m\\u0007 bell"\n`,
    ),
  },
  {
    name: 'a folder gone, two collections of one folder',
    file: input(
      'plan',
      `collections:\n  notes:\n    path: ${notes}\n  again:\n    path: ${notes}\n  gone:\n    path: ${join(dir, 'gone')}\n`,
    ),
  },
];

interface Row {
  code: string;
  seconds: number;
  rssMb: number;
  first: string;
}

async function migrate(bin: string, file: string, dryRun: boolean, index: string): Promise<Row> {
  const started = performance.now();
  const env = qmdEnv(index, { XDG_CACHE_HOME: join(dir, 'cache'), XDG_CONFIG_HOME: join(dir, 'config') });
  const args = ['-f', '%M', process.execPath, bin, 'migrate', '--config', file, '--from', join(dir, 'none.sqlite')];
  const p = spawnProcess('/usr/bin/time', dryRun ? [...args, '--dry-run'] : args, { env });
  p.child.stdin?.end();
  const cap = setTimeout(() => p.kill(), CAP_S * 1000);
  const exit = await p.closed;
  clearTimeout(cap);
  const seconds = (performance.now() - started) / 1000;
  const killed = exit.signal === 'SIGKILL';
  const errLines = p.stderr().trimEnd().split('\n');
  // /usr/bin/time's last line is the peak RSS in KB; a killed run has none.
  const rssKb = killed ? Number.NaN : Number(errLines.pop());
  const said = [...p.stdout().split('\n'), ...errLines].filter((l) => l !== '' && !l.startsWith('Command '));
  const first = said.find((l) => l.startsWith('qmd:')) ?? said.find((l) => /would|skipped|Index:/.test(l)) ?? '';
  return {
    code: killed ? `killed at ${CAP_S} s` : String(exit.code),
    seconds,
    rssMb: rssKb / 1024,
    first: JSON.stringify(first.length > 160 ? `${first.slice(0, 160)}…` : first).slice(1, -1),
  };
}

async function measure(bin: string, label: string): Promise<string[]> {
  const rows: string[] = [];
  let n = 0;
  for (const { name, file } of INPUTS) {
    for (const dryRun of [true, false]) {
      const index = join(dir, `index-${label.replace(/\W/g, '')}-${n++}.sqlite`);
      const row = await migrate(bin, file, dryRun, index);
      rows.push(
        `| ${name} | ${dryRun ? '--dry-run' : 'real'} | ${row.code} | ${row.seconds.toFixed(1)} | ${Number.isFinite(row.rssMb) ? row.rssMb.toFixed(0) : '—'} | \`${row.first.replace(/\|/g, '\\|').replace(dir, 'DIR')}\` |`,
      );
      console.error(`${label}: ${name} ${dryRun ? 'dry' : 'real'}: ${row.code} in ${row.seconds.toFixed(1)} s, ${row.rssMb.toFixed(0)} MB`);
    }
  }
  return rows;
}

try {
  const header = [
    '| index.yml | run | exit | seconds | peak RSS (MB) | first line |',
    '|---|---|---:|---:|---:|---|',
  ];
  const after = await measure(QMD_BIN, 'this build');
  const before = BEFORE === undefined ? undefined : await measure(BEFORE, 'before');
  const report = [
    '# `qmd migrate` on hostile input (`bench/migrate-hostile.ts`)',
    '',
    `\`npx tsx bench/migrate-hostile.ts --cap-s ${CAP_S}${BEFORE === undefined ? '' : ` --before ${BEFORE}`}\`, Node ${process.version}, load ${loadavg()[0]?.toFixed(1)} at the end. Peak RSS by \`/usr/bin/time -f %M\`; DIR is the bench's temporary folder.`,
    '',
    '## This build',
    '',
    ...header,
    ...after,
    ...(before === undefined ? [] : ['', `## Before (\`${BEFORE}\`)`, '', ...header, ...before]),
    '',
  ].join('\n');
  console.log(report);
  writeFileSync(RESULTS, report);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
