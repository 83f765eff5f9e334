import { performance } from 'node:perf_hooks';
import { Client, InMemoryTransport } from '@modelcontextprotocol/client';
import { openStore } from '../../src/core/index.js';
import type { Store } from '../../src/core/types.js';
import { noFailpoints } from '../../src/failpoints.js';
import { createInflightGate, type HandlerGate } from '../../src/lifecycle/gate.js';
import { silentLog } from '../../src/log.js';
import { createMcpServer } from '../../src/mcp/server.js';
import { qmdFixture } from '../lib/fixture.js';
import { type Contender, interleave } from '../lib/interleave.js';
import { latencyTable } from '../lib/latency.js';
import { benchLifecycle } from '../lib/lifecycle.js';
import { ratio, summarize } from '../lib/stats.js';
import type { Benchmark, BenchmarkReport, Goal, Table } from '../lib/types.js';

/**
 * The same server without the lifecycle: each handler runs at once with the request's own
 * signal. No count, no events, no abort fan-out — what `createMcpServer` would be without a gate.
 */
const passthroughGate: HandlerGate = {
  async run(handler, options) {
    return handler(options?.signal ?? new AbortController().signal);
  },
};

interface Side extends Contender {
  client: Client;
  close(): Promise<void>;
}

async function connect(name: string, store: Store, gate: HandlerGate, onClose = async () => {}): Promise<Side> {
  const server = createMcpServer({ store, gate, failpoints: noFailpoints, log: silentLog, version: '0.0.0-bench' });
  const client = new Client({ name: 'qmd-bench', version: '0.0.0' });
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
  await server.connect(serverTransport);
  await client.connect(clientTransport);
  // As real clients do: listing caches the output schemas, and every reply is validated.
  await client.listTools();
  return {
    name,
    client,
    async close() {
      await client.close();
      await server.close();
      await onClose();
    },
  };
}

const WITH = 'with gate + lifecycle actor';
const GATE_ONLY = 'gate only (no actor)';
const WITHOUT = 'without (handlers called directly)';

/**
 * Benchmark 4: what the lifecycle costs per tool call. Three servers on one store, over the
 * SDK's `InMemoryTransport`: one built with a started lifecycle's gate (unobserved, as in
 * production: the gate counts while connected and sends the actor nothing until a trigger),
 * one with a bare gate and one with a pass-through gate. A sample is `calls` sequential calls
 * of one tool; samples alternate between the servers.
 */
export const toolCallBenchmark: Benchmark = {
  name: 'tool-call',
  title: 'Lifecycle cost per tool call (InMemoryTransport)',
  async run({ quick, log }): Promise<BenchmarkReport> {
    const fixture = await qmdFixture(quick, log);
    const store = openStore(fixture.index, { readonly: true });
    const lifecycle = benchLifecycle();
    const sides = [
      await connect(WITH, store, lifecycle.gate, async () => {
        await lifecycle.shutdown('benchmark done');
      }),
      await connect(GATE_ONLY, store, createInflightGate()),
      await connect(WITHOUT, store, passthroughGate),
    ];
    const calls = quick ? 10 : 200;
    const rounds = quick ? 2 : 30;
    const tools = [
      { tool: 'query', args: { query: fixture.query } },
      { tool: 'get', args: { file: 'notes/area-00/topic-00/note-00000.md' } },
    ];
    const tables: Table[] = [];
    const goals: Goal[] = [];
    try {
      for (const { tool, args } of tools) {
        const samples = await interleave(
          sides,
          { rounds, warmup: quick ? 0 : 3, onRound: (r, n) => log(`tool-call (${tool}): round ${r}/${n}`) },
          async (side) => {
            const started = performance.now();
            for (let i = 0; i < calls; i++) {
              const result = await side.client.callTool({ name: tool, arguments: args });
              if (result.isError) throw new Error(`${tool} failed: ${JSON.stringify(result.content)}`);
            }
            return ((performance.now() - started) * 1000) / calls;
          },
        );
        // Drift between rounds (other processes, GC) moves all three alike: the ratio within a
        // round, then its median over rounds, is steadier than a ratio of p50s.
        const without = samples.get(WITHOUT) ?? [];
        const paired = (name: string): number => {
          const mine = samples.get(name) ?? [];
          return summarize(mine.map((value, i) => ratio(value, without[i]))).p50;
        };
        const { table, summaries } = latencyTable(sides, samples, {
          title: `\`${tool}\` ${JSON.stringify(args)}: µs per call (each sample = ${calls} sequential calls)`,
          unit: 'us',
          extra: {
            columns: [
              { label: 'calls/s at p50', unit: 'per-s' },
              { label: 'p50 vs without', unit: 'pct' },
              { label: 'paired vs without', unit: 'pct' },
            ],
            cells: (name, summaries) => {
              const p50 = summaries.get(name)?.p50 ?? Number.NaN;
              const base = summaries.get(WITHOUT)?.p50;
              return [1e6 / p50, (ratio(p50, base) - 1) * 100, (paired(name) - 1) * 100];
            },
          },
        });
        tables.push(table);
        if (tool === 'query') {
          const slower = (paired(WITH) - 1) * 100;
          const extra = (summaries.get(WITH)?.p50 ?? Number.NaN) - (summaries.get(WITHOUT)?.p50 ?? Number.NaN);
          goals.push({
            name: '`query` with the lifecycle vs without (median of per-round ratios)',
            target: '≤ 3% slower',
            measured: Number.isFinite(slower) ? `${slower.toFixed(1)}% (p50s differ by ${extra.toFixed(0)} µs)` : 'n/a',
            met: Number.isFinite(slower) ? slower <= 3 : null,
          });
        }
      }
      // The same three gates with nothing around them: what the lifecycle adds to a call, in µs.
      const gates = [
        { name: WITH, gate: lifecycle.gate },
        { name: GATE_ONLY, gate: createInflightGate() },
        { name: WITHOUT, gate: passthroughGate },
      ];
      const runs = quick ? 100 : 20_000;
      const bare = await interleave(gates, { rounds, warmup: quick ? 0 : 3 }, async ({ gate }) => {
        const signal = new AbortController().signal;
        const started = performance.now();
        for (let i = 0; i < runs; i++) await gate.run(async () => i, { signal });
        return ((performance.now() - started) * 1000) / runs;
      });
      tables.push(
        latencyTable(gates, bare, {
          title: `\`gate.run()\` of an empty handler: µs per call (each sample = ${runs.toLocaleString('en-US')} calls)`,
          unit: 'us',
        }).table,
      );
    } finally {
      for (const side of sides) await side.close();
      await store.close();
    }
    return {
      tables,
      goals,
      notes: [
        `${rounds} interleaved samples per server, ${calls} calls each; one read-only store on the ${fixture.corpus.files}-note index.`,
        '"gate only" is the in-flight gate with no lifecycle behind it: it splits the cost between the gate and the actor.',
        "`get` (one small document) is there to show the overhead with less work around it; the goal is on `query`. The last table is the gates alone, with an empty handler: the lifecycle's absolute cost per call.",
        '"paired" is the median over rounds of (this server ÷ without) within the same round; the goal uses it. A negative difference means the two are within noise of each other.',
      ],
    };
  },
};
