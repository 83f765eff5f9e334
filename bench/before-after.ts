/**
 * qmd before and after a change, side by side on one machine: two builds of the repository
 * (clean clones of two revisions, `git archive`, each installed with `npm ci` from the npm
 * registry alone with an empty npm cache, `prepare` building dist/; or two trees already built,
 * `--before-dir`/`--after-dir`), run by each Node asked for, rounds interleaved (before/after
 * order alternating), load recorded at every step:
 *
 *  - install: the `npm ci` of a clean clone, wall time and the load around it;
 *  - `qmd mcp` start-up: spawn → the `initialize` reply, wall and the server's own CPU time
 *    (bench/experiments/first-reply-preload.mjs), a warm compile/code cache as a user has;
 *  - indexing: `qmd collection add` of the corpus into a fresh index, wall and CPU (user + sys
 *    of the child, from /usr/bin/time);
 *  - BM25 and vector queries over MCP (`query` with one `lex` or one `vec` search, the query
 *    worker on, the tiny test model for vectors): per-call round trip, and the server's CPU
 *    time per call (utime + stime of the whole process, every thread, from /proc).
 *
 *   npx tsx bench/before-after.ts --before-rev main --after-rev HEAD \
 *     [--install-rounds 1] [--rounds 4] [--notes 1000] [--queries 100] [--nodes 22,24] \
 *     [--before-dir DIR --after-dir DIR] [--title TEXT] [--scratch DIR] [--out FILE]
 *
 * `--install-rounds 0` reuses the clones already in the scratch directory; `--before-dir` and
 * `--after-dir` name built trees to use instead (their own `npm ci`, Node and all). Results
 * (markdown) go to `--out`, rewritten after each phase. First written for the SQLite binding
 * change (bench/results-sqlite-binding-before-after.md), then the core's rooms
 * (bench/results-rooms.md).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
// @ts-expect-error: a plain .mjs experiment, no types
import { once as startupOnce } from './experiments/startup-cpu.mjs';
import { cachedCorpus, querySet } from './lib/corpus.js';
import { tinyModel } from './lib/fixture.js';
import { loadAverage } from './lib/machine.js';
import { ROOT } from './lib/paths.js';
import { RpcChild } from './lib/rpc-child.js';

const argv = process.argv.slice(2);
const opt = (name: string, dflt: string): string => {
  const i = argv.indexOf(`--${name}`);
  return i === -1 ? dflt : (argv[i + 1] as string);
};
const beforeRev = opt('before-rev', 'main');
const afterRev = opt('after-rev', 'HEAD');
const installRounds = Number(opt('install-rounds', '1'));
const rounds = Number(opt('rounds', '4'));
const notes = Number(opt('notes', '1000'));
const queries = Number(opt('queries', '100'));
const startsPerRound = Number(opt('starts', '5'));
const scratch = opt('scratch', '/tmp/qmd-before-after');
const out = opt('out', join(ROOT, 'bench/results-before-after.md'));
const title = opt('title', 'qmd before and after');
const givenDirs: Record<string, string | undefined> = {
  before: argv.includes('--before-dir') ? opt('before-dir', '') : undefined,
  after: argv.includes('--after-dir') ? opt('after-dir', '') : undefined,
};

const NODES: Record<string, string> = Object.fromEntries(
  opt('nodes', '22,24')
    .split(',')
    .map((major) => [major, join(ROOT, `.ci/runtimes/node_modules/node${major}/bin`)]),
);
for (const [major, dir] of Object.entries(NODES)) {
  if (!existsSync(join(dir, 'node'))) throw new Error(`no Node ${major} at ${dir}: npm ci --prefix .ci/runtimes`);
}
const LABELS = ['before', 'after'] as const;
type Label = (typeof LABELS)[number];
const revs: Record<Label, string> = {
  before: execFileSync('git', ['rev-parse', '--short', beforeRev], { cwd: ROOT, encoding: 'utf8' }).trim(),
  after: execFileSync('git', ['rev-parse', '--short', afterRev], { cwd: ROOT, encoding: 'utf8' }).trim(),
};
const clone = (label: Label) => givenDirs[label] ?? join(scratch, label);
const bin = (label: Label) => join(clone(label), 'dist/qmd.mjs');
const nodeOf = (major: string) => join(NODES[major] as string, 'node');
const log = (line: string) => process.stderr.write(`[before-after] ${line}\n`);
const lines: string[] = [];
const save = (extra: string[] = []) => writeFileSync(out, `${[...lines, ...extra].join('\n')}\n`);

/** What a build is: its revision, and its tree when one was given. */
function buildOf(label: Label): string {
  return givenDirs[label] === undefined ? revs[label] : `${revs[label]} (${givenDirs[label]})`;
}

/** Orders for a round: before first in even rounds, after first in odd ones. */
const order = (round: number): Label[] => (round % 2 === 0 ? ['before', 'after'] : ['after', 'before']);

// ---------------------------------------------------------------- install
const installs: Array<{ label: Label; node: string; seconds: number; rc: number | null; load: string }> = [];
for (let round = 0; round < installRounds; round++) {
  for (const major of Object.keys(NODES)) {
    for (const label of order(round + Number(major))) {
      if (givenDirs[label] !== undefined) continue; // a tree given is used as it is
      const dir = clone(label);
      const cache = join(scratch, `cache-${label}-${major}-${round}`);
      rmSync(dir, { recursive: true, force: true });
      rmSync(cache, { recursive: true, force: true });
      mkdirSync(dir, { recursive: true });
      execFileSync('bash', ['-c', `git archive ${revs[label]} | tar -x -C ${dir}`], { cwd: ROOT });
      // Not npx's npm_* variables: npm_node_execpath would make npm run the scripts with the
      // Node that runs this driver.
      const env: NodeJS.ProcessEnv = { PATH: `${NODES[major]}:${process.env.PATH}`, npm_config_cache: cache };
      for (const [k, v] of Object.entries(process.env)) if (!/^(npm_|NODE$|PATH$)/i.test(k)) env[k] = v;
      const loadBefore = loadAverage();
      const started = performance.now();
      // npm is found on (and runs with) that Node's PATH: the install, its scripts and the build.
      const r = spawnSync('npm', ['ci', '--no-audit', '--no-fund', '--loglevel=error'], {
        cwd: dir,
        env,
        encoding: 'utf8',
      });
      const seconds = (performance.now() - started) / 1000;
      const npmNode = spawnSync('npm', ['exec', '--', 'node', '--version'], {
        cwd: dir,
        env,
        encoding: 'utf8',
      }).stdout.trim();
      installs.push({ label, node: npmNode, seconds, rc: r.status, load: `${loadBefore} → ${loadAverage()}` });
      log(`install ${label} (${revs[label]}) with Node ${npmNode}: ${seconds.toFixed(1)} s, exit ${r.status}`);
      if (r.status !== 0) log(r.stderr.slice(-3000));
      rmSync(cache, { recursive: true, force: true });
    }
  }
}
for (const label of LABELS) {
  if (!existsSync(bin(label))) throw new Error(`${bin(label)} is missing: run with --install-rounds 1`);
}

lines.push(
  `# ${title}: one run, same machine, Node ${Object.keys(NODES).join(' and ')}`,
  '',
  `Generated by \`npx tsx bench/before-after.ts ${argv.join(' ')}\` on ${new Date().toISOString()}.`,
  `before = ${buildOf('before')}, after = ${buildOf('after')}; ${Object.values(givenDirs).some((d) => d !== undefined) ? 'trees built by their own `npm ci`' : 'each a clean clone (`git archive`), `npm ci` from the npm registry with an empty cache'}.`,
  `Machine: ${process.platform}-${process.arch}, 2 cores shared with other agents; load (1/5/15 min) at start ${loadAverage()}.`,
  '',
);
if (installs.length > 0) {
  lines.push(
    '## Install: `npm ci` of a clean clone (empty npm cache; includes `prepare`, the esbuild build)',
    '',
    '| round order | Node | build | seconds | exit | load before → after |',
    '| --- | --- | --- | ---: | --- | --- |',
    ...installs.map((i, n) => `| ${n + 1} | ${i.node} | ${i.label} | ${i.seconds.toFixed(1)} | ${i.rc} | ${i.load} |`),
    '',
  );
}
save();

// ---------------------------------------------------------------- fixtures
const work = join(scratch, 'work');
rmSync(work, { recursive: true, force: true });
mkdirSync(work, { recursive: true });
const corpus = cachedCorpus(notes);
const qs = querySet(corpus);
const model = tinyModel();
const cacheHome = (label: Label, major: string) => join(work, `xdg-${label}-${major}`);
const env = (label: Label, major: string, extra: Record<string, string>): NodeJS.ProcessEnv => {
  const e: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('QMD_')) e[k] = v;
  return { ...e, XDG_CACHE_HOME: cacheHome(label, major), QMD_EMBED_THREADS: '1', ...extra };
};
function qmd(label: Label, major: string, args: string[], extra: Record<string, string>): string {
  const r = spawnSync(nodeOf(major), [bin(label), ...args], { env: env(label, major, extra), encoding: 'utf8' });
  if (r.status !== 0)
    throw new Error(`qmd ${args.join(' ')} (${label}, ${major}): ${r.status} ${r.stderr.slice(-2000)}`);
  return r.stdout;
}
log(`fixtures: ${notes} notes, indexed and embedded (tiny model) once, by the after build on Node 24`);
const lexIndex = join(work, 'lex.sqlite');
qmd('after', '24', ['collection', 'add', corpus.dir, '--name', 'notes'], { QMD_INDEX: lexIndex });
const vecIndex = join(work, 'vec.sqlite');
copyFileSync(lexIndex, vecIndex);
qmd('after', '24', ['embed'], { QMD_INDEX: vecIndex, QMD_EMBED_MODEL: model });

// ---------------------------------------------------------------- measurements
interface Sample {
  [field: string]: number;
}
const samples = new Map<string, Sample[]>();
const add = (key: string, sample: Sample) => samples.set(key, [...(samples.get(key) ?? []), sample]);
const loads: string[] = [];

function timed(major: string, label: Label, args: string[], extra: Record<string, string>) {
  const r = spawnSync('/usr/bin/time', ['-f', 'TIME %e %U %S %M', nodeOf(major), bin(label), ...args], {
    env: env(label, major, extra),
    encoding: 'utf8',
  });
  const m = /TIME ([\d.]+) ([\d.]+) ([\d.]+) (\d+)/.exec(r.stderr);
  if (r.status !== 0 || !m) throw new Error(`${args.join(' ')}: ${r.status} ${r.stderr.slice(-1500)}`);
  return { wall: Number(m[1]), cpu: Number(m[2]) + Number(m[3]), rssKb: Number(m[4]) };
}

/** utime + stime of the whole process (every thread), ms. */
function processCpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

async function mcpQueries(
  major: string,
  label: Label,
  index: string,
  type: 'lex' | 'vec',
): Promise<{ p50: number; p95: number; cpuPerQuery: number }> {
  const copy = join(work, `q-${label}-${major}-${type}.sqlite`);
  copyFileSync(index, copy);
  const server = new RpcChild({
    command: nodeOf(major),
    args: [bin(label), 'mcp'],
    env: env(label, major, { QMD_INDEX: copy, QMD_EMBED_MODEL: model }),
  });
  try {
    await server.initialize(120_000);
    // One call first: the worker starts, the model loads (vec); not counted.
    await server.request('tools/call', { name: 'query', arguments: { searches: [{ type, query: qs[0] }] } }, 120_000);
    const times: number[] = [];
    const cpu0 = processCpuMs(server.pid);
    for (let i = 0; i < queries; i++) {
      const started = performance.now();
      const reply = await server.request(
        'tools/call',
        { name: 'query', arguments: { searches: [{ type, query: qs[i % qs.length] }] } },
        60_000,
      );
      if (reply.message.error) throw new Error(`query: ${reply.message.error.message}`);
      times.push(reply.at - started);
    }
    const cpu = processCpuMs(server.pid) - cpu0;
    times.sort((a, b) => a - b);
    return {
      p50: times[Math.floor(times.length / 2)] as number,
      p95: times[Math.floor(times.length * 0.95)] as number,
      cpuPerQuery: cpu / queries,
    };
  } finally {
    server.endStdin();
    await server.waitExit(30_000).catch(() => server.kill());
    for (const s of ['', '-wal', '-shm']) rmSync(copy + s, { force: true });
  }
}

for (let round = 0; round <= rounds; round++) {
  const warm = round === 0; // warms the page cache and each build's compile caches: not counted
  for (const major of Object.keys(NODES)) {
    for (const label of order(round + Number(major))) {
      const key = `${major} ${label}`;
      for (let s = 0; s < (warm ? 1 : startsPerRound); s++) {
        const start = (await startupOnce(
          nodeOf(major),
          [bin(label), 'mcp'],
          env(label, major, { QMD_INDEX: lexIndex }),
        )) as {
          cpu: number;
          wall: number;
        };
        if (!warm) add(`${key} startup`, { cpu: start.cpu, wall: start.wall });
      }
      const index = join(work, `index-${label}-${major}.sqlite`);
      for (const s of ['', '-wal', '-shm']) rmSync(index + s, { force: true });
      const indexed = timed(major, label, ['collection', 'add', corpus.dir, '--name', 'notes'], { QMD_INDEX: index });
      if (!warm)
        add(`${key} index`, {
          notesPerSec: notes / indexed.wall,
          notesPerCpuSec: notes / indexed.cpu,
          rssKb: indexed.rssKb,
        });
      const lex = await mcpQueries(major, label, lexIndex, 'lex');
      const vec = await mcpQueries(major, label, vecIndex, 'vec');
      if (!warm) {
        add(`${key} lex`, lex);
        add(`${key} vec`, vec);
      }
      log(
        `round ${round}${warm ? ' (warm-up)' : ''} ${key}: index ${indexed.cpu.toFixed(2)} CPU-s; lex p50 ${lex.p50.toFixed(1)} ms; vec p50 ${vec.p50.toFixed(1)} ms; load ${loadAverage()}`,
      );
    }
  }
  loads.push(`after round ${round}${warm ? ' (warm-up)' : ''}: ${loadAverage()}`);

  // The table so far, rewritten each round.
  const median = (xs: number[]) => {
    const s = [...xs].sort((a, b) => a - b);
    return s[Math.floor(s.length / 2)] ?? Number.NaN;
  };
  const m = (key: string, field: string) => median((samples.get(key) ?? []).map((x) => x[field] as number));
  const table = [
    `## Speed (medians; ${round} counted round(s), before/after order alternating; ${notes} generated notes; ${queries} MCP calls per session; ${startsPerRound} starts per round)`,
    '',
    '| Node | build | rev | `qmd mcp` start: CPU ms | wall ms | index: notes/CPU-s | notes/s | peak RSS MB | BM25 call: CPU ms | p50 ms | p95 ms | vector call: CPU ms | p50 ms | p95 ms |',
    '| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ];
  for (const major of Object.keys(NODES)) {
    for (const label of LABELS) {
      const k = `${major} ${label}`;
      table.push(
        `| ${major} | ${label} | ${revs[label]} | ${m(`${k} startup`, 'cpu').toFixed(1)} | ${m(`${k} startup`, 'wall').toFixed(1)} | ${m(`${k} index`, 'notesPerCpuSec').toFixed(0)} | ${m(`${k} index`, 'notesPerSec').toFixed(0)} | ${(m(`${k} index`, 'rssKb') / 1024).toFixed(0)} | ${m(`${k} lex`, 'cpuPerQuery').toFixed(2)} | ${m(`${k} lex`, 'p50').toFixed(2)} | ${m(`${k} lex`, 'p95').toFixed(2)} | ${m(`${k} vec`, 'cpuPerQuery').toFixed(2)} | ${m(`${k} vec`, 'p50').toFixed(2)} | ${m(`${k} vec`, 'p95').toFixed(2)} |`,
      );
    }
  }
  const spread = ['', 'Every sample (CPU ms of a start; notes per CPU-s; CPU ms per BM25 call; per vector call):', ''];
  for (const major of Object.keys(NODES)) {
    for (const label of LABELS) {
      const k = `${major} ${label}`;
      const list = (key: string, field: string, digits: number) =>
        (samples.get(key) ?? []).map((x) => (x[field] as number).toFixed(digits)).join(' ');
      spread.push(
        `- ${k}: start ${list(`${k} startup`, 'cpu', 0)}; index ${list(`${k} index`, 'notesPerCpuSec', 0)}; BM25 ${list(`${k} lex`, 'cpuPerQuery', 2)}; vector ${list(`${k} vec`, 'cpuPerQuery', 2)}`,
      );
    }
  }
  save([...table, ...spread, '', 'Load (1/5/15 min):', '', ...loads.map((l) => `- ${l}`), '']);
}
log(`wrote ${out}`);
