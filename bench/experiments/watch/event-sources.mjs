/**
 * Which event source should the watcher use on Linux? Four contenders watch the same tree of
 * folders (a parent with `folders` leaf folders of `perFolder` small notes), each in its own
 * child process, interleaved round by round:
 *
 * - `node-recursive`: `fs.watch(root, { recursive: true })` (Node 20+ on Linux walks the tree
 *   in JS and adds a watch per folder, lib/internal/fs/recursive_watch.js);
 * - `per-folder`: one non-recursive `fs.watch` per folder, walked by us, a new folder watched
 *   when its `rename` event names a directory (what src/watch/ would do by hand);
 * - `chokidar`: chokidar 5 (`ignoreInitial`, no polling);
 * - `parcel`: @parcel/watcher 2.6 (native inotify backend, one thread).
 *
 * Per contender: time and CPU until the watch is ready, RSS then, the inotify watches it holds
 * (/proc/self/fdinfo), idle CPU over `idleMs`, the latency from a write in a random leaf
 * folder to its event (p50/p95 of `writes`), and whether a file in a folder made after the
 * start is heard.
 *
 * `node bench/experiments/watch/event-sources.mjs [--folders 1000,10000] [--per-folder 10]
 *   [--rounds 2] [--idle-ms 10000] [--writes 40]` with chokidar 5.0.0 and @parcel/watcher
 * 2.6.0 installed where `QMD_WATCH_EXP_MODULES` points (a scratch `npm install`: they are not
 * dependencies of qmd). Writes results-event-sources.md beside itself.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const flag = (name, fallback) => {
  const i = args.indexOf(name);
  return i === -1 ? fallback : args[i + 1];
};

if (args[0] === '--child') await child(JSON.parse(args[1]));
else await parent();

async function parent() {
  const sizes = flag('--folders', '1000,10000').split(',').map(Number);
  const perFolder = Number(flag('--per-folder', '10'));
  const rounds = Number(flag('--rounds', '2'));
  const idleMs = Number(flag('--idle-ms', '10000'));
  const writes = Number(flag('--writes', '40'));
  const modules = process.env.QMD_WATCH_EXP_MODULES ?? '/tmp/h41a-exp/node_modules';
  const contenders = ['node-recursive', 'per-folder', 'chokidar', 'parcel'];
  const rows = [];
  for (const folders of sizes) {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), `qmd-watch-exp-${folders}-`));
    makeTree(root, folders, perFolder);
    for (let round = 0; round < rounds; round++) {
      for (const name of round % 2 === 0 ? contenders : [...contenders].reverse()) {
        const result = await runChild({ name, root, folders, idleMs, writes, modules });
        result.folders = folders;
        result.notes = folders * perFolder;
        rows.push(result);
        process.stderr.write(`${JSON.stringify(result)}\n`);
      }
    }
    fs.rmSync(root, { recursive: true, force: true });
  }
  const table = summarize(rows);
  const text = [
    '# Event sources on Linux (bench/experiments/watch/event-sources.mjs)',
    '',
    `Node ${process.version}, ${os.cpus().length} cores, load ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')} at the end; ${rounds} rounds, interleaved; medians of the rounds.`,
    '',
    table,
    '',
  ].join('\n');
  fs.writeFileSync(path.join(HERE, 'results-event-sources.md'), text);
  process.stdout.write(`${table}\n`);
}

function makeTree(root, folders, perFolder) {
  const fanout = Math.ceil(Math.sqrt(folders));
  for (let f = 0; f < folders; f++) {
    const dir = path.join(root, `p${String(Math.floor(f / fanout)).padStart(3, '0')}`, `f${f}`);
    fs.mkdirSync(dir, { recursive: true });
    for (let n = 0; n < perFolder; n++) fs.writeFileSync(path.join(dir, `n${n}.md`), `# note ${f}.${n}\n\ntext\n`);
  }
}

function runChild(options) {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, [fileURLToPath(import.meta.url), '--child', JSON.stringify(options)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    proc.stdout.on('data', (d) => (out += d));
    proc.on('exit', (code) => {
      if (code !== 0) return reject(new Error(`${options.name} exited ${code}: ${out}`));
      resolve(JSON.parse(out.trim().split('\n').at(-1)));
    });
  });
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)];
}

function summarize(rows) {
  const header =
    '| folders | notes | source | ready ms | ready CPU ms | RSS MB | inotify watches | idle CPU ms/min | write→event p50 ms | p95 ms | new folder heard |';
  const lines = [header, '|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---|'];
  const keys = [...new Set(rows.map((r) => `${r.folders}\0${r.name}`))];
  for (const key of keys) {
    const [folders, name] = key.split('\0');
    const rs = rows.filter((r) => String(r.folders) === folders && r.name === name);
    const m = (k) => median(rs.map((r) => r[k]));
    lines.push(
      `| ${folders} | ${rs[0].notes} | ${name} | ${m('readyMs').toFixed(0)} | ${m('readyCpuMs').toFixed(0)} | ${m('rssMb').toFixed(0)} | ${m('watches')} | ${m('idleCpuPerMin').toFixed(0)} | ${m('p50').toFixed(1)} | ${m('p95').toFixed(1)} | ${rs.every((r) => r.newFolder) ? 'yes' : rs.some((r) => r.newFolder) ? 'sometimes' : 'no'} |`,
    );
  }
  return lines.join('\n');
}

// ---------------------------------------------------------------- child

async function child({ name, root, folders, idleMs, writes, modules }) {
  const require = createRequire(path.join(modules, 'x.js'));
  let listener = () => {};
  const heard = (file) => listener(file);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const stop = await start(name, root, heard, require);
  const readyMs = performance.now() - t0;
  const cpu1 = process.cpuUsage(cpu0);
  const readyCpuMs = (cpu1.user + cpu1.system) / 1000;
  const rssMb = process.memoryUsage().rss / 2 ** 20;
  const watches = inotifyWatches();
  // Idle: nothing changes; what does the watch cost?
  const idle0 = process.cpuUsage();
  await new Promise((r) => setTimeout(r, idleMs));
  const idle1 = process.cpuUsage(idle0);
  const idleCpuPerMin = ((idle1.user + idle1.system) / 1000) * (60_000 / idleMs);
  // Latency: a write in a random leaf folder, until the watcher names that file.
  const fanout = Math.ceil(Math.sqrt(folders));
  const latencies = [];
  for (let i = 0; i < writes; i++) {
    const f = Math.floor(Math.random() * folders);
    const file = path.join(root, `p${String(Math.floor(f / fanout)).padStart(3, '0')}`, `f${f}`, `w${i}-${name}.md`);
    const ms = await timed(file, (done) => {
      listener = (seen) => {
        if (seen !== undefined && path.resolve(root, seen) === file) done();
      };
      fs.writeFileSync(file, `# written ${i}\n`);
    });
    latencies.push(ms);
    fs.rmSync(file, { force: true });
  }
  // A folder made after the start, then a file in it at once (mkdir -p && echo > …).
  const fresh = path.join(root, `new-${name}-${process.pid}`, 'deeper');
  const newFile = path.join(fresh, 'n.md');
  const newFolderMs = await timed(
    newFile,
    (done) => {
      listener = (seen) => {
        if (seen !== undefined && path.resolve(root, seen) === newFile) done();
      };
      fs.mkdirSync(fresh, { recursive: true });
      // The watcher may need a moment to add the folder: write again after it could have.
      fs.writeFileSync(newFile, 'one\n');
      setTimeout(() => fs.writeFileSync(newFile, 'two\n'), 300);
    },
    3000,
  );
  await stop();
  fs.rmSync(path.dirname(fresh), { recursive: true, force: true });
  latencies.sort((a, b) => a - b);
  const q = (p) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))];
  process.stdout.write(
    `${JSON.stringify({ name, readyMs, readyCpuMs, rssMb, watches, idleCpuPerMin, p50: q(0.5), p95: q(0.95), newFolder: newFolderMs !== undefined, newFolderMs })}\n`,
  );
  process.exit(0);
}

function timed(_file, act, limitMs = 5000) {
  return new Promise((resolve) => {
    const t = performance.now();
    const timer = setTimeout(() => resolve(undefined), limitMs);
    act(() => {
      clearTimeout(timer);
      resolve(performance.now() - t);
    });
  });
}

async function start(name, root, heard, require) {
  switch (name) {
    case 'node-recursive': {
      const w = fs.watch(root, { recursive: true }, (_event, file) => heard(file ?? undefined));
      return async () => w.close();
    }
    case 'per-folder': {
      const watchers = new Map();
      const add = (dir) => {
        if (watchers.has(dir)) return;
        try {
          const w = fs.watch(dir, (_event, file) => {
            if (file === null) return;
            const full = path.join(dir, file);
            heard(path.relative(root, full));
            try {
              if (fs.statSync(full).isDirectory()) walk(full);
            } catch {}
          });
          watchers.set(dir, w);
        } catch {}
      };
      const walk = (dir) => {
        add(dir);
        for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
          if (entry.isDirectory()) walk(path.join(dir, entry.name));
        }
      };
      walk(root);
      return async () => {
        for (const w of watchers.values()) w.close();
      };
    }
    case 'chokidar': {
      const { watch } = await import(require.resolve('chokidar'));
      const w = watch(root, { ignoreInitial: true });
      w.on('all', (_event, file) => heard(path.relative(root, file)));
      await new Promise((r) => w.once('ready', r));
      return () => w.close();
    }
    case 'parcel': {
      const parcel = require('@parcel/watcher');
      const sub = await parcel.subscribe(root, (_err, events) => {
        for (const e of events) heard(path.relative(root, e.path));
      });
      return () => sub.unsubscribe();
    }
  }
  throw new Error(`unknown source ${name}`);
}

/** The inotify watches this process holds: one `inotify wd:` line each in /proc/self/fdinfo. */
function inotifyWatches() {
  let n = 0;
  for (const fd of fs.readdirSync('/proc/self/fdinfo')) {
    try {
      const info = fs.readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8');
      n += (info.match(/^inotify wd:/gm) ?? []).length;
    } catch {}
  }
  return n;
}
