/**
 * Does the main thread stay awake while a heavy query runs, and can a runaway query be cut off?
 *
 *   node bench/experiments/worker/awake.mjs [--n 200000]
 *
 * Builds (once) an index-like file of N 64-dim vectors: a BLOB table (what the filtered vector
 * search scans in JS today) and a vec0 table. Then, with a 5 ms interval probe on the main
 * thread (the longest lateness of a tick = the longest the lifecycle could not hear stdin EOF,
 * signals or its deadlines):
 *  1. the JS scan on the main thread; 2. the same scan in a worker_threads worker with its own
 *  read-only connection; 3. a vec0 KNN in the worker; 4. worker.terminate() during the JS scan
 *  and during a long native call (a recursive CTE), time until the worker is gone;
 *  5. a child process that calls process.exit() while its worker is inside a long native call.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { blob, bulk, clustered, fmt, loadAverage, open, TMP } from '../vec/lib.mjs';
import { scan } from './scan.mjs';

const argv = process.argv;
const N = Number(argv.includes('--n') ? argv[argv.indexOf('--n') + 1] : 200_000);
const out = argv.includes('--out') ? argv[argv.indexOf('--out') + 1] : undefined;
const NATIVE = Number(argv.includes('--native-rows') ? argv[argv.indexOf('--native-rows') + 1] : 30_000_000);
const file = `awake-${N}.sqlite`;
const path = `${TMP}${file}`;
const WORKER = fileURLToPath(new URL('./query-worker.mjs', import.meta.url));

if (argv.includes('--child-exit')) {
  // 5: a worker inside a long native call, then process.exit() from the main thread.
  const worker = new Worker(WORKER, { workerData: { path } });
  worker.postMessage({ id: 1, kind: 'native', n: NATIVE });
  setTimeout(() => {
    process.stderr.write(`exit-called ${Date.now()}\n`);
    process.exit(0);
  }, 300);
} else {
  await main();
}

async function main() {
  const loadStart = loadAverage();
  if (!existsSync(path)) {
    const { db } = open(file);
    db.exec('CREATE TABLE v (id INTEGER PRIMARY KEY, vector BLOB NOT NULL) STRICT');
    db.exec('CREATE VIRTUAL TABLE v_knn USING vec0(embedding float[64] distance_metric=cosine)');
    bulk(
      db,
      'INSERT INTO v(id, vector) VALUES (?, ?)',
      (function* () {
        let i = 0;
        for (const v of clustered(N, 64, 1)) yield [++i, blob(v)];
      })(),
    );
    db.exec('INSERT INTO v_knn(rowid, embedding) SELECT id, vector FROM v');
    db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
    db.close();
  }
  const query = blob([...clustered(1, 64, 99)][0]);

  let worst = 0;
  let last = performance.now();
  const probe = setInterval(() => {
    const now = performance.now();
    worst = Math.max(worst, now - last - 5);
    last = now;
  }, 5);
  const window = async (fn) => {
    await new Promise((r) => setTimeout(r, 50));
    worst = 0;
    last = performance.now();
    const t = performance.now();
    const result = await fn();
    const ms = performance.now() - t;
    await new Promise((r) => setTimeout(r, 20));
    return { ms, worst, result };
  };
  const rows = [];

  // 1. main thread
  {
    const { DatabaseSync } = await import('node:sqlite');
    const db = new DatabaseSync(path, { readOnly: true });
    const r = await window(() => scan(db, query, 10));
    rows.push(['JS scan of the BLOBs, on the main thread', r.ms, r.worst]);
    db.close();
  }
  // 2–3. in a worker
  const worker = new Worker(WORKER, { workerData: { path } });
  let next = 0;
  const pending = new Map();
  worker.on('message', (m) => pending.get(m.id)?.(m));
  const ask = (message) =>
    new Promise((resolve) => {
      const id = ++next;
      pending.set(id, resolve);
      worker.postMessage({ ...message, id });
    });
  await ask({ kind: 'knn', query, k: 10 }); // warm: the worker's start-up and first open
  for (const [name, message] of [
    ['JS scan of the BLOBs, in a worker (own read-only connection)', { kind: 'scan', query, k: 10 }],
    ['vec0 KNN k=100, in a worker', { kind: 'knn', query, k: 100 }],
    ['vec0 KNN k=100, on the main thread', undefined],
  ]) {
    if (message === undefined) {
      const { DatabaseSync } = await import('node:sqlite');
      const { createRequire } = await import('node:module');
      const db = new DatabaseSync(path, { readOnly: true, allowExtension: true });
      db.loadExtension(createRequire(import.meta.url)('sqlite-vec').getLoadablePath());
      const r = await window(
        () => db.prepare('SELECT rowid, distance FROM v_knn WHERE embedding MATCH ? AND k = 100').all(query).length,
      );
      rows.push([name, r.ms, r.worst]);
      db.close();
      continue;
    }
    const r = await window(() => ask(message));
    rows.push([`${name} (worker reports ${fmt(r.result.ms)} ms)`, r.ms, r.worst]);
  }
  // 4. terminate during the JS scan, then during a native call
  const terminations = [];
  for (const [name, message] of [
    ['JS scan', { kind: 'scan', query, k: 10 }],
    [`native call (a recursive CTE of ${NATIVE.toLocaleString('en-US')} rows)`, { kind: 'native', n: NATIVE }],
  ]) {
    const w = new Worker(WORKER, { workerData: { path } });
    await new Promise((r) => w.once('online', r));
    await new Promise((r) => setTimeout(r, 100)); // its connection is open
    w.postMessage({ ...message, id: 1 });
    await new Promise((r) => setTimeout(r, 200));
    const t = performance.now();
    const gone = new Promise((r) => w.once('exit', r));
    await w.terminate();
    await gone;
    terminations.push([`worker.terminate() during a ${name}`, performance.now() - t]);
  }
  await worker.terminate();
  clearInterval(probe);
  // 5. process.exit() with a worker inside a native call
  const t = Date.now();
  const child = spawnSync(
    process.execPath,
    [fileURLToPath(import.meta.url), '--n', String(N), '--native-rows', String(NATIVE), '--child-exit'],
    { encoding: 'utf8' },
  );
  const called = Number(/exit-called (\d+)/.exec(child.stderr)?.[1]);
  terminations.push([
    'process.exit() while a worker is inside a native call: exit() → process gone',
    Date.now() - called,
  ]);
  void t;

  const lines = [
    `## The main thread during a heavy query: ${N.toLocaleString('en-US')} vectors × 64 dims`,
    '',
    `\`node bench/experiments/worker/awake.mjs --n ${N}\` on Node ${process.version}; load ${loadStart} at start, ${loadAverage()} at end.`,
    '',
    "| where the query runs | call ms (main thread's view) | longest main-thread loop block ms |",
    '|---|---|---|',
    ...rows.map(([n, ms, w]) => `| ${n} | ${fmt(ms)} | ${fmt(w)} |`),
    '',
    '| cut-off | ms until the worker / process is gone |',
    '|---|---|',
    ...terminations.map(([n, ms]) => `| ${n} | ${fmt(ms)} |`),
    '',
  ];
  process.stdout.write(lines.join('\n'));
  if (out) writeFileSync(out, lines.join('\n'), { flag: 'a' });
}
