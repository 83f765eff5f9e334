/**
 * `npx tsx bench/watch.ts [--sizes 10000,100000] [--idle-ms 60000] [--writes 40]`: the watcher
 * at 10k and 100k notes in thousands of folders (bench/watch/corpus.ts: 10 notes a folder),
 * each size indexed once (bench/.tmp/watch-N), then a served reader and its watcher measured in
 * a child process (bench/watch/child.ts), with OS events and again polling (the fallback when
 * the OS limit on watches is reached, forced through the test seam): start-up (watches in
 * place) and catch-up (a full stat pass against the index) time and CPU, idle CPU and RSS,
 * write → searchable through the reader in-process (p50/p95), a burst of 1,000 writes, and the
 * longest the event loop was held in each phase. Writes bench/results-watch.md.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openStore } from '../src/core/index.js';
import { loadAverage } from './lib/machine.js';
import { ROOT } from './lib/paths.js';
import { watchCorpus } from './watch/corpus.js';

const args = process.argv.slice(2);
const flag = (name: string, fallback: string) => {
  const i = args.indexOf(name);
  return i === -1 ? fallback : (args[i + 1] as string);
};
const SIZES = flag('--sizes', '10000,100000').split(',').map(Number);
const IDLE_MS = Number(flag('--idle-ms', '60000'));
const MODES = flag('--modes', 'events,polling').split(',');
const WRITES = Number(flag('--writes', '40'));
/** Polling's write → searchable is about the interval; fewer samples say as much, in less time. */
const POLL_WRITES = Number(flag('--poll-writes', '10'));
const log = (line: string) => process.stderr.write(`${line}\n`);

const rows: string[] = [];
const loads: string[] = [];
for (const notes of SIZES) {
  const { dir, root } = watchCorpus(notes, log);
  const index = join(dir, 'index.sqlite');
  if (!existsSync(join(dir, 'index.done'))) {
    // (A run stopped midway leaves its notes behind: `find … -delete` below, then `update`.)
    rmSync(index, { force: true });
    log(`indexing ${notes} notes…`);
    const t = performance.now();
    const store = openStore(index);
    await store.addCollection(root, { name: 'notes' });
    await store.close();
    writeFileSync(join(dir, 'index.done'), '');
    log(`indexed in ${((performance.now() - t) / 1000).toFixed(0)} s`);
  }
  for (const mode of MODES) {
    loads.push(loadAverage());
    const child = spawnSync(
      process.execPath,
      [
        '--import',
        'tsx',
        join(ROOT, 'bench/watch/child.ts'),
        index,
        root,
        String(notes),
        mode,
        String(IDLE_MS),
        String(mode === 'events' ? WRITES : POLL_WRITES),
      ],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 1 << 20 },
    );
    if (child.status !== 0) throw new Error(`child ${notes} ${mode} exited ${child.status}`);
    const r = JSON.parse(child.stdout.trim().split('\n').at(-1) as string);
    log(JSON.stringify({ notes, ...r }));
    const f = (v: number) => (v >= 100 ? v.toFixed(0) : v.toFixed(1));
    rows.push(
      `| ${notes.toLocaleString('en-US')} | ${mode === 'events' ? `events (${r.folders} folders)` : `polling every ${r.pollMs / 1000} s`} | ${f(r.startMs)} | ${f(r.startCpuMs)} | ${f(r.catchUpMs)} | ${f(r.catchUpCpuMs)} | ${f(r.startLagMs)} | ${f(r.idleCpuPerMin)} | ${f(r.idleLagMs)} | ${f(r.rssMb)} | ${f(r.p50)} | ${f(r.p95)} | ${f(r.writeLagMs)} | ${f(r.burstMs)} | ${f(r.burstCpuMs)} | ${f(r.burstLagMs)} |`,
    );
    // What the watcher wrote is taken out again, so every run starts from the same index.
    spawnSync('find', [root, '-name', 'bench-*.md', '-delete']);
    spawnSync('find', [root, '-name', 'burst-*.md', '-delete']);
    spawnSync('find', [root, '-name', 'catch-up-marker.md', '-delete']);
    const store = openStore(index);
    await store.update();
    await store.close();
  }
}

const header = [
  '| notes | heard by | start ms | start CPU ms | catch-up ms | catch-up CPU ms | start: longest loop block ms | idle CPU ms/min | idle: longest loop block ms (the floor) | RSS MB | write→searchable p50 ms | p95 ms | writes: longest block ms | 1,000-write burst ms | burst CPU ms | burst: longest block ms |',
  '|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
];
const table = [...header, ...rows].join('\n');
const text = `# The watcher at scale (bench/watch.ts)

\`npx tsx bench/watch.ts --sizes ${SIZES.join(',')} --modes ${MODES.join(',')} --idle-ms ${IDLE_MS} --writes ${WRITES}\`, Node ${process.version}, 2 cores shared with other
sessions (load at each run: ${loads.join('; ')}). One served reader (read-only, as \`qmd mcp\` opens it) and its
watcher in a child process, measured from inside: "start" is \`start()\` (watches in place), "catch-up" until a
note written right after it is indexed (the full stat pass against the index goes first in the same round);
idle over ${IDLE_MS / 1000} s (CPU with the loop monitor off; then its longest block over 15 s with nothing to do:
the floor this shared machine gives any process); write → searchable: a new note in a random folder until \`reader.search\` finds it,
${WRITES} times one after another (${POLL_WRITES} when polling); the burst: 1,000 notes written at once until every one is indexed. "Longest
block" is the event loop's longest delay in that phase (monitorEventLoopDelay, 5 ms resolution). Polling is the
fallback at the OS limit on watches (forced with the test seam \`watchLimit: 0\`), at the default interval (10 s, or 20 times the last pass if longer).
The other half of the work measures write → searchable over MCP.

${table}
`;
writeFileSync(join(ROOT, 'bench/results-watch.md'), text);
process.stdout.write(`${table}\n`);
