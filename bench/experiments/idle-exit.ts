/**
 * `npx tsx bench/experiments/idle-exit.ts [--rounds N] [--out FILE] NAME=path/to/qmd.mjs[,VAR=VALUE…] ...`:
 * stdin close → exit of `qmd mcp`, idle (initialized, nothing asked), against the bare SDK server,
 * for several builds or environments side by side, interleaved round by round (issue 34 item 8:
 * the idle exit, 1.01× the SDK's before the query worker, 1.27–1.34× after). The same measure
 * as `npm run bench -- exit` (from the parent's `end()` to the child's `exit` event), with only
 * the contenders that differ, so more rounds fit. Each build is a `dist/qmd.mjs` (a copy of an
 * older build works from anywhere its `node_modules` resolve). Each build gets its own cache home:
 * sharing one, builds drop each other's code cache (src/cli/code-cache.ts keeps one build's), so
 * every start compiles and every exit writes a cache. Prints a table; `--out FILE` writes it.
 */
import { writeFileSync } from 'node:fs';
import { qmdEnv, tempWorkspace } from '../../test/support/qmd.js';
import { spawnProcess } from '../../test/support/spawn.js';
import { sdkServer } from '../lib/fixture.js';
import { interleave } from '../lib/interleave.js';
import { loadAverage } from '../lib/machine.js';
import { pause } from '../lib/rpc-child.js';
import { type ServerContender, startSession } from '../lib/sessions.js';
import { summarize } from '../lib/stats.js';

const args = process.argv.slice(2);
const rounds = Number(args[args.indexOf('--rounds') + 1] ?? 30);
const out = args.includes('--out') ? args[args.indexOf('--out') + 1] : undefined;
const builds = args
  .filter((a) => /^[\w-]+=/.test(a))
  .map((a) => {
    const [name, spec] = [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)];
    const [bin, ...vars] = spec.split(',');
    return {
      name,
      bin: bin!,
      env: Object.fromEntries(vars.map((v) => [v.slice(0, v.indexOf('=')), v.slice(v.indexOf('=') + 1)])),
    };
  });
if (builds.length === 0) throw new Error('usage: idle-exit.ts [--rounds N] [--out FILE] NAME=BIN[,VAR=VALUE…] ...');

const loadStart = loadAverage();
const ws = tempWorkspace({
  'a.md': '# A\n\nSourdough needs a starter.\n',
  'b.md': '# B\n\nA server must never outlive its client.\n',
});
try {
  // Each build indexes the notes itself: an older one may not read a newer schema.
  const indexes = new Map<string, string>();
  for (const { name, bin } of builds) {
    const index = `${ws.dir}/${name}.sqlite`;
    const p = spawnProcess(process.execPath, [bin, 'collection', 'add', ws.notesDir, '--name', 'notes'], {
      env: qmdEnv(index),
    });
    p.child.stdin?.end();
    const done = await p.closed;
    if (done.code !== 0) throw new Error(p.stderr());
    indexes.set(name, index);
  }
  const SDK = 'bare SDK server';
  const contenders: ServerContender[] = [
    { name: SDK, server: sdkServer() },
    // A cache home each: builds sharing one drop each other's code cache (src/cli/code-cache.ts
    // keeps one build's), and every start would compile and every exit write a new cache.
    ...builds.map(({ name, bin, env }) => ({
      name,
      server: {
        command: process.execPath,
        args: [bin, 'mcp'],
        env: qmdEnv(indexes.get(name)!, { XDG_CACHE_HOME: `${ws.dir}/cache-${name}`, ...env }),
      },
    })),
  ];
  const teardown = new Map<string, number[]>(contenders.map((c) => [c.name, []]));
  const samples = await interleave(
    contenders,
    { rounds, warmup: 2, onRound: (r, n) => process.stderr.write(`round ${r}/${n}\n`) },
    async (contender) => {
      const peer = await startSession(contender);
      try {
        await pause(50);
        const sent = peer.endStdin();
        const exit = await peer.waitExit(15_000);
        const own = /Shutdown complete in ([\d.]+) ms/.exec(peer.stderr())?.[1];
        if (own !== undefined) teardown.get(contender.name)?.push(Number(own));
        return exit.at - sent;
      } finally {
        peer.kill();
      }
    },
  );
  const sdk = summarize(samples.get(SDK) ?? []);
  const lines = [
    `Idle stdin close → exit, ${rounds} interleaved rounds, Node ${process.version}, load ${loadStart} → ${loadAverage()}`,
    '',
    '| contender | n | p50 (ms) | p90 (ms) | p50 ÷ SDK | teardown p50 (ms) |',
    '|:---|---:|---:|---:|---:|---:|',
    ...contenders.map((c) => {
      const s = summarize(samples.get(c.name) ?? []);
      const own = teardown.get(c.name) ?? [];
      return `| ${c.name} | ${s.n} | ${s.p50.toFixed(2)} | ${s.p90.toFixed(2)} | ${(s.p50 / sdk.p50).toFixed(2)}× | ${own.length > 0 ? summarize(own).p50.toFixed(2) : '—'} |`;
    }),
  ];
  console.log(lines.join('\n'));
  if (out !== undefined) writeFileSync(out, `${lines.join('\n')}\n`);
} finally {
  ws.cleanup();
}
