/**
 * How long the first Ctrl-C takes to end `qmd collection add` and `qmd update`: keypress → exit,
 * in a real terminal (a pty: the byte 0x03, so the kernel sends SIGINT, as a keyboard would).
 *
 * Each build is first run once to the end to learn how long the command takes (T); then Ctrl-C
 * is typed at seeded moments f × T after the spawn (f drawn in [0.05, 0.95]), so a press lands
 * anywhere: listing, reading, writing, committing. Builds are interleaved press by press (round
 * r runs every build on the same f), so the machine's load lands on all of them alike.
 *
 * Run: `npm run build && npx tsx bench/interrupt-latency.ts [--files 6000] [--presses 8]
 *       [--before PATH/qmd.mjs] [--seed 1]`
 * `--before` names another build (e.g. a copy of `dist/` made before a change, kept under
 * bench/.tmp so it finds node_modules) to compare with this one. Prints a table and writes
 * `bench/results-interrupt.md`.
 */
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { generateCorpus } from '../test/support/corpus.js';
import { CTRL_C, frames, ptyExit, runInPty, screenLines } from '../test/support/pty.js';
import { qmdEnv } from '../test/support/qmd.js';
import { seededRandom } from '../test/support/seeded.js';
import { loadAverage, machineInfo } from './lib/machine.js';
import { QMD_BIN, ROOT, staleBuild, TMP } from './lib/paths.js';
import { summarize } from './lib/stats.js';

const { values } = parseArgs({
  options: {
    files: { type: 'string', default: '6000' },
    presses: { type: 'string', default: '8' },
    before: { type: 'string' },
    seed: { type: 'string', default: '1' },
    out: { type: 'string', default: join(ROOT, 'bench', 'results-interrupt.md') },
  },
});
const FILES = Number(values.files);
const PRESSES = Number(values.presses);
const SEED = Number(values.seed);

const stale = staleBuild();
if (stale !== undefined) {
  console.error(stale);
  process.exit(2);
}

interface Build {
  name: string;
  bin: string;
}
const builds: Build[] = [{ name: 'this build', bin: QMD_BIN }];
if (values.before !== undefined) builds.unshift({ name: 'before', bin: values.before });

const random = seededRandom(SEED);

mkdirSync(TMP, { recursive: true });
const root = mkdtempSync(join(TMP, 'interrupt-'));
const notes = join(root, 'notes');
generateCorpus(notes, { files: FILES, seed: 11 });

type Command = 'add' | 'update';
const argsOf = (command: Command): string[] =>
  command === 'add' ? ['collection', 'add', notes, '--name', 'notes'] : ['update'];

interface Sample {
  ms: number;
  code: number | null;
  signal: string | null;
  /** The bar's label when the key was typed: where the press landed. */
  stage: string;
  /** The line the command ended with, as the screen shows it. */
  last: string;
}

/** A build's index for `update`: every note indexed by that build (schemas may differ), before the rewrite. */
function updateTemplate(build: Build): string {
  return join(root, `template-${builds.indexOf(build)}.sqlite`);
}

async function runOnce(
  build: Build,
  command: Command,
  index: string,
  pressAtMs?: number,
): Promise<Sample & { total: number }> {
  const started = performance.now();
  const p = runInPty(process.execPath, [build.bin, ...argsOf(command)], { env: qmdEnv(index) });
  try {
    let pressed = Number.NaN;
    let stage = 'after the end';
    if (pressAtMs !== undefined) {
      // Not before the command has drawn something: a press during Node's own start-up, before
      // qmd listens for SIGINT, is the start-up's business, not the work's.
      await p.waitFor((out) => (frames(out).length > 0 ? true : undefined), 'the first thing drawn', 60_000);
      const wait = pressAtMs - (performance.now() - started);
      const gone = await Promise.race([
        new Promise<false>((resolve) => setTimeout(() => resolve(false), Math.max(0, wait))),
        p.exited.then(() => true),
      ]);
      if (!gone) {
        stage = (frames(p.output()).at(-1) ?? 'nothing drawn yet').split(/\s{2,}|\[|:/)[0]?.trim() ?? '?';
        pressed = performance.now();
        p.write(CTRL_C);
      }
    }
    const exit = await ptyExit(p, 120_000);
    const ended = performance.now();
    const lines = screenLines(p.output()).filter((line) => line.trim() !== '');
    return {
      ms: ended - pressed,
      total: ended - started,
      code: exit.code,
      signal: exit.signal,
      stage,
      last: lines.at(-1) ?? '',
    };
  } finally {
    p.kill();
  }
}

function freshIndex(label: string): string {
  const index = join(root, `${label}.sqlite`);
  for (const suffix of ['', '-wal', '-shm']) rmSync(`${index}${suffix}`, { force: true });
  return index;
}

function copyOf(template: string, label: string): string {
  const index = freshIndex(label);
  copyFileSync(template, index);
  return index;
}

const commands: Command[] = ['add', 'update'];
const totals = new Map<string, number>();
console.error(`${FILES} notes in ${notes}; load ${loadAverage()}`);
// Calibration: each build's uninterrupted time, and the update templates (the notes indexed,
// then rewritten on disk, so that update rewrites every one).
for (const build of builds) {
  const add = await runOnce(build, 'add', freshIndex(`calibrate-${builds.indexOf(build)}`));
  totals.set(`${build.name}/add`, add.total);
  const template = updateTemplate(build);
  rmSync(template, { force: true });
  copyFileSync(join(root, `calibrate-${builds.indexOf(build)}.sqlite`), template);
}
// Rewrite every note (a line appended), so that each hash changes and update rewrites all.
let rewritten = 0;
const rewrite = (dir: string): void => {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) rewrite(path);
    else writeFileSync(path, `${readFileSync(path, 'utf8')}\nrewritten ${rewritten++}\n`);
  }
};
rewrite(notes);
for (const build of builds) {
  const update = await runOnce(
    build,
    'update',
    copyOf(updateTemplate(build), `calibrate-update-${builds.indexOf(build)}`),
  );
  totals.set(`${build.name}/update`, update.total);
}
console.error(`calibrated: ${[...totals].map(([k, v]) => `${k} ${Math.round(v)} ms`).join(', ')}`);

const samples = new Map<string, Sample[]>();
for (let press = 0; press < PRESSES; press++) {
  const f = 0.05 + random() * 0.9;
  for (const command of commands) {
    for (let b = 0; b < builds.length; b++) {
      const build = builds[(press + b) % builds.length] as Build;
      const key = `${build.name}/${command}`;
      const at = f * (totals.get(key) ?? 0);
      const index =
        command === 'add' ? freshIndex(`add-${press}-${b}`) : copyOf(updateTemplate(build), `update-${press}-${b}`);
      // `collection add` of the same folder in a fresh index: the notes as rewritten, all of them.
      const sample = await runOnce(build, command, index, at);
      if (!Number.isNaN(sample.ms)) samples.set(key, [...(samples.get(key) ?? []), sample]);
      console.error(
        `${key} press ${press + 1}/${PRESSES} at ${Math.round(at)} ms (${sample.stage}): ` +
          `${Number.isNaN(sample.ms) ? 'already done' : `${Math.round(sample.ms)} ms`}, exit ${sample.code ?? sample.signal}`,
      );
    }
  }
}

const m = machineInfo();
const rows: string[] = [];
for (const command of commands) {
  for (const build of builds) {
    const key = `${build.name}/${command}`;
    const list = samples.get(key) ?? [];
    const s = summarize(list.map((x) => x.ms));
    const exits = [...new Set(list.map((x) => String(x.code ?? x.signal)))].join(', ');
    const stages = [...new Set(list.map((x) => x.stage))].join(', ');
    rows.push(
      `| ${command === 'add' ? 'collection add' : 'update'} | ${build.name} | ${Math.round(totals.get(key) ?? 0)} | ${s.n} | ${Math.round(s.p50)} | ${Math.round(s.p90)} | ${Math.round(s.max)} | ${exits} | ${stages} |`,
    );
  }
}
const detail: string[] = [];
for (const [key, list] of samples) {
  for (const x of list)
    detail.push(`| ${key} | ${x.stage} | ${Math.round(x.ms)} | ${x.code ?? x.signal} | ${x.last.slice(0, 110)} |`);
}
const table = [
  '| command | build | uninterrupted (ms) | presses | p50 (ms) | p90 (ms) | max (ms) | exit | where the presses landed |',
  '| --- | --- | ---: | ---: | ---: | ---: | ---: | --- | --- |',
  ...rows,
].join('\n');
console.log(table);
const md = [
  '# Ctrl-C latency: keypress → exit (`bench/interrupt-latency.ts`)',
  '',
  `Generated by \`npx tsx bench/interrupt-latency.ts --files ${FILES} --presses ${PRESSES} --seed ${SEED}${values.before ? ' --before …' : ''}\`. ` +
    'One Ctrl-C typed into a pty at a seeded moment f × T of each command (T: the same build run to the end; not before it has drawn something), ' +
    'builds interleaved press by press. A press that came after the command had ended is not counted.',
  '',
  `- Date: ${m.date}; commit ${m.commit}; Node ${m.node}; ${m.cpuCount} × ${m.cpuModel}`,
  `- Load average (1/5/15 min): ${m.loadAtStart} at start, ${loadAverage()} at end (shared machine: absolute times carry its load)`,
  `- Corpus: ${FILES} generated notes (test/support/corpus.ts, seed 11); \`update\` rewrites every one`,
  '',
  table,
  '',
  '## Every press',
  '',
  '| build/command | where | ms | exit | last line on the screen |',
  '| --- | --- | ---: | --- | --- |',
  ...detail,
  '',
].join('\n');
writeFileSync(values.out, md);
rmSync(root, { recursive: true, force: true });
console.error(`wrote ${values.out}`);
