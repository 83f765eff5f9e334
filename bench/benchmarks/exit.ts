import { qmdFixture } from '../lib/fixture.js';
import { interleave } from '../lib/interleave.js';
import { latencyTable, ratioGoal } from '../lib/latency.js';
import { pause } from '../lib/rpc-child.js';
import {
  describeExit,
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
  tally,
} from '../lib/sessions.js';
import { summarize } from '../lib/stats.js';
import type { Benchmark, BenchmarkReport, Cell, Goal, Table } from '../lib/types.js';

/** After the handshake (and query), the server is left alone this long before the trigger: "idle". */
const SETTLE_MS = 50;

const TRIGGERS = [
  { name: 'stdin close', label: 'stdin close → exit' },
  { name: 'SIGTERM', label: 'SIGTERM → exit' },
] as const;

/**
 * Benchmark 1: from the moment the parent ends the child's stdin (or sends SIGTERM) to the
 * child's `exit` event, both observed in the parent. Ours runs its whole teardown (close the
 * transport, drain, close the store with a WAL checkpoint); the bare SDK server runs none and
 * leaves when its loop drains; the floor loads nothing at all.
 */
export const exitBenchmark: Benchmark = {
  name: 'exit',
  title: 'stdin close → exit, SIGTERM → exit',
  async run({ quick, log }): Promise<BenchmarkReport> {
    const fixture = await qmdFixture(quick, log);
    const all = serverContenders(fixture, [FLOOR, SDK, QMD_IDLE, QMD_QUERIED, QMD_WARM, PEER]);
    const rounds = quick ? 1 : 15;
    const tables: Table[] = [];
    const goals: Goal[] = [];
    for (const trigger of TRIGGERS) {
      // The peer's launcher does not forward SIGTERM (lifecycle.md §3): its server would be orphaned.
      const contenders = all.map((c) =>
        trigger.name === 'SIGTERM' && c.name === PEER && c.skip === undefined
          ? { ...c, skip: 'its launcher does not forward SIGTERM: not measured' }
          : c,
      );
      const failures = new Map<string, number>();
      const exits = new Map<string, string[]>(contenders.map((c) => [c.name, []]));
      const teardowns = new Map<string, number[]>(contenders.map((c) => [c.name, []]));
      const toDone = new Map<string, number[]>(contenders.map((c) => [c.name, []]));
      const afterDone = new Map<string, number[]>(contenders.map((c) => [c.name, []]));
      const samples = await interleave(
        contenders,
        { rounds, warmup: quick ? 0 : 1, onRound: (r, n) => log(`exit (${trigger.name}): round ${r}/${n}`) },
        async (contender: ServerContender) => {
          let peer: Awaited<ReturnType<typeof startSession>> | undefined;
          try {
            peer = await startSession(contender);
            await pause(SETTLE_MS);
            const sent = trigger.name === 'SIGTERM' ? peer.signal('SIGTERM') : peer.endStdin();
            const exit = await peer.waitExit(15_000);
            exits.get(contender.name)?.push(describeExit(exit));
            // qmd's own account of its teardown (first trigger to `done`); the rest is getting there and leaving.
            const own = /Shutdown complete in ([\d.]+) ms/.exec(peer.stderr())?.[1];
            if (own !== undefined) teardowns.get(contender.name)?.push(Number(own));
            // Seen from here: trigger → the "Shutdown complete" line arrives → the exit event.
            const doneAt = peer.stderrSeenAt('Shutdown complete');
            if (doneAt !== undefined) {
              toDone.get(contender.name)?.push(doneAt - sent);
              afterDone.get(contender.name)?.push(exit.at - doneAt);
            }
            return exit.at - sent;
          } catch (error) {
            failures.set(contender.name, (failures.get(contender.name) ?? 0) + 1);
            log(`exit (${trigger.name}) ${contender.name}: ${(error as Error).message.split('\n')[0]}`);
            return [];
          } finally {
            peer?.kill();
          }
        },
      );
      const { table, summaries } = latencyTable(contenders, samples, {
        title: `${trigger.label} (ms, from the parent's end()/kill() to the child's exit event)`,
        unit: 'ms',
        baseline: SDK,
        floor: FLOOR,
        peer: PEER,
        failures,
        extra: {
          columns: [
            { label: 'teardown p50', unit: 'ms' },
            { label: 'to "complete" p50', unit: 'ms' },
            { label: 'then exit p50', unit: 'ms' },
            { label: 'exits', unit: 'text' },
          ],
          cells: (name) => [
            ...[teardowns, toDone, afterDone].map((m): Cell => {
              const values = m.get(name) ?? [];
              return values.length > 0 ? summarize(values).p50 : '—';
            }),
            tally(exits.get(name) ?? []),
          ],
        },
      });
      tables.push(table);
      const sdk = summaries.get(SDK);
      for (const name of [QMD_IDLE, QMD_QUERIED, QMD_WARM]) {
        const skip = contenders.find((c) => c.name === name)?.skip;
        goals.push(ratioGoal(`${trigger.label}: ${name} ÷ bare SDK (p50)`, 1.5, summaries.get(name), sdk, skip));
      }
    }
    return {
      tables,
      goals,
      notes: [
        `${rounds} interleaved rounds per trigger (rotating order), each a fresh process; ${SETTLE_MS} ms idle before the trigger.`,
        `qmd mcp runs on a ${fixture.corpus.files}-note index; "after a query" asks \`${fixture.query}\` first.`,
        'The floor and the bare SDK server die of SIGTERM by default (no handler); qmd runs its teardown and exits 0.',
        'Where qmd\'s time goes: "teardown" is what it reports itself (`Shutdown complete in N ms`, from the breadcrumb to `done`); "to complete" is from the trigger to that line reaching the parent (noticing the trigger + teardown + the pipe); "then exit" from that line to the exit event (the event loop draining, node and its native modules leaving).',
        ...embeddingNote(fixture),
        ...peerNote(fixture),
      ],
    };
  },
};
