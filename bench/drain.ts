/**
 * The drain table (docs/design.md §2.1): a client writes the handshake and N query calls
 * (each reply ~20 KiB: 40 notes match) and ends its stdin, right behind them or 3 s later (by
 * then a client that does not read has 1 MiB of replies waiting, and the server has stopped
 * handing it requests), and then reads its replies, or never reads a byte while staying alive.
 * How long from that EOF until `qmd mcp`
 * (plain, or `--shared`'s relay) exits, its exit code, and what became of the N requests: the
 * replies the client took, the errors among them (refused: too many waiting, or shutting down),
 * and what the process said it dropped. The bound every exit must meet: the drain deadline plus
 * the two step bounds (5 s + 2 × 2 s); a process still alive 60 s after the EOF is killed and
 * counted as never exiting. 50 and 500 requests are the issue's table; 5,000 is where the build
 * before (which stopped reading stdin behind 1 MiB of unread replies) never saw the EOF.
 *
 *   npm run build && npx tsx bench/drain.ts [--bin dist/qmd.mjs] [--before OLD/dist/qmd.mjs] [--rounds 1]
 *
 * With `--before`, each cell is run against the older build too, interleaved with this one
 * (before, after, before, after …), on the same machine. Prints the table, writes
 * `bench/results-drain.md`.
 */
import { writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { DRAIN_NOTES, drainScript } from '../test/e2e/fixtures/drain.js';
import { cleanPlace, sharedServerPids } from '../test/e2e/fixtures/shared.js';
import { QMD_BIN, qmdEnv, runQmd, tempWorkspace } from '../test/support/qmd.js';
import { spawnProcess } from '../test/support/spawn.js';

const arg = (name: string): string | undefined => {
  const at = process.argv.indexOf(name);
  return at > 0 ? process.argv[at + 1] : undefined;
};
const BIN = arg('--bin') ?? QMD_BIN;
const BEFORE = arg('--before');
const ROUNDS = Number(arg('--rounds') ?? 1);
const RESULTS = fileURLToPath(new URL('./results-drain.md', import.meta.url));
const DRAIN_MS = 5000;
const STEP_MS = 2000;
const BOUND_MS = DRAIN_MS + 2 * STEP_MS;
const GIVE_UP_MS = 60_000;

interface Cell {
  build: 'after' | 'before';
  mode: 'plain' | 'shared';
  queries: number;
  reads: boolean;
  /** When the client ends its stdin, after writing the requests. */
  eofAfterMs: number;
}

interface Outcome {
  exitMs: number | null;
  code: number | null;
  signal: string | null;
  /** Replies to the N queries the client took (reads only), and the errors among them. */
  answered: number;
  refused: number;
  /** What the process said it dropped, if anything. */
  said: string;
}

async function run(cell: Cell, env: NodeJS.ProcessEnv): Promise<Outcome> {
  const bin = cell.build === 'before' ? BEFORE! : BIN;
  const p = spawnProcess(process.execPath, [bin, 'mcp', ...(cell.mode === 'shared' ? ['--shared'] : [])], {
    env,
    keepStdout: false,
  });
  let answered = 0;
  let refused = 0;
  let partial = '';
  if (cell.reads) {
    p.child.stdout?.on('data', (chunk: Buffer) => {
      const parts = (partial + chunk.toString()).split('\n');
      partial = parts.pop() ?? '';
      for (const line of parts) {
        const message = JSON.parse(line) as { id?: number; error?: unknown };
        if (typeof message.id !== 'number' || message.id === 0) continue;
        answered++;
        if (message.error !== undefined) refused++;
      }
    });
  } else p.child.stdout?.pause();
  // Everything, then the EOF: right behind it, or once replies have backed up.
  p.child.stdin?.write(drainScript(cell.queries, 'drain'));
  if (cell.eofAfterMs > 0) await new Promise((resolve) => setTimeout(resolve, cell.eofAfterMs));
  const ended = performance.now();
  p.child.stdin?.end();
  const timer = setTimeout(() => p.kill(), GIVE_UP_MS);
  const exit = await p.exited;
  clearTimeout(timer);
  const exitMs = exit.signal === 'SIGKILL' ? null : Math.round(performance.now() - ended);
  p.child.stdout?.destroy();
  const said = (p.stderr().match(/QMD Warning: ((dropped|\d+ requests? (it|the client) sent)[^\n]*)/) ?? [])[1] ?? '';
  if (exit.code !== 0 && exit.signal === null)
    console.log(`  exit ${exit.code}; its stderr ended:\n  ${p.stderr().trim().split('\n').slice(-4).join('\n  ')}`);
  return { exitMs, code: exit.code, signal: exit.signal, answered, refused, said };
}

const ws = tempWorkspace(DRAIN_NOTES);
const rows: Array<Cell & Outcome> = [];
try {
  const env = qmdEnv(ws.index, { QMD_SHARED_IDLE_MS: '600000' });
  const added = await runQmd(['collection', 'add', ws.notesDir, '--name', 'notes'], env);
  if (added.code !== 0) throw new Error(added.stderr);
  const builds: Array<Cell['build']> = BEFORE === undefined ? ['after'] : ['before', 'after'];
  for (let round = 0; round < ROUNDS; round++)
    for (const eofAfterMs of [0, 3000])
      for (const mode of ['plain', 'shared'] as const)
        for (const queries of [50, 500, 5000])
          for (const reads of [true, false])
            for (const build of builds) {
              const cell: Cell = { build, mode, queries, reads, eofAfterMs };
              const outcome = await run(cell, env);
              rows.push({ ...cell, ...outcome });
              const exit = outcome.exitMs === null ? 'never (killed at 60 s)' : `${outcome.exitMs} ms`;
              console.log(
                `${build} ${mode} ${queries} ${reads ? 'reads' : 'never reads'}: exit ${exit}, code ${outcome.code}`,
              );
              // A shared server left by one build must not serve the next cell's relay.
              for (const pid of sharedServerPids(ws.index)) process.kill(pid, 'SIGKILL');
            }
} finally {
  for (const pid of sharedServerPids(ws.index)) process.kill(pid, 'SIGKILL');
  cleanPlace(ws.index);
  ws.cleanup();
}

const header =
  '| EOF | build | mode | requests | client | EOF → exit | within 9 s | exit | replies taken (errors) | what it said it dropped |\n|---|---|---|---|---|---|---|---|---|---|';
const lines = rows.map((r) => {
  const exit = r.exitMs === null ? 'never (killed at 60 s)' : `${r.exitMs.toLocaleString('en-US')} ms`;
  const within = r.exitMs !== null && r.exitMs <= BOUND_MS ? 'yes' : '**no**';
  const code = r.signal === null ? String(r.code) : r.signal;
  const taken = r.reads ? `${r.answered} (${r.refused})` : '—';
  const eof = r.eofAfterMs === 0 ? 'at once' : `after ${r.eofAfterMs / 1000} s`;
  return `| ${eof} | ${r.build} | ${r.mode} | ${r.queries} | ${r.reads ? 'reads' : 'never reads'} | ${exit} | ${within} | ${code} | ${taken} | ${r.said || '—'} |`;
});
const table = [header, ...lines].join('\n');
console.log(`\n${table}`);
const worst = Math.max(...rows.filter((r) => r.build === 'after').map((r) => r.exitMs ?? Number.POSITIVE_INFINITY));
writeFileSync(
  RESULTS,
  `# The drain table\n\n\`npx tsx bench/drain.ts${BEFORE === undefined ? '' : ' --before OLD/dist/qmd.mjs'}\` on Node ${process.versions.node}, ${cpus().length} cores, load ${loadavg()[0]!.toFixed(1)} at the end (this machine is shared: times carry its load). A client writes the handshake and N query calls (~20 KiB of reply each), ends stdin right behind them or 3 s later, then reads its replies or never reads while staying alive. The bound: drain deadline ${DRAIN_MS / 1000} s + two steps of ${STEP_MS / 1000} s = ${BOUND_MS / 1000} s after the EOF. Worst exit of this build: ${worst.toLocaleString('en-US')} ms.\n\n${table}\n`,
);
