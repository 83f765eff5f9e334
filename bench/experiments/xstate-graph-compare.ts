/**
 * `@xstate/graph` 3.0.4 against `xstate/graph` (xstate 5.33.3) on the graphs test/model/ walks
 * (issue 35): for each machine and traversal the generated tests use, the shortest paths, the
 * simple paths and the adjacency map from both, compared as counts, as sets (each path keyed by
 * its events and every state it passes, serialized as the traversal does) and in order.
 *
 *   npx tsx bench/experiments/xstate-graph-compare.ts
 */
import * as packaged from '@xstate/graph';
import type { AnyMachineSnapshot, AnyStateMachine, EventObject } from 'xstate';
import * as bundled from 'xstate/graph';
import { lifecycleMachine } from '../../machines/lifecycle.js';
import { sessionMachine } from '../../machines/session.js';
import { sharedServerMachine } from '../../machines/shared-server.js';
import type { Traversal } from '../../test/model/driver.js';
import { lifecycleTraversal } from '../../test/model/model.js';
import { serverTraversal, sessionTraversal } from '../../test/model/shared-model.js';

type Step = { event: EventObject; state: AnyMachineSnapshot };
type Path = { steps: Step[] };
type Graph = typeof bundled;

interface Case {
  name: string;
  machine: AnyStateMachine;
  traversal: Traversal<EventObject>;
  kind: 'shortest' | 'simple' | 'adjacency';
}

// The traversals of paths.test.ts, shared-paths.test.ts and session-paths.test.ts, and their
// mutation-testing variants (QMD_MUTATION=1: one payload variant, no simple paths).
const cases: Case[] = [];
for (const mutation of [false, true]) {
  const tag = mutation ? ' (mutation run)' : '';
  const lifecycleFull = lifecycleTraversal({
    maxInflight: 2,
    startsDuringTeardown: true,
    exitCodeVariants: !mutation,
    maxWrites: 1,
  });
  const serverFull = serverTraversal({ maxSessions: 2, exitCodeVariants: !mutation });
  const sessionFull = sessionTraversal({ maxInflight: 2, startsDuringTeardown: true });
  for (const [name, machine, full] of [
    ['lifecycle', lifecycleMachine, lifecycleFull],
    ['shared server', sharedServerMachine, serverFull],
    ['session', sessionMachine, sessionFull],
  ] as const) {
    if (mutation && name === 'session') continue; // the session's traversal has no mutation variant
    const traversal = full as unknown as Traversal<EventObject>;
    cases.push({ name: `${name}${tag}`, machine, traversal, kind: 'shortest' });
    cases.push({ name: `${name}${tag}`, machine, traversal, kind: 'adjacency' });
  }
  if (mutation) continue;
  cases.push({
    name: 'lifecycle',
    machine: lifecycleMachine,
    traversal: lifecycleTraversal({
      maxInflight: 2,
      startsDuringTeardown: false,
      exitCodeVariants: false,
      maxWrites: 0,
    }) as unknown as Traversal<EventObject>,
    kind: 'simple',
  });
  cases.push({
    name: 'shared server',
    machine: sharedServerMachine,
    traversal: serverTraversal({ maxSessions: 2, exitCodeVariants: false }) as unknown as Traversal<EventObject>,
    kind: 'simple',
  });
  cases.push({
    name: 'session',
    machine: sessionMachine,
    traversal: sessionTraversal({ maxInflight: 2, startsDuringTeardown: false }) as unknown as Traversal<EventObject>,
    kind: 'simple',
  });
}

function pathKeys(paths: Path[], serialize: (s: AnyMachineSnapshot) => string): string[] {
  return paths.map((p) => p.steps.map((s) => `${JSON.stringify(s.event)}→${serialize(s.state)}`).join(' | '));
}

function adjacencyKeys(graph: Graph, c: Case): string[] {
  const map = graph.getAdjacencyMap(c.machine, c.traversal as never) as Record<
    string,
    { state: AnyMachineSnapshot; transitions: Record<string, Step> }
  >;
  return Object.entries(map).flatMap(([from, vertex]) => [
    `vertex ${from} = ${c.traversal.serializeState(vertex.state)}`,
    ...Object.entries(vertex.transitions).map(
      ([key, t]) => `edge ${from} ${key} ${JSON.stringify(t.event)} → ${c.traversal.serializeState(t.state)}`,
    ),
  ]);
}

function run(graph: Graph, c: Case): { keys: string[]; ms: number } {
  const started = performance.now();
  const keys =
    c.kind === 'adjacency'
      ? adjacencyKeys(graph, c)
      : pathKeys(
          (c.kind === 'shortest'
            ? graph.getShortestPaths(c.machine, c.traversal as never)
            : graph.getSimplePaths(c.machine, c.traversal as never)) as unknown as Path[],
          c.traversal.serializeState,
        );
  return { keys, ms: performance.now() - started };
}

const rows: string[] = [];
let differ = 0;
for (const c of cases) {
  const a = run(bundled as Graph, c);
  const b = run(packaged as unknown as Graph, c);
  const setA = new Set(a.keys);
  const setB = new Set(b.keys);
  const onlyA = [...setA].filter((k) => !setB.has(k)).length;
  const onlyB = [...setB].filter((k) => !setA.has(k)).length;
  const sameOrder = a.keys.length === b.keys.length && a.keys.every((k, i) => k === b.keys[i]);
  if (onlyA + onlyB > 0 || a.keys.length !== b.keys.length) differ++;
  rows.push(
    `| ${c.name} | ${c.kind} | ${a.keys.length} | ${b.keys.length} | ${onlyA} | ${onlyB} | ${sameOrder ? 'yes' : 'no'} | ${a.ms.toFixed(0)} | ${b.ms.toFixed(0)} |`,
  );
  process.stderr.write(`${rows.at(-1)}\n`);
}
console.log(
  '| machine | traversal | xstate/graph | @xstate/graph | only in xstate/graph | only in @xstate/graph | same order | ms (xstate/graph) | ms (@xstate/graph) |',
);
console.log('| --- | --- | ---: | ---: | ---: | ---: | --- | ---: | ---: |');
for (const row of rows) console.log(row);
console.log(
  `\n${differ === 0 ? 'Identical' : `${differ} cases differ`} (${cases.length} cases; counts are paths, or vertices + edges for the adjacency map).`,
);
