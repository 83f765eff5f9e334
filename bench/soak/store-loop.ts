/**
 * The store-level half of the GC soak (bench/soak.ts): bundled by esbuild into
 * bench/.tmp/soak/store-loop.mjs and run by each Node with `--expose-gc`, so it is the
 * product's own store code (src/store) with no loader in between, in a worker too.
 *
 *   node --expose-gc store-loop.mjs <path> <index> <statements>
 *
 * Opens the index as qmd does (`openStore`) and a second connection with sqlite-vec loaded,
 * then prepares and drops `statements` distinct statements (each run with all/get or an
 * iterator left unfinished), with store searches between them and forced GCs, synchronous
 * and from V8 tasks. It leaves by `path`:
 *  - natural: the loop ends, nothing is closed, the event loop drains;
 *  - exit-mid: `process.exit(0)` half-way, statements and iterators alive;
 *  - uncaught: an exception thrown from a timer half-way, while the loop runs (exit 1 expected);
 *  - worker-terminate: the loop runs in a worker thread, terminated half-way by the main thread,
 *    which then forces GCs and exits naturally;
 *  - worker-exit: the same worker calls `process.exit(0)` half-way (only the worker ends).
 */
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { openStore } from '../../src/core/index.js';
import { loadSqliteVec, Sqlite } from '../../src/store/sqlite.js';

type Path = 'natural' | 'exit-mid' | 'uncaught' | 'worker-terminate' | 'worker-exit';
const PATHS: readonly Path[] = ['natural', 'exit-mid', 'uncaught', 'worker-terminate', 'worker-exit'];

interface Job {
  path: Path;
  index: string;
  statements: number;
}

const gc = (globalThis as { gc?: (options?: object) => unknown }).gc;

function forceGc(async: boolean): void {
  if (gc === undefined) throw new Error('run with --expose-gc');
  if (async) {
    // A GC run from a V8 task, outside any JS frame: where a native finalizer meets no context.
    try {
      gc({ type: 'major', execution: 'async' });
    } catch {
      gc();
    }
  } else gc();
}

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

async function loop(job: Job, onHalf: () => void): Promise<void> {
  const store = openStore(job.index);
  const db = new Sqlite(job.index, { allowExtension: true });
  loadSqliteVec(db);
  const words = ['alpha', 'index', 'server', 'note', 'query', 'sqlite', 'vector', 'garden'];
  const half = Math.floor(job.statements / 2);
  for (let i = 0; i < job.statements; i++) {
    // Distinct SQL text every time: a new native statement, dropped at once.
    const statement = db.prepare(
      `SELECT name, type, ${i} AS n FROM sqlite_master WHERE name <> ? ORDER BY name LIMIT ${1 + (i % 7)}`,
    );
    const kind = i % 3;
    if (kind === 0) statement.all(`x${i}`);
    else if (kind === 1) statement.get(`x${i}`);
    else (statement as unknown as { iterate(...p: unknown[]): Iterator<unknown> }).iterate(`x${i}`).next();
    if (i % 50 === 0) store.search(words[i % words.length] as string);
    if (i % 97 === 0) db.value('SELECT vec_version()');
    if (i % 250 === 0) await store.query(`${words[i % words.length]} ${words[(i + 3) % words.length]}`);
    if (i % 500 === 0) forceGc(false);
    if (i % 1000 === 999) forceGc(true);
    if (i === half) onHalf();
    if (i % 100 === 0) await turn();
  }
}

function mainThread(job: Job): void {
  if (job.path === 'worker-terminate' || job.path === 'worker-exit') {
    const worker = new Worker(new URL(import.meta.url), { workerData: job });
    worker.on('message', (message) => {
      if (message === 'half' && job.path === 'worker-terminate') void worker.terminate();
    });
    worker.on('error', (error) => {
      process.stderr.write(`worker error: ${error.message}\n`);
      process.exitCode = 2;
    });
    worker.on('exit', () => {
      forceGc(false);
      forceGc(true);
      process.stderr.write(`soak ${job.path}: worker gone, main thread leaving\n`);
    });
    return;
  }
  loop(job, () => {
    if (job.path === 'exit-mid') process.exit(0);
    if (job.path === 'uncaught') {
      setTimeout(() => {
        throw new Error('soak: uncaught, on purpose');
      }, 0);
    }
  }).then(
    () => {
      forceGc(true);
      process.stderr.write(`soak ${job.path}: loop done, leaving without close\n`);
    },
    (error: unknown) => {
      process.stderr.write(`soak ${job.path}: ${(error as Error).stack}\n`);
      process.exitCode = 2;
    },
  );
}

if (isMainThread) {
  const [path, index, statements] = process.argv.slice(2);
  if (!PATHS.includes(path as Path) || index === undefined) {
    process.stderr.write(`usage: node --expose-gc store-loop.mjs ${PATHS.join('|')} <index> [statements]\n`);
    process.exit(64);
  }
  mainThread({ path: path as Path, index, statements: Number(statements ?? 12_000) });
} else {
  const job = workerData as Job;
  void loop(job, () => {
    parentPort?.postMessage('half');
    if (job.path === 'worker-exit') process.exit(0);
  });
}
