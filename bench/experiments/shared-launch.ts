/**
 * `qmd mcp --shared`, spawn → `initialize` answered, two builds side by side, interleaved:
 * - cold: no server yet; the relay starts one (before: spawned detached as the relay's child;
 *   after: through the launcher, `src/relay/launch.ts`) and waits for it;
 * - warm: the server already runs (after: the relay also waits for its greeting).
 *
 *   npx tsx bench/experiments/shared-launch.ts BEFORE_BIN AFTER_BIN [ROUNDS]
 *
 * BEFORE_BIN/AFTER_BIN: a `dist/qmd.mjs` each (build the older commit into a copy of the tree).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { sharedPaths } from '../../src/relay/paths.js';
import { qmdFixture } from '../lib/fixture.js';
import { TMP } from '../lib/paths.js';
import { qmdEnv } from '../lib/qmd.js';
import { RpcChild } from '../lib/rpc-child.js';

const [before, after, roundsArg] = process.argv.slice(2);
if (!before || !after) throw new Error('usage: shared-launch.ts BEFORE_BIN AFTER_BIN [ROUNDS]');
const rounds = Number(roundsArg ?? 10);
const log = (line: string) => process.stderr.write(`${line}\n`);
const fixture = await qmdFixture(true, log);

function relayCommand(bin: string, runtime: string) {
  return {
    command: process.execPath,
    args: [bin, 'mcp', '--shared'],
    env: qmdEnv({ QMD_INDEX: fixture.index, XDG_RUNTIME_DIR: runtime, QMD_SHARED_IDLE_MS: '600000' }),
  };
}

async function stopServer(runtime: string): Promise<void> {
  const { pid } = JSON.parse(readFileSync(sharedPaths(fixture.index, { XDG_RUNTIME_DIR: runtime }).record, 'utf8')) as {
    pid: number;
  };
  process.kill(pid, 'SIGTERM');
  for (;;) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function once(bin: string, runtime: string): Promise<number> {
  const peer = new RpcChild(relayCommand(bin, runtime));
  const reply = await peer.initialize();
  peer.endStdin();
  await peer.waitExit(15_000);
  return reply.at - peer.spawnedAt;
}

const samples: Record<string, number[]> = {};
const add = (name: string, ms: number) => {
  samples[name] ??= [];
  samples[name].push(ms);
};
for (let round = 0; round < rounds; round++) {
  for (const [name, bin] of [
    ['before', before],
    ['after', after],
  ] as const) {
    const runtime = mkdtempSync(join(TMP, 'launch-'));
    try {
      add(`${name} cold`, await once(bin, runtime));
      add(`${name} warm`, await once(bin, runtime));
      await stopServer(runtime);
    } finally {
      rmSync(runtime, { recursive: true, force: true });
    }
  }
  log(`round ${round + 1}/${rounds}`);
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;
for (const [name, xs] of Object.entries(samples)) {
  process.stdout.write(
    `${name.padEnd(12)} p50 ${median(xs).toFixed(0).padStart(5)} ms  min ${Math.min(...xs)
      .toFixed(0)
      .padStart(5)} ms  n=${xs.length}\n`,
  );
}
