/**
 * Two costs a person waits for, before and after a change, beside the bare SDK server and the
 * peer (qmd 2.8.3), on each Node asked for:
 *
 *  1. `qmd mcp` start-up: spawn → the `initialize` reply, the server's own CPU time to it
 *     (bench/experiments/first-reply-preload.mjs) and wall time, on a 1,000-note index, a warm
 *     code cache. The peer is run through its CLI entry (`dist/cli/qmd.js`), not its launcher,
 *     so that its CPU time is its server's.
 *  2. `qmd update` with nothing changed at each size (bench/scale/corpus.ts: 4 collections),
 *     CPU (user + system, /usr/bin/time) and wall, on one index that `after` built (`before`
 *     updates the same file) and the peer's own index of the same notes.
 *
 * Rounds are interleaved (the order rotates each round; round 0 warms the page cache and is
 * not counted): on a shared, loaded machine the ratios and CPU times are what to read.
 *
 *   npx tsx bench/start-and-update.ts --before-dir DIR [--rounds 10] [--update-rounds 3] \
 *     [--nodes 22,24] [--sizes 10000,50000] [--only startup|update] [--out FILE]
 *
 * `--before-dir`: a built tree of the revision before (`git archive REV | tar -x -C DIR`, its
 * node_modules, `npm run build`). The peer: `npm run peer:install` (test/peer).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
// @ts-expect-error: a plain .mjs experiment, no types
import { once as startupOnce } from './experiments/startup-cpu.mjs';
import { cachedCorpus } from './lib/corpus.js';
import { loadAverage } from './lib/machine.js';
import { BENCH_CACHE_HOME, ROOT, TMP } from './lib/paths.js';
import { peerEnv } from './lib/peer.js';
import { qmdEnv } from './lib/qmd.js';
import { collectionRoot, scaleCorpus } from './scale/corpus.js';

const argv = process.argv.slice(2);
const opt = (name: string, dflt: string): string => {
  const i = argv.indexOf(`--${name}`);
  return i === -1 ? dflt : (argv[i + 1] as string);
};
const beforeDir = opt('before-dir', '');
const rounds = Number(opt('rounds', '10'));
const updateRounds = Number(opt('update-rounds', '3'));
const nodes = opt('nodes', '22,24').split(',');
const sizes = opt('sizes', '10000,50000').split(',').map(Number);
const only = opt('only', '');
const out = opt('out', join(ROOT, 'bench/results-start-and-update.md'));
const PEER_DIR = process.env.QMD_BENCH_PEER_DIR || join(ROOT, 'test/peer');
const PEER_CLI = join(PEER_DIR, 'node_modules/@tobilu/qmd/dist/cli/qmd.js');
const nodeBin = (major: string) => join(ROOT, `../main/.ci/runtimes/node_modules/node${major}/bin/node`);
const NODE = (major: string) => process.env[`QMD_BENCH_NODE${major}`] || nodeBin(major);

if (!existsSync(join(beforeDir, 'dist/qmd.mjs'))) throw new Error('--before-dir DIR: a built tree (dist/qmd.mjs)');
const AFTER_BIN = join(ROOT, 'dist/qmd.mjs');
const BEFORE_BIN = join(beforeDir, 'dist/qmd.mjs');
const log = (line: string) => process.stderr.write(`[start-and-update] ${line}\n`);
const report: string[] = [];
const say = (line = '') => {
  report.push(line);
  console.log(line);
  writeFileSync(out, `${report.join('\n')}\n`);
};
const median = (values: number[]): number => {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  return sorted.length === 0 ? Number.NaN : (sorted[Math.floor(sorted.length / 2)] as number);
};
const f = (n: number, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : '—');

/** Runs `node bin args` to its end under /usr/bin/time: CPU (user + sys) and wall, ms. */
function timed(node: string, args: string[], env: NodeJS.ProcessEnv): { cpu: number; wall: number; code: number } {
  const started = performance.now();
  const run = spawnSync('/usr/bin/time', ['-f', 'QMD_BENCH_CPU %U %S', node, ...args], {
    env,
    encoding: 'utf8',
    maxBuffer: 64 * 2 ** 20,
  });
  const wall = performance.now() - started;
  const [, user, sys] = /QMD_BENCH_CPU ([\d.]+) ([\d.]+)/.exec(run.stderr) ?? [];
  if (run.status !== 0) log(`${args.join(' ')}: exit ${run.status}: ${run.stderr.slice(-400)}`);
  return { cpu: (Number(user) + Number(sys)) * 1000, wall, code: run.status ?? -1 };
}

function rotate<T>(items: T[], round: number): T[] {
  return items.map((_, i) => items[(round + i) % items.length] as T);
}

interface Contender {
  name: string;
  args: string[];
  env: NodeJS.ProcessEnv;
}

async function startup(): Promise<void> {
  const work = join(TMP, 'start-and-update');
  mkdirSync(work, { recursive: true });
  const corpus = cachedCorpus(1000);
  const index = join(work, 'startup.sqlite');
  const env = qmdEnv({ QMD_INDEX: index });
  if (!existsSync(index)) timed(NODE('24'), [AFTER_BIN, 'collection', 'add', corpus.dir, '--name', 'notes'], env);
  const peerHome = join(work, 'peer-startup');
  const pEnv: NodeJS.ProcessEnv = {
    ...peerEnv(peerHome),
    LLAMA_LOG_LEVEL: 'error',
    GGML_LOG_LEVEL: 'error',
    GGML_BACKEND_SILENT: '1',
  };
  if (!existsSync(pEnv.INDEX_PATH as string))
    timed(NODE('24'), [PEER_CLI, 'collection', 'add', corpus.dir, '--name', 'notes'], pEnv);
  say(`## spawn → initialize answered (${rounds} interleaved rounds after a warm-up, ${corpus.files} notes)`);
  say();
  say(
    'The server\'s CPU time to its reply (user + system, read in the server at its first write) and wall time. "before" and "after" share one index, each with its own code cache (warm from round 0); the peer has its own index of the same notes.',
  );
  for (const major of nodes) {
    const node = NODE(major);
    const contenders: Contender[] = [
      { name: 'bare SDK', args: [join(ROOT, 'bench/contenders/sdk-server.mjs')], env: qmdEnv() },
      // A cache home each: a start that saves its code cache removes other builds' (src/cli/code-cache.ts),
      // so two builds sharing one would each start with no cache, every time.
      { name: 'before', args: [BEFORE_BIN, 'mcp'], env: { ...env, XDG_CACHE_HOME: `${BENCH_CACHE_HOME}-before` } },
      { name: 'after', args: [AFTER_BIN, 'mcp'], env: { ...env, XDG_CACHE_HOME: `${BENCH_CACHE_HOME}-after` } },
      { name: 'qmd 2.8.3', args: [PEER_CLI, 'mcp'], env: pEnv },
    ];
    const samples = new Map<string, { cpu: number; wall: number }[]>(contenders.map((c) => [c.name, []]));
    for (let round = 0; round <= rounds; round++) {
      for (const c of rotate(contenders, round)) {
        const sample = (await startupOnce(node, c.args, c.env)) as { cpu: number; wall: number };
        if (round > 0) samples.get(c.name)?.push(sample);
      }
      log(`Node ${major}: round ${round}/${rounds}, load ${loadAverage()}`);
    }
    const m = (name: string, key: 'cpu' | 'wall') => median((samples.get(name) ?? []).map((s) => s[key]));
    say();
    say(`### Node ${major} (${spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout.trim()})`);
    say();
    say(
      '| contender | CPU p50 (ms) | wall p50 (ms) | CPU ÷ bare SDK | wall ÷ bare SDK | CPU ÷ qmd 2.8.3 | wall ÷ qmd 2.8.3 |',
    );
    say('|:---|---:|---:|---:|---:|---:|---:|');
    for (const c of contenders) {
      const ratio = (other: string, key: 'cpu' | 'wall') => f(m(c.name, key) / m(other, key), 2);
      say(
        `| ${c.name} | ${f(m(c.name, 'cpu'))} | ${f(m(c.name, 'wall'))} | ${ratio('bare SDK', 'cpu')} | ${ratio('bare SDK', 'wall')} | ${ratio('qmd 2.8.3', 'cpu')} | ${ratio('qmd 2.8.3', 'wall')} |`,
      );
    }
    say();
    say(`Load average at the end: ${loadAverage()}.`);
  }
}

function update(): void {
  say();
  say(`## \`qmd update\` with nothing changed (${updateRounds} interleaved rounds after a warm-up, Node 24)`);
  say();
  say('CPU = user + system of the command (/usr/bin/time); wall from spawn to exit.');
  say();
  say('| notes | index (MiB) | contender | CPU p50 (s) | wall p50 (s) | CPU ÷ before | CPU ÷ qmd 2.8.3 |');
  say('|---:|---:|:---|---:|---:|---:|---:|');
  const node = NODE('24');
  for (const size of sizes) {
    const corpus = scaleCorpus(size, log);
    const work = join(TMP, `start-and-update/update-${size}`);
    mkdirSync(work, { recursive: true });
    const index = join(work, 'qmd.sqlite');
    const env = qmdEnv({ QMD_INDEX: index });
    const pEnv = peerEnv(join(work, 'peer'));
    if (!existsSync(index) || !existsSync(pEnv.INDEX_PATH as string)) {
      for (const collection of corpus.collections) {
        log(`${size}: collection add ${collection}, ours and the peer's`);
        const root = collectionRoot(corpus, collection);
        timed(node, [AFTER_BIN, 'collection', 'add', root, '--name', collection], env);
        timed(node, [PEER_CLI, 'collection', 'add', root, '--name', collection], pEnv);
      }
    }
    const contenders: Contender[] = [
      { name: 'before', args: [BEFORE_BIN, 'update'], env },
      { name: 'after', args: [AFTER_BIN, 'update'], env },
      { name: 'qmd 2.8.3', args: [PEER_CLI, 'update'], env: pEnv },
    ];
    const samples = new Map<string, { cpu: number; wall: number }[]>(contenders.map((c) => [c.name, []]));
    for (let round = 0; round <= updateRounds; round++) {
      for (const c of rotate(contenders, round)) {
        const sample = timed(node, c.args, c.env);
        if (round > 0) samples.get(c.name)?.push(sample);
      }
      log(`${size}: update round ${round}/${updateRounds}, load ${loadAverage()}`);
    }
    const m = (name: string, key: 'cpu' | 'wall') => median((samples.get(name) ?? []).map((s) => s[key])) / 1000;
    const mib =
      (spawnSync('stat', ['-c', '%s', index], { encoding: 'utf8' }).stdout.trim() as unknown as number) / 2 ** 20;
    for (const c of contenders) {
      say(
        `| ${size} | ${f(mib, 0)} | ${c.name} | ${f(m(c.name, 'cpu'), 2)} | ${f(m(c.name, 'wall'), 2)} | ${f(m(c.name, 'cpu') / m('before', 'cpu'), 2)} | ${f(m(c.name, 'cpu') / m('qmd 2.8.3', 'cpu'), 2)} |`,
      );
    }
  }
  say();
  say(`Load average at the end: ${loadAverage()}.`);
}

say('# Start-up and a no-op `qmd update`, before and after');
say();
say(
  `Before: ${beforeDir}; after: this tree. Machine: 2 cores shared with other people working at once (load recorded); read the CPU times and the ratios, the wall times carry the load. Rerun: \`npx tsx bench/start-and-update.ts --before-dir DIR --rounds ${rounds} --update-rounds ${updateRounds} --nodes ${nodes.join(',')} --sizes ${sizes.join(',')}\`. Caches: ${BENCH_CACHE_HOME}(-before, -after).`,
);
say();
if (only !== 'update') await startup();
if (only !== 'startup') update();
