import { qmdFixture } from '../lib/fixture.js';
import { interleave } from '../lib/interleave.js';
import { latencyTable, ratioGoal } from '../lib/latency.js';
import { RpcChild } from '../lib/rpc-child.js';
import {
  embeddingNote,
  FLOOR,
  PEER,
  peerNote,
  QMD_IDLE,
  QMD_MODEL,
  QMD_NO_CACHE,
  SDK,
  type ServerContender,
  serverContenders,
} from '../lib/sessions.js';
import type { Benchmark, BenchmarkReport } from '../lib/types.js';

/**
 * Benchmark 2: from just before `spawn()` to the `initialize` reply's line on the parent's
 * side. The request is written at once (the pipe holds it until the child reads), as a client
 * does. Everything a cold start costs is in it: node's own boot, module loading, opening the
 * index, building the server.
 */
export const startupBenchmark: Benchmark = {
  name: 'startup',
  title: 'spawn → initialize answered',
  async run({ quick, log }): Promise<BenchmarkReport> {
    const fixture = await qmdFixture(quick, log);
    const contenders = serverContenders(fixture, [FLOOR, SDK, QMD_IDLE, QMD_NO_CACHE, QMD_MODEL, PEER]);
    // 30, not 15: at 15 the p50 ratio moved between 1.20× and 1.52× from one full run to the next.
    const rounds = quick ? 2 : 30;
    const failures = new Map<string, number>();
    const samples = await interleave(
      contenders,
      { rounds, warmup: quick ? 0 : 1, onRound: (r, n) => log(`startup: round ${r}/${n}`) },
      async (contender: ServerContender) => {
        const peer = new RpcChild(contender.server);
        try {
          const reply = await peer.initialize();
          return reply.at - peer.spawnedAt;
        } catch (error) {
          failures.set(contender.name, (failures.get(contender.name) ?? 0) + 1);
          log(`startup ${contender.name}: ${(error as Error).message.split('\n')[0]}`);
          return [];
        } finally {
          peer.endStdin();
          await peer.waitExit(15_000).catch(() => {});
        }
      },
    );
    const { table, summaries } = latencyTable(contenders, samples, {
      title: 'spawn → initialize answered (ms)',
      unit: 'ms',
      baseline: SDK,
      floor: FLOOR,
      peer: PEER,
      failures,
    });
    const sdk = summaries.get(SDK);
    const skipped = (name: string) => contenders.find((c) => c.name === name)?.skip;
    return {
      tables: [table],
      // The start-up goal: at most the bare SDK server's time, and at most 0.7× the peer's.
      goals: [
        ratioGoal(`${QMD_IDLE} ÷ bare SDK (p50)`, 1.0, summaries.get(QMD_IDLE), sdk),
        ratioGoal(`${QMD_MODEL} ÷ bare SDK (p50)`, 1.0, summaries.get(QMD_MODEL), sdk, skipped(QMD_MODEL)),
        ratioGoal(`${QMD_IDLE} ÷ peer (p50)`, 0.7, summaries.get(QMD_IDLE), summaries.get(PEER), skipped(PEER)),
      ],
      notes: [
        `${rounds} interleaved rounds (rotating order), each a fresh process; qmd on a ${fixture.corpus.files}-note index.`,
        'qmd keeps its caches of compiled code in bench/.tmp/xdg-cache (`qmd mcp`: the V8 code cache of its script, src/cli/code-cache.ts; other commands: Node ≥ 22.1\'s compile cache), filled by the warm-up round at the latest. "no compile cache" sets NODE_DISABLE_COMPILE_CACHE=1: the ES modules with nothing cached, as a first start after an install or an upgrade.',
        '"model configured" sets QMD_EMBED_MODEL to the tiny test model: the model is loaded lazily, on the first query that needs it.',
        ...embeddingNote(fixture),
        ...peerNote(fixture),
      ],
    };
  },
};
