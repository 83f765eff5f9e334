/**
 * `qmd migrate` given a hostile qmd 2.x `index.yml`: a 50 MB `global_context`, a 41 MB file of
 * 600,000 collections, the most that is parsed (just under 1 MiB; 1,000 collections), control
 * bytes in names and contexts, and a plan the real run could not keep (a folder gone, two
 * collections of one folder). For each, `--dry-run` and the real run:
 * the exit code, the seconds, the peak RSS (`/usr/bin/time`), and the first line it printed.
 *
 *   npm run build && npx tsx bench/migrate-hostile.ts [--before DIST/qmd.mjs] [--cap-s 120]
 *
 * A run still going after `--cap-s` is killed and shown so. With `--before`, an older build is
 * measured too. Prints the table and writes bench/results-migrate-hostile.md.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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

for (let i = 0; i < 1000; i++) {
  mkdirSync(join(notes, `n${i}`));
  writeFileSync(join(notes, `n${i}`, 'a.md'), `# Note ${i}\n\nText.\n`);
}

const INPUTS: Array<{ name: string; file: string }> = [
  {
    name: '50 MB global_context',
    file: input(
      'global',
      `global_context: "${'a'.repeat(50 * 1024 * 1024)}"\ncollections:\n  notes:\n    path: ${notes}\n`,
    ),
  },
  {
    name: '41 MB, 600,000 collections',
    file: input(
      'many',
      `collections:\n${Array.from({ length: 600_000 }, (_, i) => `  collection-${i}:\n    path: notes/n${i}\n    pattern: "**/*.md"\n`).join('')}`,
    ),
  },
  {
    name: 'just under 1 MiB: a 1,040,000-character global_context',
    file: input(
      'bound-context',
      `global_context: "${'a'.repeat(1_040_000)}"\ncollections:\n  notes:\n    path: ${notes}\n`,
    ),
  },
  {
    name: '1,000 collections (the most carried), each a folder with a note',
    file: input(
      'bound-collections',
      `collections:\n${Array.from({ length: 1000 }, (_, i) => `  c${i}:\n    path: ${notes}/n${i}\n    pattern: "**/*.md"\n`).join('')}`,
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
  /** Collections the dry run would add, or the real run added. */
  collections: number;
  /** Control bytes (other than newlines) that reached stdout or stderr as they are. */
  raw: number;
  code: string;
  seconds: number;
  rssMb: number;
  killed: boolean;
  first: string;
}

/** The one child of `pid` (the qmd that /usr/bin/time runs). */
function pidOfChild(pid: number): number {
  return Number(readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/)[0]);
}

async function migrate(bin: string, file: string, dryRun: boolean, index: string): Promise<Row> {
  const started = performance.now();
  const env = qmdEnv(index, { XDG_CACHE_HOME: join(dir, 'cache'), XDG_CONFIG_HOME: join(dir, 'config') });
  const args = ['-f', '%M', process.execPath, bin, 'migrate', '--config', file, '--from', join(dir, 'none.sqlite')];
  // Its own process group: at the cap, time and the qmd under it go together.
  const p = spawnProcess('/usr/bin/time', dryRun ? [...args, '--dry-run'] : args, { env, detached: true });
  p.child.stdin?.end();
  // The peak so far of the qmd under time (VmHWM), for a run killed before time can say it.
  let sampledKb = 0;
  const sample = setInterval(() => {
    try {
      const pid = pidOfChild(p.child.pid ?? 0);
      const hwm = Number(/^VmHWM:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
      if (hwm > sampledKb) sampledKb = hwm;
    } catch {
      // Not started yet, or gone.
    }
  }, 250);
  let killed = false;
  const cap = setTimeout(() => {
    killed = true;
    process.kill(-(p.child.pid ?? 0), 'SIGKILL');
  }, CAP_S * 1000);
  await p.closed;
  clearTimeout(cap);
  clearInterval(sample);
  const seconds = (performance.now() - started) / 1000;
  const errLines = p.stderr().trimEnd().split('\n');
  // /usr/bin/time's last line is the peak RSS in KB; a killed run has none (the last sample: at least that).
  const rssKb = killed ? sampledKb : Number(errLines.pop());
  const said = [...p.stdout().split('\n'), ...errLines].filter((l) => l !== '' && !l.startsWith('Command '));
  // biome-ignore lint/suspicious/noControlCharactersInRegex: counting the control bytes that reached the terminal.
  const raw = (p.stdout() + errLines.join('\n')).match(/[\x00-\x09\x0b-\x1f\x7f]/g)?.length ?? 0;
  const first =
    said.find((l) => l.startsWith('qmd:')) ??
    said.find((l) => l.includes('context') && (l.includes('\\x') || l.includes('\x1b'))) ??
    said.find((l) => /would|skipped|Index:/.test(l)) ??
    '';
  // What the dry run promises (`would add`) and what the real run adds (`NAME: N documents`).
  const collections = dryRun
    ? said.filter((l) => l.startsWith('would add ')).length
    : said.filter((l) => /^\S+: \d+ documents?\b/.test(l)).length;
  return {
    collections,
    raw,
    code: killed ? `killed at ${CAP_S} s` : String(p.child.exitCode),
    seconds,
    rssMb: rssKb / 1024,
    killed,
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
        `| ${name} | ${dryRun ? '--dry-run' : 'real'} | ${row.code} | ${row.seconds.toFixed(1)} | ${row.killed ? '≥ ' : ''}${row.rssMb.toFixed(0)} | ${row.killed ? '—' : row.collections} | ${row.raw} | \`${row.first.replace(/\|/g, '\\|').replace(dir, 'DIR')}\` |`,
      );
      console.error(
        `${label}: ${name} ${dryRun ? 'dry' : 'real'}: ${row.code} in ${row.seconds.toFixed(1)} s, ${row.rssMb.toFixed(0)} MB`,
      );
    }
  }
  return rows;
}

try {
  const header = [
    '| index.yml | run | exit | seconds | peak RSS (MB) | collections would add / added | control bytes printed raw | first line (as JSON) |',
    '|---|---|---:|---:|---:|---:|---:|---|',
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
