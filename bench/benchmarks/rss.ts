import { qmdFixture } from '../lib/fixture.js';
import { interleave } from '../lib/interleave.js';
import { latencyTable, ratioGoal } from '../lib/latency.js';
import { treeStatusKb } from '../lib/proc.js';
import { pause } from '../lib/rpc-child.js';
import {
  embeddingNote,
  FLOOR,
  PEER,
  peerNote,
  QMD_IDLE,
  QMD_QUERIED,
  QMD_WARM,
  SDK,
  type ServerContender,
  serverContenders,
  startSession,
} from '../lib/sessions.js';
import { summarize } from '../lib/stats.js';
import type { Benchmark, BenchmarkReport, Goal } from '../lib/types.js';

/** Idle this long after the handshake (and query) before reading: start-up garbage has had a chance to go. */
const SETTLE_MS = 250;

/** Idle VmRSS of `qmd mcp` before the bundle (README, Node 20): start-up work must not cost memory. */
const IDLE_BEFORE_MB = 78;

function idleGoal(p50: number | undefined): Goal {
  const target = `≤ ${IDLE_BEFORE_MB.toFixed(1)} MB`;
  const name = `${QMD_IDLE} (p50 VmRSS), no more than before the bundle`;
  if (p50 === undefined || !Number.isFinite(p50)) return { name, target, measured: 'not measured', met: null };
  return { name, target, measured: `${p50.toFixed(1)} MB`, met: p50 <= IDLE_BEFORE_MB };
}

/** Benchmark 3: VmRSS from `/proc/PID/status` of an idle server after `initialize` (and its query). */
export const rssBenchmark: Benchmark = {
  name: 'rss',
  title: 'Idle RSS after initialize',
  async run({ quick, log }): Promise<BenchmarkReport> {
    const fixture = await qmdFixture(quick, log);
    const contenders = serverContenders(fixture, [FLOOR, SDK, QMD_IDLE, QMD_QUERIED, QMD_WARM, PEER]);
    const rounds = quick ? 2 : 8;
    const failures = new Map<string, number>();
    const peaks = new Map<string, number[]>(contenders.map((c) => [c.name, []]));
    const samples = await interleave(
      contenders,
      { rounds, onRound: (r, n) => log(`rss: round ${r}/${n}`) },
      async (contender: ServerContender) => {
        let peer: Awaited<ReturnType<typeof startSession>> | undefined;
        try {
          peer = await startSession(contender);
          await pause(SETTLE_MS);
          const rss = treeStatusKb(peer.pid, 'VmRSS');
          const hwm = treeStatusKb(peer.pid, 'VmHWM');
          if (rss === undefined || hwm === undefined) throw new Error('the process is gone');
          peaks.get(contender.name)?.push(hwm / 1024);
          peer.endStdin();
          await peer.waitExit(15_000);
          return rss / 1024;
        } catch (error) {
          failures.set(contender.name, (failures.get(contender.name) ?? 0) + 1);
          log(`rss ${contender.name}: ${(error as Error).message.split('\n')[0]}`);
          return [];
        } finally {
          peer?.kill();
        }
      },
    );
    const { table, summaries } = latencyTable(contenders, samples, {
      title: 'VmRSS after initialize, idle (MB = MiB)',
      unit: 'MB',
      baseline: SDK,
      floor: FLOOR,
      peer: PEER,
      failures,
      extra: {
        columns: [{ label: 'VmHWM p50', unit: 'MB' }],
        cells: (name) => {
          const peak = peaks.get(name) ?? [];
          return [peak.length > 0 ? summarize(peak).p50 : '—'];
        },
      },
    });
    const sdk = summaries.get(SDK);
    return {
      tables: [table],
      // The goal is for an idle server (the "idle RSS after initialize"); the warm-model
      // row is what a loaded model adds and has no goal.
      goals: [
        ...[QMD_IDLE, QMD_QUERIED].map((name) =>
          ratioGoal(
            `${name} ÷ bare SDK (p50 VmRSS)`,
            1.3,
            summaries.get(name),
            sdk,
            contenders.find((c) => c.name === name)?.skip,
          ),
        ),
        idleGoal(summaries.get(QMD_IDLE)?.p50),
      ],
      notes: [
        `${rounds} interleaved rounds, each a fresh process; VmRSS read ${SETTLE_MS} ms after the handshake (and query). VmHWM is the peak so far.`,
        'The goal (≤ 1.3× the bare SDK server) is for the idle server, before and after a query; the warm-model row shows what a loaded model adds (node-llama-cpp, llama.cpp, the weights and an embedding context) and has no goal.',
        "RSS is summed over the process and its descendants: the peer's launcher and the server it re-spawns are both its cost.",
        ...embeddingNote(fixture),
        ...peerNote(fixture),
      ],
    };
  },
};
