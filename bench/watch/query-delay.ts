/**
 * `npx tsx bench/watch/query-delay.ts [--notes 150] [--queries 30]`: does a watcher re-embedding
 * changed notes in the background delay a query more than a concurrent `qmd embed` would? The
 * tiny model (test/support/gguf.ts), an index of `notes` notes embedded; then `vsearch` (one
 * query embedding, then the KNN) timed `queries` times, interleaved, in three conditions:
 * idle; while this process's watcher re-embeds `notes` rewritten notes through the served
 * reader's model; while a `qmd embed` process embeds the same rewrite in a copy of the index.
 * Prints a table and writes bench/results-watch-query-delay.md. `npm run build` first.
 */
import { spawn } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../../src/core/index.js';
import { openReader } from '../../src/core/open.js';
import { silentLog } from '../../src/log.js';
import { watchIndex } from '../../src/watch/index.js';
import { tinyModelPath } from '../../test/support/gguf.js';
import { loadAverage } from '../lib/machine.js';
import { QMD_BIN, ROOT } from '../lib/paths.js';

const args = process.argv.slice(2);
const flag = (name: string, fallback: string) => {
  const i = args.indexOf(name);
  return i === -1 ? fallback : (args[i + 1] as string);
};
const NOTES = Number(flag('--notes', '150'));
const QUERIES = Number(flag('--queries', '30'));
const model = tinyModelPath();
const dir = mkdtempSync(join(tmpdir(), 'qmd-query-delay-'));
const root = join(dir, 'notes');
const index = join(dir, 'index.sqlite');
const other = join(dir, 'other.sqlite');
const text = (i: number, word: string) =>
  `# Note ${i}\n\n${`The ${word} walked along the river bank at dawn, counting herons and ${i} stones. `.repeat(12)}\n`;
/** Rewrites half the notes (all of them at first): the other half keeps its vectors, so queries have some to find. */
const write = (word: string, all = false) => {
  for (let i = 0; i < (all ? NOTES * 2 : NOTES); i++) writeFileSync(join(root, `n${i}.md`), text(i, word));
};
const alive = setInterval(() => {}, 1 << 30);
try {
  const { mkdirSync } = await import('node:fs');
  mkdirSync(root, { recursive: true });
  write('fox', true);
  const store = openStore(index, { embedModel: model, embedThreads: 1 });
  await store.addCollection(root, { name: 'notes' });
  await store.embed();
  await store.close();

  const reader = openReader(index, { readonly: true, embedModel: model, embedThreads: 1 });
  const watcher = watchIndex(reader, { log: silentLog, embed: true });
  await watcher.start();
  await reader.vsearch('warm up the model');
  // Each query its own text: a query embedding met before may be cached.
  let asked = 0;
  const words = ['heron', 'stone', 'river', 'dawn', 'bank', 'fox', 'otter', 'reed', 'mist', 'shore'];
  const timeQuery = async (i: number) => {
    const t = performance.now();
    await reader.vsearch(
      `${words[i % words.length]} ${words[(i * 3 + asked) % words.length]} number ${asked++} at ${i}`,
    );
    return performance.now() - t;
  };
  const samples: Record<string, number[]> = { idle: [], watcher: [], 'qmd embed': [] };
  const pause = () => new Promise((r) => setTimeout(r, 100));
  for (let i = 0; i < QUERIES; i++) {
    samples.idle?.push(await timeQuery(i));
    await pause();
  }
  // The watcher: rewrite every note; queries while its vectors are pending.
  write('badger');
  while (watcher.report().vectorsPending === 0) await new Promise((r) => setTimeout(r, 20));
  // Once the first texts are embedded, the follower is surely running.
  const first = watcher.report().vectorsPending;
  while (watcher.report().vectorsPending >= first) await new Promise((r) => setTimeout(r, 20));
  for (let i = 0; i < QUERIES && watcher.report().vectorsPending > 0; i++) {
    samples.watcher?.push(await timeQuery(i));
    await pause();
  }
  const left = watcher.report().vectorsPending;
  await watcher.close();
  // `qmd embed` in another process over a copy of the index with the rewrite indexed, not embedded.
  copyFileSync(index, other);
  write('otter');
  const update = spawn(process.execPath, [QMD_BIN, 'update'], { env: { ...process.env, QMD_INDEX: other } });
  await new Promise((r) => update.on('exit', r));
  const embed = spawn(process.execPath, [QMD_BIN, 'embed'], {
    env: { ...process.env, QMD_INDEX: other, QMD_EMBED_MODEL: model, QMD_EMBED_THREADS: '1' },
    stdio: 'ignore',
  });
  let running = true;
  embed.on('exit', () => {
    running = false;
  });
  await new Promise((r) => setTimeout(r, 1500));
  for (let i = 0; i < QUERIES && running; i++) {
    samples['qmd embed']?.push(await timeQuery(i));
    await pause();
  }
  embed.kill();
  await reader.close();
  const q = (xs: number[], p: number) => {
    const s = [...xs].sort((a, b) => a - b);
    return s[Math.min(s.length - 1, Math.floor(p * s.length))] ?? Number.NaN;
  };
  const rows = Object.entries(samples).map(
    ([name, xs]) =>
      `| ${name} | ${xs.length} | ${q(xs, 0.5).toFixed(1)} | ${q(xs, 0.95).toFixed(1)} | ${Math.max(...xs).toFixed(1)} |`,
  );
  const table = ['| while | queries | vsearch p50 ms | p95 ms | max ms |', '|---|---:|---:|---:|---:|', ...rows].join(
    '\n',
  );
  const out = `# A query while vectors follow (bench/watch/query-delay.ts)

\`npx tsx bench/watch/query-delay.ts --notes ${NOTES} --queries ${QUERIES}\`, Node ${process.version}, the tiny model, 1 thread,
load ${loadAverage()}. ${NOTES} of ${NOTES * 2} notes rewritten; the watcher had ${left} still pending when its queries ended.

${table}
`;
  writeFileSync(join(ROOT, 'bench/results-watch-query-delay.md'), out);
  process.stdout.write(`${table}\n`);
} finally {
  clearInterval(alive);
  rmSync(dir, { recursive: true, force: true });
}
