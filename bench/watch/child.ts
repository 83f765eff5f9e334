/**
 * One measured server of bench/watch.ts: the served reader (read-only, as `qmd mcp` opens it)
 * and a watcher over it, in this process, measured from inside. Prints one JSON line.
 * argv: INDEX ROOT NOTES MODE(events|polling) IDLE_MS WRITES
 */

import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { openReader } from '../../src/core/open.js';
import { silentLog } from '../../src/log.js';
import { DEFAULT_POLL_MS, watcherSettings } from '../../src/watch/index.js';
import { Watcher } from '../../src/watch/watcher.js';
import { noteFolder, PER_FOLDER } from './corpus.js';

const [index, root, notesText, mode, idleText, writesText] = process.argv.slice(2) as string[];
const notes = Number(notesText);
const idleMs = Number(idleText);
const writes = Number(writesText);
const fanout = Math.ceil(Math.sqrt(Math.ceil(notes / PER_FOLDER)));
const cpuMs = (since: NodeJS.CpuUsage) => {
  const u = process.cpuUsage(since);
  return (u.user + u.system) / 1000;
};
const lag = monitorEventLoopDelay({ resolution: 5 });
lag.enable();
const maxLag = () => {
  const v = lag.max / 1e6;
  lag.reset();
  return v;
};

// The watcher holds nothing that keeps a process alive (a server's transport does that): this one must.
const alive = setInterval(() => {}, 1 << 30);
const reader = openReader(index as string, { readonly: true, quickCheck: false });
const watcher = new Watcher({
  ...watcherSettings(reader, { log: silentLog, embed: false }),
  ...(mode === 'polling' && { watchLimit: 0 }),
});
const indexed = new Set<string>();
const waiters = new Map<string, () => void>();
watcher.onIndexed((c) => {
  for (const p of [...c.added, ...c.updated]) {
    indexed.add(p);
    waiters.get(p)?.();
  }
});
const untilIndexed = (relative: string) =>
  new Promise<void>((resolve) => {
    if (indexed.has(relative)) return resolve();
    waiters.set(relative, resolve);
  });

// Start: the watches (or polling) in place.
maxLag();
let cpu = process.cpuUsage();
let t = performance.now();
await watcher.start();
const startMs = performance.now() - t;
const startCpuMs = cpuMs(cpu);
const report = watcher.report();
// Catch-up: a marker written now is written in the same round as the catch-up's sweep.
const marker = 'catch-up-marker.md';
// Text of its own, so it is a change even if a run before left a marker indexed.
writeFileSync(join(root as string, marker), `# Marker\n\nmarker ${process.pid} ${Date.now()}\n`);
await untilIndexed(marker);
const catchUpMs = performance.now() - t;
const catchUpCpuMs = cpuMs(cpu);
const startLagMs = maxLag();

// Idle (the loop monitor off: its 5 ms timer would be most of what is measured).
lag.disable();
cpu = process.cpuUsage();
await new Promise((resolve) => setTimeout(resolve, idleMs));
const idleCpuPerMin = (cpuMs(cpu) * 60_000) / idleMs;
const rssMb = process.memoryUsage().rss / 2 ** 20;
lag.enable();
// The floor: the longest delay of an idle loop on this loaded machine (other processes' turns).
maxLag();
await new Promise((resolve) => setTimeout(resolve, Math.min(idleMs, 15_000)));
const idleLagMs = maxLag();

// Write → searchable, one note at a time in a random folder, through the served reader.
const latencies: number[] = [];
for (let i = 0; i < writes; i++) {
  const n = Math.floor(Math.random() * notes);
  const folder = noteFolder(root as string, n, fanout);
  const word = `zq${process.pid}w${i}x`;
  const relative = `${folder.slice((root as string).length + 1)}/bench-${i}.md`;
  t = performance.now();
  writeFileSync(join(folder, `bench-${i}.md`), `# Bench ${i}\n\n${word}\n`);
  await untilIndexed(relative);
  if (reader.search(word).length !== 1) throw new Error(`${word} not searchable`);
  latencies.push(performance.now() - t);
}
const writeLagMs = maxLag();
latencies.sort((a, b) => a - b);
const q = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? Number.NaN;

// A burst of 1,000 writes: until all are indexed, and the longest the loop was held.
// Written by another process, as an editor or an agent would: a loop writing 1,000 files here
// would be this benchmark's own block of the event loop, not the watcher's.
const burst: string[] = [];
const files: Array<[string, string]> = [];
for (let i = 0; i < 1000; i++) {
  const folder = noteFolder(root as string, (i * 97) % notes, fanout);
  burst.push(`${folder.slice((root as string).length + 1)}/burst-${i}.md`);
  files.push([join(folder, `burst-${i}.md`), `# Burst ${i}\n\nburst ${i} of ${process.pid}\n`]);
}
t = performance.now();
const burstCpu = process.cpuUsage();
const writer = spawn(
  process.execPath,
  [
    '-e',
    'const fs = require("node:fs"); for (const [f, t] of JSON.parse(process.argv[1])) fs.writeFileSync(f, t);',
    JSON.stringify(files),
  ],
  { stdio: 'ignore' },
);
await Promise.all(burst.map(untilIndexed));
await new Promise((resolve) => writer.once('exit', resolve).exitCode !== null && resolve(undefined));
const burstMs = performance.now() - t;
const burstCpuMs = cpuMs(burstCpu);
const burstLagMs = maxLag();

await watcher.close();
await reader.close();
clearInterval(alive);
process.stdout.write(
  `${JSON.stringify({
    mode,
    via: report.collections.map((c) => c.via).join(','),
    folders: report.collections.reduce((s, c) => s + c.folders, 0),
    pollMs: mode === 'polling' ? DEFAULT_POLL_MS : null,
    startMs,
    startCpuMs,
    catchUpMs,
    catchUpCpuMs,
    startLagMs,
    idleCpuPerMin,
    idleLagMs,
    rssMb,
    p50: q(0.5),
    p95: q(0.95),
    writeLagMs,
    burstMs,
    burstCpuMs,
    burstLagMs,
  })}\n`,
);
