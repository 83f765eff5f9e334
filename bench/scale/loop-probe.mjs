/**
 * Preloaded into a server (`NODE_OPTIONS=--import=…/loop-probe.mjs`) by bench/scale.ts: how
 * long its event loop was held. A 10 ms interval timer notes how late each tick fires; a
 * lateness of QMD_BENCH_PROBE_MS (default 20) or more is one stderr line,
 * `[loop-probe] blocked N ms`, written when the loop is free again. The timer is unref'd and
 * nothing reaches stdout, so the server behaves as without it. It runs in every node process
 * that inherits NODE_OPTIONS (the peer's launcher too, which idles), on the main thread only:
 * a worker thread (qmd's query worker) may be busy by design, and is not what hears the client.
 */
import { writeSync } from 'node:fs';
import { isMainThread } from 'node:worker_threads';

const threshold = Number(process.env.QMD_BENCH_PROBE_MS || 20);
const every = 10;
let last = performance.now();
const probe = setInterval(() => {
  const now = performance.now();
  const late = now - last - every;
  last = now;
  if (late >= threshold) {
    try {
      writeSync(2, `[loop-probe] blocked ${Math.round(late)} ms\n`);
    } catch {}
  }
}, every);
probe.unref();
if (!isMainThread) clearInterval(probe);
