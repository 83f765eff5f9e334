/**
 * `npm run bench:runtime -- --node 22|24` (builds first): the spawned benchmarks — start-up,
 * RSS, exit — and search (indexing, BM25 and hybrid queries) on one of the Nodes qmd supports,
 * with the peer beside qmd and the bare SDK server. Offline but for the npm registry:
 *
 *  1. The Node is CI's pinned install (`npm ci --prefix .ci/runtimes`: 22.23.5, 24.22.3).
 *  2. qmd as shipped: `npm pack`, installed into bench/.tmp/nodeN with that Node (its own
 *     native pieces are prebuilt: node-llama-cpp, sqlite-vec); again only when the tarball
 *     changed.
 *  3. The peer, @tobilu/qmd 2.8.3, into bench/.tmp/peer-nodeN the same way, once, its
 *     better-sqlite3 compiled against that Node's headers (`npm_config_nodedir`).
 *  4. bench/run.ts under that Node with QMD_BENCH_BIN and QMD_BENCH_PEER_DIR pointing at them,
 *     writing bench/results-nodeN.md (or `--out FILE`; `--quick` for tiny counts; `--scale F`
 *     multiplies every benchmark's interleaved rounds, for a loaded machine: see run.ts).
 *
 *   npm run bench:runtime -- --node 24 [--scale 0.5] [--quick] [--out FILE] [benchmark ...]
 *   npm run bench:node22                 # the same as --node 22
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, TMP } from './lib/paths.js';
import { PEER_PACKAGE } from './lib/peer.js';

/** The Nodes `.ci/runtimes/package.json` pins, by major. */
const RUNTIMES = ['22', '24'] as const;
type Major = (typeof RUNTIMES)[number];

/** What runs by default: everything that can stand beside the bare SDK server and the peer. */
const DEFAULT_BENCHMARKS = ['startup', 'rss', 'exit', 'search'];

function sh(command: string, args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): string {
  const run = spawnSync(command, args, { cwd: options.cwd ?? ROOT, env: options.env ?? process.env, encoding: 'utf8' });
  if (run.status !== 0) {
    throw new Error(`${command} ${args.join(' ')} exited ${run.status ?? run.signal}:\n${run.stderr.slice(-4000)}`);
  }
  return run.stdout;
}

function log(line: string): void {
  process.stderr.write(`[bench:runtime] ${line}\n`);
}

class Runtime {
  readonly home: string;
  readonly node: string;
  readonly oursDir: string;
  readonly oursBin: string;
  readonly peerDir: string;
  constructor(readonly major: Major) {
    this.home = join(ROOT, `.ci/runtimes/node_modules/node${major}`);
    this.node = join(this.home, 'bin/node');
    this.oursDir = join(TMP, `node${major}`);
    this.oursBin = join(this.oursDir, 'node_modules/qmd-search/dist/qmd.mjs');
    this.peerDir = join(TMP, `peer-node${major}`);
  }

  /** npm run by this Node, so install scripts (node-gyp) build for it. */
  npm(args: string[], cwd: string): void {
    const env = {
      ...process.env,
      PATH: `${join(this.home, 'bin')}:${process.env.PATH ?? ''}`,
      npm_config_nodedir: this.home,
    };
    sh('npm', [...args, '--no-audit', '--no-fund', '--loglevel=error'], { cwd, env });
  }

  ensureNode(): void {
    if (existsSync(this.node)) return;
    log('installing the pinned Nodes (.ci/runtimes)');
    sh('npm', ['ci', '--prefix', '.ci/runtimes', '--no-audit', '--no-fund', '--loglevel=error']);
  }

  /** `npm pack`, then an install of the tarball for this Node unless this very tarball is installed. */
  ensureOurs(): void {
    mkdirSync(this.oursDir, { recursive: true });
    const [packed] = JSON.parse(
      sh('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', this.oursDir]),
    ) as [{ filename: string; integrity: string }];
    const marker = join(this.oursDir, '.installed');
    if (existsSync(this.oursBin) && existsSync(marker) && readFileSync(marker, 'utf8') === packed.integrity) return;
    if (!existsSync(join(this.oursDir, 'package.json'))) {
      writeFileSync(join(this.oursDir, 'package.json'), `{ "name": "qmd-bench-node${this.major}", "private": true }\n`);
    }
    log(`installing ${packed.filename} for Node ${this.major}`);
    this.npm(['install', `./${packed.filename}`], this.oursDir);
    writeFileSync(marker, packed.integrity);
  }

  ensurePeer(): void {
    if (existsSync(join(this.peerDir, 'node_modules/@tobilu/qmd/bin/qmd'))) return;
    mkdirSync(this.peerDir, { recursive: true });
    if (!existsSync(join(this.peerDir, 'package.json'))) {
      writeFileSync(join(this.peerDir, 'package.json'), '{ "name": "qmd-bench-peer", "private": true }\n');
    }
    log(`installing the peer, ${PEER_PACKAGE}, for Node ${this.major} (better-sqlite3 compiles)`);
    this.npm(['install', PEER_PACKAGE], this.peerDir);
  }
}

interface Args {
  major: Major;
  /** Passed on to bench/run.ts. */
  rest: string[];
}

function parseArgs(argv: readonly string[]): Args {
  let major: string | undefined;
  const rest: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--node') major = argv[++i];
    else if (arg.startsWith('--node=')) major = arg.slice('--node='.length);
    else rest.push(arg);
  }
  if (!RUNTIMES.includes(major as Major)) {
    throw new Error(`usage: npm run bench:runtime -- --node ${RUNTIMES.join('|')} [bench/run.ts options]`);
  }
  return { major: major as Major, rest };
}

function main(argv: string[]): void {
  const { major, rest } = parseArgs(argv);
  const runtime = new Runtime(major);
  runtime.ensureNode();
  runtime.ensureOurs();
  try {
    runtime.ensurePeer();
  } catch (error) {
    // The benchmarks then say why the peer's rows are empty (bench/lib/peer.ts).
    log(`the peer could not be installed: ${(error as Error).message.split('\n')[0]}`);
  }
  const out =
    rest.includes('--out') || rest.some((a) => a.startsWith('--out='))
      ? []
      : ['--out', join(rest.includes('--quick') ? TMP : join(ROOT, 'bench'), `results-node${major}.md`)];
  const named = rest.some((a, i) => !a.startsWith('--') && !['--out', '--scale'].includes(rest[i - 1] ?? ''));
  const run = spawnSync(
    runtime.node,
    [
      join(ROOT, 'node_modules/tsx/dist/cli.mjs'),
      join(ROOT, 'bench/run.ts'),
      ...(named ? [] : DEFAULT_BENCHMARKS),
      ...out,
      ...rest,
    ],
    {
      cwd: ROOT,
      stdio: 'inherit',
      env: {
        ...process.env,
        QMD_BENCH_BIN: runtime.oursBin,
        QMD_BENCH_PEER_DIR: runtime.peerDir,
        QMD_BENCH_COMMAND: `npm run bench:runtime -- ${argv.join(' ')}`,
      },
    },
  );
  process.exitCode = run.status ?? 1;
}

main(process.argv.slice(2));
