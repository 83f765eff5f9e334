/**
 * `npx tsx bench/experiments/worker/queue-latency.ts [--rounds N] [--old COMMIT]`: what it
 * costs a call that `QueryWorker` now holds queued calls on the main thread and sends the
 * worker one at a time (docs/design.md §8.4), against the client at COMMIT (default
 * 55457b4), which posted every call at once and let the worker queue them. Both clients run
 * in this process, each with its own `dist/query-worker.mjs` (the worker side is unchanged;
 * `npm run build` first), on a real index of 1,000 generated notes, alternating which goes
 * first each round. Per call: from the call to its answer; two calls, BM25 (\`lexical\`, limit
 * 10) and the cheapest (\`multiGet\` of one file), where the port's round trip weighs most.
 *   sequential: 1 call at a time (nothing queued: both send it at once);
 *   burst of 2: what a hybrid query asks (lexical and nearest together; here two lexical);
 *   burst of 8: 8 calls at once, 7 of them queued.
 * Writes bench/experiments/worker/results-queue-latency.md.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { openStore } from '../../../src/core/index.js';
import { noFailpoints } from '../../../src/failpoints.js';
import { silentLog } from '../../../src/log.js';
import type { QueryReads } from '../../../src/search/query-reads.js';

const args = process.argv.slice(2);
const option = (name: string, fallback: string): string => {
  const at = args.indexOf(name);
  return at >= 0 ? (args[at + 1] ?? fallback) : fallback;
};
const ROUNDS = Number(option('--rounds', '40'));
const OLD = option('--old', '55457b4');
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const HERE = fileURLToPath(new URL('.', import.meta.url));
const WORKER = join(ROOT, 'dist/query-worker.mjs');
// The old client beside the new one, so its relative imports resolve; removed at the end.
const OLD_FILE = join(ROOT, 'src/store/query-worker-client.old.ts');
const load = (): string =>
  loadavg()
    .map((n) => n.toFixed(2))
    .join(' / ');

const WORDS =
  'sourdough oven garden roses pruning starter loaves spring river stone maple winter lantern harbour copper'.split(
    ' ',
  );
function note(i: number): string {
  const lines = [`# Note ${i}`, ''];
  for (let p = 0; p < 6; p++) {
    const words: string[] = [];
    for (let w = 0; w < 60; w++) words.push(WORDS[(i * 7 + p * 13 + w * w) % WORDS.length] as string);
    lines.push(words.join(' '), '');
  }
  return lines.join('\n');
}

type Client = QueryReads;
type Make = (options: Record<string, unknown>) => Client;

async function main(): Promise<void> {
  const loadStart = load();
  const dir = mkdtempSync(join(tmpdir(), 'qmd-queue-latency-'));
  writeFileSync(OLD_FILE, execFileSync('git', ['show', `${OLD}:src/store/query-worker-client.ts`], { cwd: ROOT }));
  try {
    const notes = join(dir, 'notes');
    mkdirSync(notes);
    for (let i = 0; i < 1000; i++) writeFileSync(join(notes, `n${i}.md`), note(i));
    const index = join(dir, 'index.sqlite');
    const writer = openStore(index);
    await writer.addCollection(notes, { name: 'notes' });
    await writer.close();

    const NewClient = (await import('../../../src/search/query-worker-client.js')).QueryWorker as unknown as new (
      o: Record<string, unknown>,
    ) => Client;
    const OldClient = (await import(OLD_FILE)).QueryWorker as new (o: Record<string, unknown>) => Client;
    const options = {
      path: index,
      busyTimeoutMs: 5000,
      vectorExtension: false,
      log: silentLog,
      failpoints: noFailpoints,
      script: { file: WORKER },
    };
    const make: Record<string, Make> = {
      [`old (${OLD}: all posted at once)`]: (o) => new OldClient(o),
      'new (one at a time)': (o) => new NewClient(o),
    };
    const clients = Object.entries(make).map(([name, m]) => ({ name, reads: m(options) }));
    const kinds = {
      lexical: (reads: Client, i: number) => reads.lexical(WORDS[i % WORDS.length] as string, { limit: 10 }),
      // The cheapest call: one indexed lookup, so the port's round trip is most of it.
      'multiGet (1 file)': (reads: Client, i: number) => reads.multiGet(`notes/n${i % 1000}.md`, { maxLines: 1 }),
    };
    // Warm-up: starts each worker and its statements.
    for (const { reads } of clients) {
      for (let i = 0; i < 20; i++) for (const run of Object.values(kinds)) await run(reads, i);
    }

    const shapes = Object.entries(kinds).flatMap(([kind, run]) => [
      { name: `${kind}, sequential`, width: 1, repeat: 8, run },
      { name: `${kind}, burst of 2`, width: 2, repeat: 4, run },
      { name: `${kind}, burst of 8`, width: 8, repeat: 1, run },
    ]);
    const samples = new Map<string, number[]>();
    const lastOfBurst = new Map<string, number[]>();
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? clients : [...clients].reverse();
      for (const shape of shapes) {
        for (const { name, reads } of order) {
          for (let r = 0; r < shape.repeat; r++) {
            const started = performance.now();
            const times = await Promise.all(
              Array.from({ length: shape.width }, (_, i) =>
                shape.run(reads, round * 8 + r + i).then(() => performance.now() - started),
              ),
            );
            const key = `${shape.name}|${name}`;
            samples.set(key, [...(samples.get(key) ?? []), ...times]);
            lastOfBurst.set(key, [...(lastOfBurst.get(key) ?? []), Math.max(...times)]);
          }
        }
      }
    }
    for (const { reads } of clients) await reads.close();

    const pct = (values: number[], p: number): number => {
      const sorted = [...values].sort((a, b) => a - b);
      return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
    };
    const rows: string[] = [];
    for (const shape of shapes) {
      for (const { name } of clients) {
        const key = `${shape.name}|${name}`;
        const all = samples.get(key) ?? [];
        const last = lastOfBurst.get(key) ?? [];
        rows.push(
          `| ${shape.name} | ${name} | ${all.length} | ${pct(all, 50).toFixed(3)} | ${pct(all, 90).toFixed(3)} | ${pct(last, 50).toFixed(3)} |`,
        );
      }
    }
    const text = [
      '## A call through the query worker: queued on the main thread (one at a time) or in the worker',
      '',
      `\`npx tsx bench/experiments/worker/queue-latency.ts --rounds ${ROUNDS} --old ${OLD}\` on Node ${process.version}, ${new Date().toISOString()}; 1,000 notes of about 2.5 KB, \`lexical\` with limit 10 and a \`multiGet\` of one file; load ${loadStart} at start, ${load()} at end.`,
      '',
      '| shape | client | calls | per call p50 ms | per call p90 ms | whole burst p50 ms |',
      '|---|---|---:|---:|---:|---:|',
      ...rows,
      '',
      '- per call: from the call to its answer, every call of every burst; whole burst: from the first call to the last answer.',
      '- Only queued calls can differ: the new client sends each when the previous is answered (one more round trip through the port each), the old one posted all at once.',
      '',
    ].join('\n');
    process.stdout.write(`${text}\n`);
    writeFileSync(join(HERE, 'results-queue-latency.md'), text);
  } finally {
    rmSync(OLD_FILE, { force: true });
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
