import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { sharedPaths } from '../../src/relay/paths.js';
import { floorServer, qmdFixture, qmdServer, sdkServer } from '../lib/fixture.js';
import { interleave } from '../lib/interleave.js';
import { latencyTable, ratioGoal } from '../lib/latency.js';
import { TMP } from '../lib/paths.js';
import { pssKb, statusKb } from '../lib/proc.js';
import { pause, RpcChild, type ServerCommand } from '../lib/rpc-child.js';
import type { Benchmark, BenchmarkReport, Cell, Goal, Table } from '../lib/types.js';

const RELAY = 'qmd mcp --shared (relay, warm server)';
const PLAIN = 'qmd mcp';
const SDK = 'bare SDK server';
const FLOOR = 'floor (bare node)';
const SETTLE_MS = 250;

/**
 * `qmd mcp --shared` against one server per client: what a client pays to start (spawn →
 * `initialize` answered, through a relay to an already warm shared server), what leaving costs
 * (stdin closed → the relay's exit), and memory for N clients (N relays + one server, against
 * N plain servers), all interleaved in one run.
 */
export const sharedBenchmark: Benchmark = {
  name: 'shared',
  title: 'qmd mcp --shared: start-up, exit and RSS per client',
  async run({ quick, log }): Promise<BenchmarkReport> {
    const fixture = await qmdFixture(quick, log);
    const runtime = mkdtempSync(join(TMP, 'shared-run-'));
    // The shared server stays warm for the whole run (it would leave after 10 minutes alone).
    const sharedEnv = { XDG_RUNTIME_DIR: runtime, QMD_SHARED_IDLE_MS: '600000' };
    const relay: ServerCommand = qmdServer(fixture.index, { ...sharedEnv, QMD_SHARED: '1' });
    const plain = qmdServer(fixture.index);
    const record = sharedPaths(fixture.index, { XDG_RUNTIME_DIR: runtime }).record;
    try {
      // Warm it: the first relay starts the server; it stays after that relay leaves.
      const first = new RpcChild(relay);
      await first.initialize();
      first.endStdin();
      await first.waitExit(15_000);
      const serverPid = (JSON.parse(readFileSync(record, 'utf8')) as { pid: number }).pid;

      const contenders = [
        { name: RELAY, server: relay },
        { name: PLAIN, server: plain },
        { name: SDK, server: sdkServer() },
        { name: FLOOR, server: floorServer() },
      ];
      const rounds = quick ? 2 : 30;
      const startFailures = new Map<string, number>();
      const exitSamples = new Map<string, number[]>(contenders.map((c) => [c.name, []]));
      const starts = await interleave(
        contenders,
        { rounds, warmup: quick ? 0 : 1, onRound: (r, n) => log(`shared: round ${r}/${n}`) },
        async (contender) => {
          const peer = new RpcChild(contender.server);
          try {
            const reply = await peer.initialize();
            const closedAt = performance.now();
            peer.endStdin();
            const exit = await peer.waitExit(15_000);
            exitSamples.get(contender.name)?.push(exit.at - closedAt);
            return reply.at - peer.spawnedAt;
          } catch (error) {
            startFailures.set(contender.name, (startFailures.get(contender.name) ?? 0) + 1);
            log(`shared ${contender.name}: ${(error as Error).message.split('\n')[0]}`);
            peer.kill();
            return [];
          }
        },
      );
      const start = latencyTable(contenders, starts, {
        title: 'spawn → initialize answered (ms)',
        unit: 'ms',
        baseline: PLAIN,
        failures: startFailures,
      });
      const exits = latencyTable(contenders, exitSamples, {
        title: 'stdin closed → process exit (ms)',
        unit: 'ms',
        baseline: PLAIN,
      });

      const memory = await rssPerClients(quick ? [1, 2] : [1, 2, 5], relay, plain, serverPid, fixture.query);
      const goals: Goal[] = [
        ratioGoal(
          `relay spawn → initialize ÷ ${PLAIN} (p50)`,
          0.35,
          start.summaries.get(RELAY),
          start.summaries.get(PLAIN),
        ),
        ratioGoal(
          `relay stdin close → exit ÷ ${PLAIN} (p50)`,
          1.5,
          exits.summaries.get(RELAY),
          exits.summaries.get(PLAIN),
        ),
        {
          name: 'VmRSS each extra client costs, shared (a relay), MB',
          target: '≤ 50',
          measured: `${memory.perExtraShared.toFixed(1)} MB (plain: ${memory.perExtraPlain.toFixed(1)} MB; by PSS ${memory.perExtraSharedPss.toFixed(1)} vs ${memory.perExtraPlainPss.toFixed(1)} MB)`,
          met: memory.perExtraShared <= 50,
        },
      ];
      return {
        tables: [start.table, exits.table, memory.table],
        goals,
        notes: [
          `${rounds} interleaved rounds; qmd on a ${fixture.corpus.files}-note index. The relay's server was started once, before the rounds, and stays warm (QMD_SHARED_IDLE_MS=600000).`,
          'The floor is a bare node process that answers initialize: nothing starts faster. Since plain `qmd mcp` became a code-cached bundle, the floor itself is about 0.4× of it, so the relay is judged against the floor too: what it adds to node is its own cost.',
          'Each extra client costs its relay. VmRSS counts the pages of the node binary (about 41 MB, shared by every node process) in full in each; PSS splits them among the processes sharing them.',
          'RSS: every client initialized and ran one BM25 query, then idled 250 ms; shared = N relays + the one server, plain = N servers.',
        ],
      };
    } finally {
      try {
        const { pid } = JSON.parse(readFileSync(record, 'utf8')) as { pid: number };
        process.kill(pid, 'SIGTERM');
      } catch {
        // Already gone.
      }
      rmSync(runtime, { recursive: true, force: true });
    }
  },
};

async function rssPerClients(
  counts: number[],
  relay: ServerCommand,
  plain: ServerCommand,
  serverPid: number,
  query: string,
) {
  const rows: Cell[][] = [];
  type Kind = 'shared' | 'plain';
  const totals: Record<Kind, { rss: Map<number, number>; pss: Map<number, number> }> = {
    shared: { rss: new Map(), pss: new Map() },
    plain: { rss: new Map(), pss: new Map() },
  };
  for (const n of counts) {
    for (const [kind, command] of [
      ['shared', relay],
      ['plain', plain],
    ] as const) {
      const peers: RpcChild[] = [];
      try {
        for (let i = 0; i < n; i++) {
          const peer = new RpcChild(command);
          await peer.initialize();
          await peer.callTool('query', { query });
          peers.push(peer);
        }
        await pause(SETTLE_MS);
        const pids = [...peers.map((p) => p.pid), ...(kind === 'shared' ? [serverPid] : [])];
        const sum = (read: (pid: number) => number | undefined) =>
          pids.reduce((t, pid) => t + (read(pid) ?? 0), 0) / 1024;
        totals[kind].rss.set(
          n,
          sum((pid) => statusKb(pid, 'VmRSS')),
        );
        totals[kind].pss.set(n, sum(pssKb));
      } finally {
        for (const p of peers) p.endStdin();
        await Promise.all(peers.map((p) => p.waitExit(15_000).catch(() => p.kill())));
      }
    }
    rows.push([
      `${n} client(s)`,
      totals.shared.rss.get(n) ?? '—',
      totals.plain.rss.get(n) ?? '—',
      totals.shared.pss.get(n) ?? '—',
      totals.plain.pss.get(n) ?? '—',
    ]);
  }
  const slope = (m: Map<number, number>) => {
    const [lo, hi] = [Math.min(...counts), Math.max(...counts)];
    return ((m.get(hi) ?? 0) - (m.get(lo) ?? 0)) / Math.max(1, hi - lo);
  };
  const table: Table = {
    title:
      'Memory of everything N clients need (MB = MiB): shared = relays + one server, plain = N servers. VmRSS counts the node binary in every process; PSS splits shared pages',
    columns: [
      { label: 'clients', unit: 'text' },
      { label: 'VmRSS shared', unit: 'MB' },
      { label: 'VmRSS plain', unit: 'MB' },
      { label: 'PSS shared', unit: 'MB' },
      { label: 'PSS plain', unit: 'MB' },
    ],
    rows,
  };
  return {
    table,
    perExtraShared: slope(totals.shared.rss),
    perExtraPlain: slope(totals.plain.rss),
    perExtraSharedPss: slope(totals.shared.pss),
    perExtraPlainPss: slope(totals.plain.pss),
  };
}
