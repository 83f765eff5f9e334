// How long `worker.terminate()` takes when the worker runs SQLite statements back to back, the
// query worker's shape (docs/design.md §8.4, issue 35): a read-only connection in the worker,
// a 200k-row recursive CTE (~0.1 s) in a loop with almost no JS between statements. Neither
// binding can interrupt a statement, so terminate() waits at least for the one running; this
// measures how many more run before the thread ends. node:sqlite vs better-sqlite3, rounds
// interleaved, under the Node that runs it:
//   node bench/experiments/worker/terminate-statement.mjs [rounds]
// Results: bench/experiments/worker/results-terminate-statement.md.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';

const repo = join(new URL('.', import.meta.url).pathname, '..', '..', '..');
const STATEMENT =
  'WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 200000) SELECT count(*) AS n FROM c';

function open(binding, file, readOnly) {
  if (binding === 'node') {
    const { DatabaseSync } = process.getBuiltinModule('node:sqlite');
    return new DatabaseSync(file, { readOnly });
  }
  const Database = createRequire(join(repo, 'package.json'))('better-sqlite3');
  return new Database(file, { readonly: readOnly });
}

/** One measurement in this process: the statement's own time, then terminate()'s. */
async function once(binding) {
  const dir = mkdtempSync(join(tmpdir(), 'terminate-statement-'));
  const file = join(dir, 'w.sqlite');
  const db = open(binding, file, false);
  db.exec('PRAGMA journal_mode = WAL; CREATE TABLE t (x)');
  const statement = db.prepare(STATEMENT);
  let started = performance.now();
  statement.get();
  const statementMs = performance.now() - started;
  const worker = new Worker(new URL(import.meta.url), { workerData: { binding, file } });
  await new Promise((resolve) => worker.once('message', resolve));
  await new Promise((resolve) => setTimeout(resolve, 300));
  started = performance.now();
  await worker.terminate();
  const terminateMs = performance.now() - started;
  db.close();
  rmSync(dir, { recursive: true, force: true });
  return { statementMs, terminateMs };
}

if (!isMainThread) {
  const db = open(workerData.binding, workerData.file, true);
  const statement = db.prepare(STATEMENT);
  parentPort.postMessage('ready');
  for (;;) statement.get();
} else if (process.argv[2] === '--one') {
  console.log(JSON.stringify(await once(process.argv[3])));
} else {
  const rounds = Number(process.argv[2] ?? 5);
  const samples = { node: [], b13: [] };
  for (let round = 0; round < rounds; round++) {
    for (const binding of round % 2 === 0 ? ['node', 'b13'] : ['b13', 'node']) {
      // A fresh process each time: one binding loaded, as qmd has.
      const r = spawnSync(process.execPath, ['--no-warnings', new URL(import.meta.url).pathname, '--one', binding], {
        encoding: 'utf8',
        timeout: 300_000,
      });
      samples[binding].push(JSON.parse(r.stdout));
    }
  }
  const list = (xs, key) =>
    xs
      .map((x) => Math.round(x[key]))
      .sort((a, b) => a - b)
      .join(', ');
  console.log(`Node ${process.version}, ${rounds} rounds, ms (sorted):`);
  for (const [binding, xs] of Object.entries(samples)) {
    console.log(
      `- ${binding === 'node' ? 'node:sqlite' : 'better-sqlite3 13.2.0'}: statement ${list(xs, 'statementMs')}; terminate() ${list(xs, 'terminateMs')}`,
    );
  }
}
