/**
 * `node bench/experiments/worker/terminate-idle.mjs [--rounds N]`: what ending an idle query
 * worker with `terminate()` instead of `close` (its `db.close()`, `port.close()`, a natural
 * exit) does to its node:sqlite connection and to the main connection's close after it
 * (docs/design.md §8.4), and how long each takes from the request to the worker's `exit`.
 * A WAL index with uncheckpointed frames; a worker opens it read-only, reads, and idles;
 * then, per case: the worker is ended (or not), and the main connection runs the store's
 * close (`wal_checkpoint(TRUNCATE)` with busy_timeout 0, then close). Reported: the
 * process's file descriptors on the index's three files before and after the worker ends,
 * the checkpoint's row (busy, log, checkpointed), and whether -wal and -shm are left.
 *   close:      the product's idle path (message `close`);
 *   terminate:  `worker.terminate()` while idle;
 *   left open:  the worker still alive, idle (a control: what a connection left open does);
 *   mid-read:   terminated inside a read transaction (a statement stepped, not reset), the
 *               case "idle" excludes;
 *   mid-read, left open: the same transaction, the worker still alive (a control: a read
 *               mark held makes the TRUNCATE checkpoint busy).
 */
import { existsSync, mkdtempSync, readdirSync, readlinkSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';

const rounds = Number(process.argv[process.argv.indexOf('--rounds') + 1] || 30);
const load = () =>
  loadavg()
    .map((n) => n.toFixed(2))
    .join(' / ');
const loadStart = load();

const WORKER = `
import { DatabaseSync } from 'node:sqlite';
import { parentPort, workerData } from 'node:worker_threads';
const db = new DatabaseSync(workerData.path, { readOnly: true });
db.exec('PRAGMA cache_size = -16000');
let held;
parentPort.on('message', (m) => {
  if (m === 'close') { db.close(); parentPort.close(); return; }
  if (m === 'read') parentPort.postMessage(db.prepare('SELECT count(*) AS n FROM t').get().n);
  if (m === 'hold') { held = db.prepare('SELECT x FROM t').iterate(); held.next(); parentPort.postMessage('held'); }
});
`;

function fds(path) {
  let n = 0;
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      if (readlinkSync(`/proc/self/fd/${fd}`).startsWith(path)) n++;
    } catch {}
  }
  return n;
}

function fresh(dir) {
  const path = join(dir, 'index.sqlite');
  for (const f of [path, `${path}-wal`, `${path}-shm`]) rmSync(f, { force: true });
  const main = new DatabaseSync(path);
  main.exec('PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0; CREATE TABLE t(x)');
  const insert = main.prepare('INSERT INTO t VALUES (?)');
  main.exec('BEGIN');
  for (let i = 0; i < 20000; i++) insert.run(`row ${i} `.repeat(8));
  main.exec('COMMIT');
  return { path, main };
}

const once = (worker, event) => new Promise((resolve) => worker.once(event, resolve));

async function run(dir, script, how) {
  const { path, main } = fresh(dir);
  const worker = new Worker(script, { workerData: { path } });
  worker.postMessage('read');
  await once(worker, 'message');
  if (how.startsWith('mid-read')) {
    worker.postMessage('hold');
    await once(worker, 'message');
  }
  const fdsBefore = fds(path);
  const exited = once(worker, 'exit');
  const started = performance.now();
  if (how === 'close') worker.postMessage('close');
  if (how === 'terminate' || how === 'mid-read') void worker.terminate();
  let ms = null;
  if (!how.endsWith('left open')) {
    await exited;
    ms = performance.now() - started;
  }
  const fdsAfter = fds(path);
  main.exec('PRAGMA busy_timeout = 0');
  const checkpoint = main.prepare('PRAGMA wal_checkpoint(TRUNCATE)').get();
  main.close();
  const left = [`${path}-wal`, `${path}-shm`]
    .filter(existsSync)
    .map((f) => `${f.slice(path.length)} (${statSync(f).size} B)`);
  if (how.endsWith('left open')) {
    void worker.terminate();
    await exited;
  }
  return { ms, fdsBefore, fdsAfter, checkpoint, left };
}

const dir = mkdtempSync(join(tmpdir(), 'qmd-terminate-idle-'));
const script = join(dir, 'worker.mjs');
writeFileSync(script, WORKER);
const cases = ['close', 'terminate', 'left open', 'mid-read', 'mid-read, left open'];
const rows = [];
for (const how of cases) {
  const r = await run(dir, script, how);
  rows.push(
    `| ${how} | ${r.fdsBefore} | ${r.fdsAfter} | ${r.checkpoint.busy} / ${r.checkpoint.log} / ${r.checkpoint.checkpointed} | ${r.left.join(', ') || 'none'} |`,
  );
}
// Timing: close against terminate, alternated, each on a fresh index and worker.
const times = { close: [], terminate: [] };
for (let i = 0; i < rounds; i++) {
  for (const how of i % 2 === 0 ? ['close', 'terminate'] : ['terminate', 'close']) {
    times[how].push((await run(dir, script, how)).ms);
  }
}
rmSync(dir, { recursive: true, force: true });
const pct = (v, p) => [...v].sort((a, b) => a - b)[Math.min(v.length - 1, Math.floor(p * v.length))];
const text = [
  "## Ending an idle worker: `close` or `terminate()`, and the main connection's close after it",
  '',
  `\`node bench/experiments/worker/terminate-idle.mjs --rounds ${rounds}\` on Node ${process.version}, ${new Date().toISOString()}; a WAL index of 20,000 rows not checkpointed; load ${loadStart} at start, ${load()} at end.`,
  '',
  '| worker | fds on the index before | after | then TRUNCATE checkpoint: busy / log / checkpointed | left after the main close |',
  '|---|---:|---:|---|---|',
  ...rows,
  '',
  `Request → the worker's \`exit\` event (${rounds} alternated rounds, a bare worker: node:sqlite only):`,
  '',
  '| how | p50 ms | p90 ms | max ms |',
  '|---|---:|---:|---:|',
  ...Object.entries(times).map(
    ([how, v]) => `| ${how} | ${pct(v, 0.5).toFixed(2)} | ${pct(v, 0.9).toFixed(2)} | ${Math.max(...v).toFixed(2)} |`,
  ),
  '',
].join('\n');
process.stdout.write(`${text}\n`);
writeFileSync(join(fileURLToPath(new URL('.', import.meta.url)), 'results-terminate-idle.md'), text);
