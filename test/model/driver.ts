/**
 * The one driver of the generated tests: given a machine and how its world is modelled (the
 * traversal: input, what makes two snapshots one state, the events offered), how to replay a
 * path against the real host, what the world can do that the machine ignores and how to probe
 * it, it registers the same tests for every machine: the paths are counted and reach every
 * state; every shortest path, every transition no shortest path takes and every simple path is
 * replayed; the end of every shortest path is probed with what the machine ignores; the
 * replays must take every state and transition the machine defines. The lifecycle
 * (./paths.test.ts), the shared server (./shared-paths.test.ts) and the session
 * (./session-paths.test.ts) each give their own inputs, host and contract oracle; the oracle
 * judges inside `replay` and `probe`. The cheap cut for test/mutants/ is `brokenGuarantee`.
 *
 * Where the families really differ, it is a parameter: the lifecycle alone replays its
 * shortest paths a second time unobserved (its host counts handlers in the gate when nothing
 * inspects it; the shared host has no such path), and the simple paths use smaller bounds
 * than the shortest ones, chosen per machine.
 *
 * Every run (one path replayed, one end probed, one property sequence) is bounded
 * (test/support/run-bounds.ts): a machine that loops without time passing, or a run that never ends,
 * fails with a message naming the loop instead of hanging the test file.
 */

// @xstate/graph, the package the design card names: its traversals are xstate/graph's, path for
// path on every machine here (bench/experiments/xstate-graph-compare.ts, docs/design.md §5).
import { getAdjacencyMap, getShortestPaths, getSimplePaths } from '@xstate/graph';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import type { AnyMachineSnapshot, AnyStateMachine, EventObject, InspectionEvent } from 'xstate';
import { bounded } from '../support/run-bounds.js';
import { definedStates, describePath, expectFullCoverage, firstTriggers, stateIds, withoutPrefixes } from './graph.js';
import { seedOptions } from './seeds.js';

type Snapshot = AnyMachineSnapshot;
export type Step<E> = { event: E; state: Snapshot };
export type Path<E> = { steps: Array<Step<E>> };
export type Observer = (event: InspectionEvent) => void;

/** Under mutation testing (QMD_MUTATION=1): one payload variant, no simple paths, no coverage check. */
export const mutation = process.env.QMD_MUTATION === '1';

/** How a traversal sees a machine: its input, what makes two snapshots one state, and the events offered. */
export interface Traversal<E extends EventObject, I = unknown> {
  input: I;
  serializeState: (snapshot: Snapshot) => string;
  events: (snapshot: Snapshot) => E[];
}

/** What the driver needs of a machine. */
export interface MachineUnderTest<E extends EventObject> {
  /** Names the model in logs and the coverage line: 'lifecycle model'. */
  label: string;
  /** The describe block's title. */
  title: string;
  machine: AnyStateMachine;
  /** The graph the shortest paths and the other transitions come from. */
  full: Traversal<E>;
  /** The (smaller) graph whose simple paths are replayed; none under mutation testing. */
  simple: Traversal<E>;
  /** Replays one path against the real host, judged by the contract oracle and compared with the machine. */
  replay: (steps: Array<Step<E>>, observe?: Observer) => Promise<void>;
  /** What the world can do at the end of `path` that the machine ignores. */
  ignoredAt: (path: Path<E>) => E[];
  /** Replays `path`, then each probe, then runs the world to its end; the oracle judges. */
  probe: (path: Path<E>, probes: E[]) => Promise<void>;
  /** Records the states entered and transitions taken by the real actors (keys as `transitionKey`). */
  recorder: () => Recorder;
  /** States no shortest path rests in (left within the same step, eventless); coverage sees them. */
  transient: string[];
  /** Replays the shortest paths a second time with no inspector (the lifecycle's production mode). */
  unobserved?: boolean;
}

export interface Recorder {
  taken: Set<string>;
  states: Set<string>;
  observe: Observer;
}

/** Registers the generated tests of one machine. */
export function describeGeneratedTests<E extends EventObject>(m: MachineUnderTest<E>): void {
  const shortest = getShortestPaths(m.machine, m.full as never) as unknown as Array<Path<E>>;
  // Every transition of the same graph that no shortest path takes (cheap: runs under mutation too).
  const transitions = otherTransitions(m.machine, shortest, m.full);
  // The simple paths are the costly tier: enumerated when their tests run, and not at all for a
  // machine the paths above already failed, whose graph may have grown by orders of magnitude
  // (the held-out mutant whose failedStep goes back to draining: 67,375 simple paths against
  // 12,037, 272 s against 21 s to enumerate here). Their groups are known before (the count
  // test checks them).
  const simpleTriggers = mutation ? [] : firstTriggers(m.machine, m.simple);
  let simple: { all: Array<Path<E>>; groups: Map<string, Array<Path<E>>> } | undefined;
  // The first path of this machine that failed, in any test.
  let failed: string | undefined;
  const heard = (failures: string[]): string[] => {
    failed ??= failures[0];
    return failures;
  };
  const simplePaths = () => {
    if (failed !== undefined)
      throw new Error(`the simple paths were not enumerated: shorter paths of this machine fail, first:\n  ${failed}`);
    if (simple === undefined) {
      const all = getSimplePaths(m.machine, m.simple as never) as unknown as Array<Path<E>>;
      // A path that is a prefix of another is replayed as part of it: the replay checks the state
      // and the calls after every step, so the longer replay asserts everything the prefix would.
      simple = { all, groups: new Map(groupByTrigger(withoutPrefixes(all))) };
    }
    return simple;
  };
  const coverage = m.recorder();

  describe(m.title, () => {
    it('are counted, and reach every state', () => {
      console.error(
        `${m.label}: ${shortest.length} shortest paths, ${transitions.length} transitions they do not take`,
      );
      expect(shortest.length).toBeGreaterThan(100);
      const reached = new Set(shortest.flatMap((p) => stateIds(m.machine.id, p.steps.at(-1)!.state.value)));
      expect(definedStates(m.machine).filter((s) => !reached.has(s))).toEqual(m.transient);
    });

    it.each(groupByTrigger(shortest))('replay every shortest path starting %s', async (_, group) => {
      expectNone(heard(await replayAll(group, m.replay, coverage.observe)), group.length);
    });

    if (m.unobserved) {
      it.each(groupByTrigger(shortest))('replay every shortest path starting %s, unobserved', async (_, group) => {
        expectNone(heard(await replayAll(group, m.replay)), group.length);
      });
    }

    it.each(groupByTrigger(transitions))(
      'replay every transition no shortest path takes, starting %s',
      async (_, group) => {
        expectNone(heard(await replayAll(group, m.replay, coverage.observe)), group.length);
      },
    );

    // Paths never show an input the machine ignores; the contract may still say it matters.
    it.each(groupByTrigger(shortest))(
      'probe the end of every shortest path starting %s with what the machine ignores',
      async (_, group) => {
        expectNone(heard(await probeAll(group, m.ignoredAt, m.probe)), group.length);
      },
    );

    if (!mutation) {
      it('the simple paths are counted, each in the group of its first trigger', () => {
        const { all, groups } = simplePaths();
        const toReplay = [...groups.values()].reduce((n, g) => n + g.length, 0);
        console.error(`${m.label}: ${all.length} simple paths (${toReplay} not prefixes of another)`);
        expect(all.length).toBeGreaterThan(shortest.length);
        expect([...groups.keys()]).toEqual(simpleTriggers);
      });

      it.each(simpleTriggers)('replay every simple path starting %s', async (trigger) => {
        const group = simplePaths().groups.get(trigger) ?? [];
        expectNone(heard(await replayAll(group, m.replay, coverage.observe)), group.length);
      });
    }
  });

  // Shortest paths alone do not take every transition (two edges into one vertex: the shortest
  // path takes one), so the coverage check needs the simple paths too: not run once paths fail.
  afterAll(() => {
    if (!mutation && failed === undefined) expectFullCoverage(coverage, m.label, m.machine);
  });
}

/** A machine's property test: random command sequences against its real host, judged by its oracle. */
export interface PropertyTest<C> {
  title: string;
  name: string;
  /** Names the seed line: 'lifecycle property test'. */
  label: string;
  /** The command sequences (their length and size are the machine's choice). */
  commands: fc.Arbitrary<C[]>;
  numRuns: number;
  /** Sequences a random run once found, run before the random ones every time (./seeds.ts). */
  fixedCases: C[][];
  /** Runs one sequence against a fresh host and fails if a rule breaks. */
  run: (commands: C[]) => Promise<void>;
}

/** Registers a property test with a recorded seed (./seeds.ts) and its fixed cases first. */
export function describePropertyTest<C>(p: PropertyTest<C>): void {
  describe(p.title, () => {
    it(p.name, async () => {
      await fc.assert(
        fc.asyncProperty(p.commands, (commands) => bounded(p.label, () => p.run(commands))),
        {
          numRuns: p.numRuns,
          ...seedOptions(p.label),
          examples: p.fixedCases.map((c) => [c]),
        },
      );
    });
  });
}

/** One cut of the cheap test for test/mutants/: shortest paths of a small graph, each probed. */
export interface Cut<E extends EventObject> {
  machine: AnyStateMachine;
  traversal: Traversal<E>;
  ignoredAt: (path: Path<E>) => E[];
  probe: (path: Path<E>, probes: E[]) => Promise<void>;
}

/**
 * Probes each cut in turn until a failure names `guarantee` (the one a mutant is meant to
 * break); returns that message, or, if none does, every distinct failure seen (empty: all passed).
 */
export async function brokenGuarantee(guarantee: string, cuts: Array<Cut<EventObject>>): Promise<string> {
  const others = new Set<string>();
  for (const cut of cuts) {
    const paths = getShortestPaths(cut.machine, cut.traversal as never) as unknown as Array<Path<EventObject>>;
    for (const path of paths) {
      try {
        await bounded(describePath(path.steps), () => cut.probe(path, cut.ignoredAt(path)));
      } catch (error) {
        const message = (error as Error).message;
        if (message.includes(`guarantee "${guarantee}" broken: `)) return message;
        others.add(message.split(' broken: ')[0]!);
      }
    }
  }
  return [...others].join('; ');
}

// ---- replaying one path -------------------------------------------------------------------

/** How one machine's path is replayed against its host (see `replaySteps`). */
export interface Replay<E extends EventObject> {
  /** Does in the world what the event stands for (the oracle may judge in here). */
  perform: (event: E) => Promise<void>;
  /** A contract verdict thrown by `perform`: reported at once, before any disagreement. */
  isVerdict: (error: unknown) => boolean;
  /** The contract oracle after every step, the start included (when it is not inside `perform`). */
  check?: () => void;
  /** The host compared with the machine after a step (`where` names it). */
  compare: (step: Step<E>, where: string) => void;
  /** After the last step: the end of the path (the watchdog's time, the exit), compared through `asMachineSays`. */
  end: (asMachineSays: (check: () => void) => void) => Promise<void>;
}

/**
 * Replays `steps` through `r`: a broken guarantee is reported before any disagreement between
 * host and machine (a broken machine's first visible symptom is often a context the host could
 * not reproduce, and the guarantee it breaks says more); the first disagreement is kept and
 * thrown at the end.
 */
export async function replaySteps<E extends EventObject>(steps: Array<Step<E>>, r: Replay<E>): Promise<void> {
  let disagreement: unknown;
  const asMachineSays = (check: () => void): void => {
    if (disagreement !== undefined) return;
    try {
      check();
    } catch (error) {
      disagreement = error;
    }
  };
  for (const [i, step] of steps.entries()) {
    if (i > 0) {
      try {
        await r.perform(step.event);
      } catch (error) {
        // Anything but the oracle's verdict means the world could not do what the path says:
        // the host had already parted from the machine.
        if (r.isVerdict(error)) throw error;
        throw disagreement ?? error;
      }
    }
    r.check?.();
    asMachineSays(() => r.compare(step, `after step ${i} (${step.event.type})`));
  }
  await r.end(asMachineSays);
  if (disagreement !== undefined) throw disagreement;
}

/**
 * Replays every path; collects failures with the path that failed. A group stops at its fifth
 * failure, or at a run that did not end (it passed a bound: the machine loops, and every other
 * path there would loop to the bound too): that says enough about a broken machine, as in
 * ./scenarios.ts, and a mutant run need not wait for the rest.
 */
export async function replayAll<E extends EventObject>(
  paths: Array<Path<E>>,
  run: (steps: Array<Step<E>>, observe?: Observer) => Promise<void>,
  observe?: Observer,
): Promise<string[]> {
  const failures: string[] = [];
  for (const [i, path] of paths.entries()) {
    try {
      await bounded(describePath(path.steps), () => run(path.steps, observe));
    } catch (error) {
      failures.push(`${describePath(path.steps)}\n  ${firstLines(error)}`);
      if (enough(failures, error)) return stopped(failures, paths.length - i - 1, error);
    }
  }
  return failures;
}

/** Probes every path's end; collects failures, and stops as `replayAll` does. */
export async function probeAll<E extends EventObject>(
  paths: Array<Path<E>>,
  ignoredAt: (path: Path<E>) => E[],
  probe: (path: Path<E>, probes: E[]) => Promise<void>,
): Promise<string[]> {
  const failures: string[] = [];
  for (const [i, path] of paths.entries()) {
    try {
      await bounded(describePath(path.steps), () => probe(path, ignoredAt(path)));
    } catch (error) {
      failures.push(firstLines(error));
      if (enough(failures, error)) return stopped(failures, paths.length - i - 1, error);
    }
  }
  return failures;
}

// `QMD_ALL_FAILURES=1`: every failure (scripts/mutants.ts names every rule a mutant broke).
const ENOUGH = process.env.QMD_ALL_FAILURES === '1' ? Number.POSITIVE_INFINITY : 5;
const NOT_RUN = 'not run: ';
const didNotEnd = (error: unknown): boolean => error instanceof Error && error.name === 'RunBoundError';
const enough = (failures: string[], error: unknown): boolean => failures.length >= ENOUGH || didNotEnd(error);

/** Says how many paths of the group were left, and why (`expectNone` reports it apart). */
function stopped(failures: string[], left: number, error: unknown): string[] {
  if (left === 0) return failures;
  const why = didNotEnd(error) ? 'a run of the group did not end' : `${ENOUGH} failures say enough`;
  return [...failures, `${NOT_RUN}${left} more not run: ${why}`];
}

const firstLines = (error: unknown): string => (error as Error).message.split('\n').slice(0, 6).join('\n  ');

/** Paths grouped by their first trigger, so a test reports a group and a failure names its path. */
export function groupByTrigger<P extends Path<EventObject>>(paths: P[]): Array<[string, P[]]> {
  const groups = new Map<string, P[]>();
  for (const p of paths) {
    const first = p.steps.find(
      (s) => !s.event.type.startsWith('handler.') && (s.event.type as string) !== 'xstate.init',
    );
    const key = first ? describePath([{ event: { type: '' } }, first]) : '(no trigger)';
    groups.set(key, [...(groups.get(key) ?? []), p]);
  }
  return [...groups].sort(([a], [b]) => a.localeCompare(b));
}

/**
 * Throws unless `failures` is empty, with one line per broken guarantee (how many paths broke
 * it, and the first one's message), so a broken machine reads as the promises it breaks.
 * A failure the oracle did not name (the host disagreeing with the machine) is grouped too.
 */
export function expectNone(failures: string[], total: number): void {
  if (failures.length === 0) return;
  const failed = failures.filter((f) => !f.startsWith(NOT_RUN));
  const notRun = failures.filter((f) => f.startsWith(NOT_RUN)).map((f) => `; ${f.slice(NOT_RUN.length)}`);
  const byGuarantee = new Map<string, string[]>();
  for (const f of failed) {
    const name =
      /guarantee "([^"]+)" broken/.exec(f)?.[1] ??
      (f.includes('run bound passed')
        ? 'every run ends (test/support/run-bounds.ts)'
        : 'the host does what the machine says');
    byGuarantee.set(name, [...(byGuarantee.get(name) ?? []), f]);
  }
  const lines = [...byGuarantee].map(([name, list]) => `- "${name}" ×${list.length}, first: ${list[0]}`);
  throw new Error(`${failed.length} of ${total} paths failed${notRun.join('')}; broken:\n${lines.join('\n')}`);
}

/**
 * Every transition of the reachable graph, cheaply. The shortest paths reach every state but
 * take one way into each, so a transition that leads into an already reached state (a
 * repeated HTTP listener close escalating while draining lands where a SIGTERM would) is in no
 * shortest path; the simple paths take it, but cost seconds to enumerate and are left out
 * under mutation testing. Here each such transition is replayed as the shortest path to its
 * source plus the transition itself: with the probes of what the machine ignores, every
 * (reachable state, input) pair is exercised.
 */
export function otherTransitions<E extends EventObject>(
  machine: AnyStateMachine,
  shortest: Array<Path<E>>,
  traversal: Traversal<E>,
): Array<Path<E>> {
  const { serializeState } = traversal;
  const adjacency = getAdjacencyMap(machine, traversal as never);
  const toState = new Map(shortest.map((p) => [serializeState(p.steps.at(-1)!.state), p]));
  const taken = new Set(shortest.map((p) => edgeKey(p.steps.at(-2)?.state, p.steps.at(-1)!.event)));
  const out: Array<Path<E>> = [];
  for (const [from, { transitions }] of Object.entries(adjacency)) {
    const path = toState.get(from);
    if (!path) throw new Error(`no shortest path reaches ${from}`);
    for (const { event, state } of Object.values(transitions) as Array<Step<E>>) {
      if (serializeState(state) === from || taken.has(edgeKey(path.steps.at(-1)!.state, event))) continue;
      out.push({ steps: [...path.steps, { event, state }] });
    }
  }
  return out;

  function edgeKey(from: Snapshot | undefined, event: E): string {
    return `${from ? serializeState(from) : '(start)'} ${JSON.stringify(event)}`;
  }
}
