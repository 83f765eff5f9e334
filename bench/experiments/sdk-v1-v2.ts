/**
 * What the move from MCP SDK v1 to v2 changed for a bare server, measured side by side: the
 * README example server on `@modelcontextprotocol/sdk` 1.32.2 (bench/contenders/sdk1-server.mjs)
 * and on `@modelcontextprotocol/server` 2.4.0 (sdk-server.mjs), with bare node as the floor.
 * qmd's own before/after cannot be run side by side (the v1 build is gone); its figures are in
 * the results files of each run. Interleaved rounds, each a fresh process.
 *
 *   npx tsx bench/experiments/sdk-v1-v2.ts [ROUNDS]   # prints a table, writes bench/results-sdk-v1-v2.md
 */
import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { CONTENDERS, ROOT } from '../lib/paths.js';
import { RpcChild, type ServerCommand } from '../lib/rpc-child.js';
import { summarize } from '../lib/stats.js';

const rounds = Number(process.argv[2] ?? 30);
const contenders: Array<{ name: string; server: ServerCommand }> = [
  { name: 'floor (bare node)', server: { command: process.execPath, args: [join(CONTENDERS, 'floor.mjs')] } },
  { name: 'bare SDK v1 (1.32.2)', server: { command: process.execPath, args: [join(CONTENDERS, 'sdk1-server.mjs')] } },
  { name: 'bare SDK v2 (2.4.0)', server: { command: process.execPath, args: [join(CONTENDERS, 'sdk-server.mjs')] } },
];
const startup = new Map<string, number[]>(contenders.map((c) => [c.name, []]));
const exit = new Map<string, number[]>(contenders.map((c) => [c.name, []]));

const loadBefore = loadavg()[0]!.toFixed(2);
for (let round = 0; round <= rounds; round++) {
  // Rotate the order each round; round 0 warms the disk cache and is dropped.
  const order = contenders.map((_, i) => contenders[(i + round) % contenders.length]!);
  for (const contender of order) {
    const child = new RpcChild(contender.server);
    const reply = await child.initialize();
    await new Promise((resolve) => setTimeout(resolve, 50));
    const sent = child.endStdin();
    const gone = await child.waitExit(15_000);
    if (round > 0) {
      startup.get(contender.name)!.push(reply.at - child.spawnedAt);
      exit.get(contender.name)!.push(gone.at - sent);
    }
  }
  process.stderr.write(`round ${round}/${rounds}\n`);
}

const row = (name: string) => {
  const s = summarize(startup.get(name)!);
  const e = summarize(exit.get(name)!);
  return `| ${name} | ${s.p50.toFixed(1)} | ${s.p90.toFixed(1)} | ${e.p50.toFixed(1)} | ${e.p90.toFixed(1)} |`;
};
const v1 = summarize(startup.get(contenders[1]!.name)!).p50;
const v2 = summarize(startup.get(contenders[2]!.name)!).p50;
const v1Exit = summarize(exit.get(contenders[1]!.name)!).p50;
const v2Exit = summarize(exit.get(contenders[2]!.name)!).p50;
const text = [
  '# MCP SDK v1 → v2, a bare server side by side',
  '',
  `${new Date().toISOString()}, node ${process.version}, ${rounds} interleaved rounds, load average ${loadBefore} at start, ${loadavg()[0]!.toFixed(2)} at end.`,
  'Command: `npx tsx bench/experiments/sdk-v1-v2.ts`.',
  '',
  '| contender | spawn → initialize p50 ms | p90 ms | stdin close → exit p50 ms | p90 ms |',
  '|---|---:|---:|---:|---:|',
  ...contenders.map((c) => row(c.name)),
  '',
  `v2 ÷ v1: spawn → initialize ${(v2 / v1).toFixed(2)}×, stdin close → exit ${(v2Exit / v1Exit).toFixed(2)}×.`,
  '',
].join('\n');
process.stdout.write(text);
writeFileSync(join(ROOT, 'bench/results-sdk-v1-v2.md'), text);
