import { NAIVE_BANNER } from '../contenders/naive-dispose.js';
import { naiveServer, qmdFixture, qmdServer } from '../lib/fixture.js';
import { pool } from '../lib/interleave.js';
import { RpcChild } from '../lib/rpc-child.js';
import { describeExit, tally } from '../lib/sessions.js';
import type { Benchmark, BenchmarkReport, Cell, Goal } from '../lib/types.js';

type Mode = 'safe' | 'naive';

interface Outcome {
  mode: Mode;
  exit?: string;
  crashed: boolean;
  /** The server said a call was running natively when the store closed (`QMD_DEBUG_EMBED`). */
  runningAtDispose: boolean;
  /** The naive contender ran (its banner was on stderr). */
  hookSeen: boolean;
  error?: string;
}

const ENTERING = 'QMD debug: embedding call entering llama.cpp';
/**
 * Hundreds of tokens (the tool takes up to 2,000 characters), so the native call lasts long
 * enough for the close to land while it runs.
 */
const LONG_QUERY = Array.from({ length: 120 }, (_, i) => `note${i % 37} dispose`)
  .join(' ')
  .slice(0, 1900);

const count = (text: string, needle: string): number => text.split(needle).length - 1;

/** Resolves once `peer`'s stderr holds `needle` more than `already` times; rejects after `ms` or once it is gone. */
async function untilStderr(peer: RpcChild, needle: string, already: number, ms: number): Promise<void> {
  await peer.p.waitFor(() => count(peer.p.stderr(), needle) > already || undefined, `"${needle}" on stderr`, ms);
}

/**
 * One sample: a `qmd mcp` with the tiny model warm (one query answered), then a long query;
 * the moment the server says the embedding enters llama.cpp, stdin is closed. Safe: teardown
 * as shipped (the embedder's `dispose()` waits for the running call). Naive: the contender
 * `bench/contenders/naive-server.ts`, the same server whose embedder frees context → model →
 * llama without waiting.
 */
async function sample(mode: Mode, server: ReturnType<typeof qmdServer>): Promise<Outcome> {
  const peer = new RpcChild(server);
  const outcome: Outcome = { mode, crashed: false, runningAtDispose: false, hookSeen: false };
  try {
    await peer.initialize();
    await peer.callTool('query', { query: 'warm the model' }, 120_000);
    const before = count(peer.p.stderr(), ENTERING);
    peer.request('tools/call', { name: 'query', arguments: { query: LONG_QUERY } }, 120_000).catch(() => {});
    await untilStderr(peer, ENTERING, before, 20_000);
    peer.endStdin();
    const exit = await peer.waitExit(60_000);
    outcome.exit = describeExit(exit);
    outcome.crashed = exit.signal !== null || exit.code !== 0;
  } catch (error) {
    outcome.error = (error as Error).message.split('\n')[0];
  } finally {
    peer.kill();
  }
  const stderr = peer.stderr();
  outcome.runningAtDispose = /closing: [1-9]\d* embedding call\(s\) running natively/.test(stderr);
  outcome.hookSeen = stderr.includes(NAIVE_BANNER);
  return outcome;
}

/**
 * Benchmark 7: stdin closes while an embedding runs natively, with the shipped dispose order
 * against a naive one (docs/design.md §5: disposing under a running call segfaults about half
 * the time). Needs `qmd embed` and `QMD_DEBUG_EMBED=1` (to time the close); the naive order
 * is the contender `bench/contenders/naive-server.ts`. Reports "not available yet" without them.
 */
export const disposalBenchmark: Benchmark = {
  name: 'disposal',
  title: 'Disposal safety: stdin closed while an embedding runs natively',
  async run({ quick, log }): Promise<BenchmarkReport> {
    const fixture = await qmdFixture(quick, log);
    const columns = [
      { label: 'dispose order', unit: 'text' as const },
      { label: 'runs', unit: 'count' as const },
      { label: 'crashes', unit: 'count' as const },
      { label: 'call running at dispose', unit: 'count' as const },
      { label: 'exits', unit: 'text' as const },
      { label: 'failed to run', unit: 'count' as const },
    ];
    const title = 'stdin closed the moment an embedding enters llama.cpp (crash = killed by a signal or exit ≠ 0)';
    if ('skip' in fixture.embedded) {
      const why = fixture.embedded.skip;
      return {
        tables: [
          {
            title,
            columns,
            rows: (['safe', 'naive'] as const).map((m) => [m, 'not available yet', '—', '—', '—', '—']),
          },
        ],
        goals: [
          { name: 'crashes with the shipped dispose order', target: '0', measured: 'not available yet', met: null },
        ],
        notes: [`Not available yet: ${why}.`],
      };
    }
    const runs = quick ? 1 : 50;
    const base = { QMD_EMBED_MODEL: fixture.embedded.model, QMD_DEBUG_EMBED: '1' };
    const servers: Record<Mode, ReturnType<typeof qmdServer>> = {
      safe: qmdServer(fixture.embedded.index, base),
      naive: naiveServer(fixture.embedded.index, base),
    };
    // One of each first: a build without the hooks would otherwise spend a minute per run
    // waiting for a line that never comes.
    const probes = [await sample('safe', servers.safe), await sample('naive', servers.naive)];
    const debugMissing = probes.every((o) => o.error?.includes(ENTERING));
    const hookMissing = !(probes[1] as Outcome).hookSeen;
    const modes = (['safe', 'naive'] as const).filter((m) => !debugMissing && !(m === 'naive' && hookMissing));
    // Interleaved (safe, naive, safe, …) and two at a time: load lands on both alike.
    const plan = Array.from({ length: runs - 1 }, () => modes).flat();
    let done = 0;
    const outcomes = [
      ...probes.filter((o) => modes.includes(o.mode)),
      ...(await pool(plan, 2, async (mode) => {
        const outcome = await sample(mode, servers[mode]);
        if (outcome.error) log(`disposal (${mode}): ${outcome.error}`);
        if (++done % 10 === 0 || done === plan.length) log(`disposal: ${done}/${plan.length}`);
        return outcome;
      })),
    ];
    const rows = (['safe', 'naive'] as const).map((mode): Cell[] => {
      const label = mode === 'safe' ? 'safe (as shipped)' : 'naive (bench/contenders/naive-server.ts)';
      if (!modes.includes(mode)) return [label, 'not available yet', '—', '—', '—', '—'];
      const mine = outcomes.filter((o) => o.mode === mode && o.error === undefined);
      return [
        label,
        mine.length,
        mine.filter((o) => o.crashed).length,
        mine.filter((o) => o.runningAtDispose).length,
        tally(mine.map((o) => o.exit ?? '?')),
        outcomes.filter((o) => o.mode === mode && o.error !== undefined).length,
      ];
    });
    const safe = outcomes.filter((o) => o.mode === 'safe' && o.error === undefined);
    const crashes = safe.filter((o) => o.crashed).length;
    const goals: Goal[] = [
      {
        name: `crashes with the shipped dispose order (of ${safe.length})`,
        target: '0',
        measured: safe.length > 0 ? String(crashes) : 'n/a',
        met: safe.length > 0 ? crashes === 0 : null,
      },
    ];
    return {
      tables: [{ title, columns, rows }],
      goals,
      notes: [
        `${runs} runs per order, interleaved, 2 at a time. Each: the tiny model warmed by one query, then a ~${LONG_QUERY.length}-character query; stdin ends when \`QMD_DEBUG_EMBED\` says the call enters llama.cpp.`,
        '"call running at dispose" counts runs where the server reported a native call still running when the store closed.',
        ...(debugMissing ? [`Not available yet: this build prints no \`${ENTERING}\` (QMD_DEBUG_EMBED=1).`] : []),
        ...(hookMissing && !debugMissing
          ? [`Naive order: not available yet (the contender printed no \`${NAIVE_BANNER}\` banner).`]
          : []),
      ],
    };
  },
};
