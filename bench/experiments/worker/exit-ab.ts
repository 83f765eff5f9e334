/**
 * `npx tsx bench/experiments/worker/exit-ab.ts --rounds N NAME=BIN ...`: stdin close → exit
 * and SIGTERM → exit of `qmd mcp` after a query (the query worker started and idle), the same
 * measure as `npm run bench -- exit`, for several builds of qmd side by side (each BIN a
 * `dist/qmd.mjs` copied from a build), interleaved round by round (A B C, B C A, …), plus
 * the first build idle (no query, so no worker) as the floor the worker adds to. Only the
 * contenders that differ, so more rounds fit than in the whole exit benchmark; docs/design.md
 * §8.4. Prints a table; `--out FILE` writes it too.
 *
 * The builds of results-exit-ab.md: `close` (the shipped teardown), `terminate` and `ack`
 * (`git apply` exit-ab-terminate.patch or exit-ab-ack.patch here, `npm run build`), each
 * `dist/` copied to `bench/.tmp/ab/NAME/dist` (inside the repository, so the bundle still
 * finds node_modules; `touch` each `qmd.mjs` so the stale-build check passes).
 */
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { qmdFixture, qmdServer } from '../../lib/fixture.js';
import { interleave } from '../../lib/interleave.js';
import { loadAverage } from '../../lib/machine.js';
import { pause } from '../../lib/rpc-child.js';
import { type ServerContender, startSession } from '../../lib/sessions.js';
import { summarize } from '../../lib/stats.js';

const args = process.argv.slice(2);
const rounds = Number(args[args.indexOf('--rounds') + 1] ?? 20);
const out = args.includes('--out') ? args[args.indexOf('--out') + 1] : undefined;
const builds = args.filter((a) => /^[\w-]+=/.test(a)).map((a) => a.split('=') as [string, string]);
if (builds.length === 0) throw new Error('usage: exit-ab.ts [--rounds N] [--out FILE] NAME=path/to/qmd.mjs ...');

const loadStart = loadAverage();
const fixture = await qmdFixture(false, (line) => process.stderr.write(`${line}\n`));
// A cache home per build: sharing one, builds drop each other's code cache (src/cli/code-cache.ts
// keeps one build's), so each start compiled and each exit wrote a cache (found in issue 34; the
// results-exit-ab.md runs predate this and carry that cost in every build alike).
const server = (bin: string) => ({
  ...qmdServer(fixture.index, { XDG_CACHE_HOME: join(tmpdir(), 'qmd-exit-ab-cache', bin.replace(/\W+/g, '_')) }),
  args: [bin, 'mcp'],
});
const contenders: ServerContender[] = [
  { name: `${builds[0]?.[0]}, idle`, server: server(builds[0]?.[1] as string) },
  ...builds.map(([name, bin]) => ({ name: `${name}, after a query`, server: server(bin), query: fixture.query })),
];
const lines: string[] = [];
for (const trigger of ['stdin close', 'SIGTERM'] as const) {
  const own = new Map<string, number[]>(contenders.map((c) => [c.name, []]));
  const samples = await interleave(
    contenders,
    { rounds, warmup: 1, onRound: (r, n) => process.stderr.write(`${trigger}: round ${r}/${n}\n`) },
    async (contender) => {
      const peer = await startSession(contender);
      try {
        await pause(50);
        const sent = trigger === 'SIGTERM' ? peer.signal('SIGTERM') : peer.endStdin();
        const exit = await peer.waitExit(15_000);
        const teardown = /Shutdown complete in ([\d.]+) ms/.exec(peer.stderr())?.[1];
        if (teardown !== undefined) own.get(contender.name)?.push(Number(teardown));
        return exit.at - sent;
      } finally {
        peer.kill();
      }
    },
  );
  lines.push(
    `**${trigger} → exit (ms)**`,
    '',
    '| contender | n | exit p50 | exit p90 | teardown p50 | teardown p90 |',
    '|---|---:|---:|---:|---:|---:|',
  );
  for (const c of contenders) {
    const e = summarize(samples.get(c.name) ?? []);
    const t = summarize(own.get(c.name) ?? []);
    lines.push(
      `| ${c.name} | ${e.n} | ${e.p50.toFixed(1)} | ${e.p90.toFixed(1)} | ${t.p50.toFixed(2)} | ${t.p90.toFixed(2)} |`,
    );
  }
  lines.push('');
}
const text = [
  `\`npx tsx bench/experiments/worker/exit-ab.ts --rounds ${rounds} ${builds.map(([n]) => `${n}=…`).join(' ')}\` on Node ${process.version}, ${new Date().toISOString()}, ${fixture.corpus.files} notes; load ${loadStart} at start, ${loadAverage()} at end.`,
  '',
  ...lines,
].join('\n');
process.stdout.write(`${text}\n`);
if (out !== undefined) writeFileSync(out, text);
