// Preloaded into `qmd mcp` (NODE_OPTIONS=--import=bench/experiments/exit-cpu-probe.mjs, with
// EXIT_CPU_FILE=FILE and EXIT_CPU_NAME=NAME): the main thread's CPU time and wall time from
// its "Shutting down (" breadcrumb to its 'exit' event, one JSON line per process appended to
// FILE. CPU time barely moves with the machine's load, so it compares builds where wall
// time cannot (bench/experiments/results-idle-exit.md). Does nothing without EXIT_CPU_FILE.
import { appendFileSync } from 'node:fs';
import { isMainThread } from 'node:worker_threads';

const out = process.env.EXIT_CPU_FILE;
if (out && isMainThread) {
  let at;
  const write = process.stderr.write.bind(process.stderr);
  process.stderr.write = (chunk, ...rest) => {
    if (at === undefined && String(chunk).startsWith('Shutting down ('))
      at = { cpu: process.cpuUsage(), t: performance.now() };
    return write(chunk, ...rest);
  };
  process.on('exit', () => {
    if (at === undefined) return;
    const d = process.cpuUsage(at.cpu);
    const line = {
      name: process.env.EXIT_CPU_NAME,
      cpuMs: (d.user + d.system) / 1000,
      wallMs: performance.now() - at.t,
    };
    appendFileSync(out, `${JSON.stringify(line)}\n`);
  });
}
