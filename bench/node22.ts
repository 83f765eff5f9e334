/**
 * `npm run bench:node22` (builds first): the spawned benchmarks — start-up, RSS, exit — on
 * Node 22, with the peer beside qmd and the bare SDK server. Offline but for the npm registry:
 *
 *  1. Node 22.23.5 is CI's pinned install (`npm ci --prefix .ci/runtimes`).
 *  2. qmd as shipped: `npm pack`, installed into bench/.tmp/node22 with Node 22, its native
 *     addons built against Node 22's headers (`npm_config_nodedir`); again only when the
 *     tarball changed.
 *  3. The peer, @tobilu/qmd 2.8.3, into bench/.tmp/peer the same way, once (bench/lib/peer.ts).
 *  4. bench/run.ts under Node 22 with QMD_BENCH_BIN pointing at the installed qmd, writing
 *     bench/results-node22.md (or `--out FILE`; `--quick` for tiny counts).
 *
 *   npm run bench:node22 [-- --quick] [-- --out FILE]
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, TMP } from './lib/paths.js';
import { PEER_BIN, PEER_DIR, PEER_PACKAGE } from './lib/peer.js';

const NODE22_HOME = join(ROOT, '.ci/runtimes/node_modules/node22');
const NODE22 = join(NODE22_HOME, 'bin/node');
const OURS_DIR = join(TMP, 'node22');
const OURS_BIN = join(OURS_DIR, 'node_modules/qmd/dist/qmd.mjs');

function sh(command: string, args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): string {
  const run = spawnSync(command, args, { cwd: options.cwd ?? ROOT, env: options.env ?? process.env, encoding: 'utf8' });
  if (run.status !== 0) {
    throw new Error(`${command} ${args.join(' ')} exited ${run.status ?? run.signal}:\n${run.stderr.slice(-4000)}`);
  }
  return run.stdout;
}

/** npm run by Node 22, so install scripts (node-gyp) build for it. */
function npm22(args: string[], cwd: string): void {
  const env = {
    ...process.env,
    PATH: `${join(NODE22_HOME, 'bin')}:${process.env.PATH ?? ''}`,
    npm_config_nodedir: NODE22_HOME,
  };
  sh('npm', [...args, '--no-audit', '--no-fund', '--loglevel=error'], { cwd, env });
}

function log(line: string): void {
  process.stderr.write(`[bench:node22] ${line}\n`);
}

function ensureNode22(): void {
  if (existsSync(NODE22)) return;
  log('installing Node 22 (.ci/runtimes)');
  sh('npm', ['ci', '--prefix', '.ci/runtimes', '--no-audit', '--no-fund', '--loglevel=error']);
}

/** `npm pack`, then an install of the tarball for Node 22 unless this very tarball is installed. */
function ensureOurs(): void {
  mkdirSync(OURS_DIR, { recursive: true });
  const [packed] = JSON.parse(sh('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', OURS_DIR])) as [
    { filename: string; integrity: string },
  ];
  const marker = join(OURS_DIR, '.installed');
  if (existsSync(OURS_BIN) && existsSync(marker) && readFileSync(marker, 'utf8') === packed.integrity) return;
  if (!existsSync(join(OURS_DIR, 'package.json'))) {
    writeFileSync(join(OURS_DIR, 'package.json'), '{ "name": "qmd-bench-node22", "private": true }\n');
  }
  log(`installing ${packed.filename} for Node 22 (native addons compile the first time)`);
  npm22(['install', `./${packed.filename}`], OURS_DIR);
  writeFileSync(marker, packed.integrity);
}

function ensurePeer(): void {
  if (existsSync(PEER_BIN)) return;
  mkdirSync(PEER_DIR, { recursive: true });
  if (!existsSync(join(PEER_DIR, 'package.json'))) {
    writeFileSync(join(PEER_DIR, 'package.json'), '{ "name": "qmd-bench-peer", "private": true }\n');
  }
  log(`installing the peer, ${PEER_PACKAGE}, for Node 22`);
  npm22(['install', PEER_PACKAGE], PEER_DIR);
}

function main(argv: string[]): void {
  ensureNode22();
  ensureOurs();
  try {
    ensurePeer();
  } catch (error) {
    // The benchmarks then say why the peer's rows are empty (bench/lib/peer.ts).
    log(`the peer could not be installed: ${(error as Error).message.split('\n')[0]}`);
  }
  const out =
    argv.includes('--out') || argv.some((a) => a.startsWith('--out='))
      ? []
      : ['--out', join(ROOT, 'bench/results-node22.md')];
  const run = spawnSync(
    NODE22,
    [
      join(ROOT, 'node_modules/tsx/dist/cli.mjs'),
      join(ROOT, 'bench/run.ts'),
      'startup',
      'rss',
      'exit',
      ...out,
      ...argv,
    ],
    { cwd: ROOT, stdio: 'inherit', env: { ...process.env, QMD_BENCH_BIN: OURS_BIN } },
  );
  process.exitCode = run.status ?? 1;
}

main(process.argv.slice(2));
