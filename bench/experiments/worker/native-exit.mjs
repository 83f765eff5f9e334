/**
 * How long does a process take to be gone when its worker thread is inside a long native call
 * (SQLite running a statement that does not return to JS)?
 *
 *   node bench/experiments/worker/native-exit.mjs [--rows 60000000]
 *
 * A child process starts a worker that runs a recursive CTE of ROWS rows on an in-memory
 * node:sqlite connection (one native call, seconds long), waits 300 ms, then ends in one of
 * four ways; the parent measures from that moment until the child is gone, and how long the
 * statement alone takes. Written after the query worker (docs/design.md §8.4), to check the
 * earlier figure for process.exit() (results-awake.md).
 */
import { spawnSync } from 'node:child_process';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';

const argv = process.argv;
const ROWS = Number(argv.includes('--rows') ? argv[argv.indexOf('--rows') + 1] : 60_000_000);
const WORKER = `
import { DatabaseSync } from 'node:sqlite';
import { parentPort } from 'node:worker_threads';
const db = new DatabaseSync(':memory:');
parentPort.postMessage('running');
const t = performance.now();
db.prepare('WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < ${ROWS}) SELECT count(*) AS n FROM c').get();
parentPort.postMessage({ ms: performance.now() - t });
`;

const mode = argv[2] === '--child' ? argv[3] : undefined;
if (mode !== undefined) {
  const w = new Worker(WORKER, { eval: true });
  if (mode !== 'statement') w.unref();
  w.on('message', (m) => {
    if (m !== 'running') {
      process.stderr.write(`statement ${Math.round(m.ms)}\n`);
      return;
    }
    setTimeout(() => {
      process.stderr.write(`end ${Date.now()}\n`);
      if (mode === 'natural') return; // the worker is unref'd: the loop is empty now
      if (mode === 'terminate+exit') void w.terminate();
      if (mode !== 'statement') process.exit(3);
    }, 300);
  });
  if (mode !== 'natural') setInterval(() => {}, 1 << 30).unref();
} else {
  const load = loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');
  const rows = [];
  for (const m of ['statement', 'natural', 'exit', 'terminate+exit']) {
    const run = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--child', m, '--rows', String(ROWS)], {
      encoding: 'utf8',
    });
    const gone = Date.now();
    const end = Number(/end (\d+)/.exec(run.stderr)?.[1]);
    const statement = /statement (\d+)/.exec(run.stderr)?.[1];
    rows.push(
      m === 'statement' ? `| the statement alone, in the worker | ${statement} ms |` : `| ${m} | ${gone - end} ms |`,
    );
  }
  const lines = [
    `## A worker inside a native call, then the process ends (${ROWS.toLocaleString('en-US')}-row recursive CTE)`,
    '',
    `\`node bench/experiments/worker/native-exit.mjs --rows ${ROWS}\` on Node ${process.version}; load ${load} at start.`,
    '',
    '| how the process ends, 300 ms into the call | until the process is gone |',
    '|---|---|',
    ...rows,
    '',
    "- natural: the worker is unref'd and nothing else holds the loop; exit: `process.exit()`; terminate+exit: `worker.terminate()` then `process.exit()`.",
    '',
  ];
  process.stdout.write(lines.join('\n'));
}
