/**
 * What the driver (./driver.ts) reads off a machine and its paths without running it: its own
 * definition (`machine.root`: every state and transition it defines, keyed as an inspection
 * microstep names the transition a real actor took, so the replays can be checked to take them
 * all), how its simple paths will be grouped before they are enumerated, what it ignores at the
 * end of a path, and how a path reads.
 */

import { expect } from 'vitest';
import { type AnyMachineSnapshot, type AnyStateMachine, type EventObject, initialTransition, transition } from 'xstate';
import type { Path, Recorder, Traversal } from './driver.js';

interface TransitionLike {
  source: { id: string };
  eventType: string;
}

interface NodeLike {
  id: string;
  states: Record<string, NodeLike>;
  transitions: Map<string, TransitionLike[]>;
  always?: TransitionLike[];
}

export function transitionKey(t: TransitionLike, index: number): string {
  return `${t.source.id} | ${t.eventType || 'always'} | #${index}`;
}

/** The key of a transition a real actor took, from an inspection microstep's `_transitions`. */
export function takenKey(t: TransitionLike): string {
  const source = t.source as unknown as NodeLike;
  const list = t.eventType ? source.transitions.get(t.eventType) : source.always;
  return transitionKey(t, list?.indexOf(t) ?? -1);
}

/** The state ids a snapshot's value names: `lifecycle.draining`, or `sharedServer.up` and `sharedServer.up.idle`. */
export function stateIds(root: string, value: unknown): string[] {
  return typeof value === 'string'
    ? [`${root}.${value}`]
    : Object.entries(value as object).flatMap(([k, s]) => [`${root}.${k}`, ...stateIds(`${root}.${k}`, s)]);
}

/** Every state id of the machine, from `machine.root`. */
export function definedStates(machine: AnyStateMachine): string[] {
  const out: string[] = [];
  const walk = (node: NodeLike): void => {
    for (const child of Object.values(node.states)) {
      out.push(child.id);
      walk(child);
    }
  };
  walk(machine.root as unknown as NodeLike);
  return out;
}

/** Every transition the machine defines (event, delayed, done/error and eventless), keyed. */
export function definedTransitions(machine: AnyStateMachine): string[] {
  const out: string[] = [];
  const walk = (node: NodeLike): void => {
    for (const list of [...node.transitions.values(), node.always ?? []]) {
      for (const [i, t] of list.entries()) out.push(transitionKey(t, i));
    }
    for (const child of Object.values(node.states)) walk(child);
  };
  walk(machine.root as unknown as NodeLike);
  return out;
}

/** Fails unless the replays took every state and every transition the machine defines. */
export function expectFullCoverage(
  recorder: Pick<Recorder, 'taken' | 'states'>,
  label: string,
  machine: AnyStateMachine,
): void {
  const states = definedStates(machine);
  const transitions = definedTransitions(machine);
  const missedStates = states.filter((s) => !recorder.states.has(s));
  const missedTransitions = transitions.filter((t) => !recorder.taken.has(t));
  console.error(
    `${label} coverage: states ${states.length - missedStates.length}/${states.length}, ` +
      `transitions ${transitions.length - missedTransitions.length}/${transitions.length}`,
  );
  expect(missedStates).toEqual([]);
  expect(missedTransitions).toEqual([]);
}

/**
 * The groups `groupByTrigger` makes of a graph's simple paths (less those that are a prefix of
 * another), without enumerating them: the first trigger of each is an event other than a
 * handler's, taken from a state that handler events alone reach from the start, to a state
 * outside those (a path that came back would not be simple). Sorted as `groupByTrigger` sorts.
 */
export function firstTriggers<E extends EventObject>(machine: AnyStateMachine, traversal: Traversal<E>): string[] {
  const key = traversal.serializeState;
  const [initial] = initialTransition(machine, traversal.input as never);
  const handlerOnly = new Set([key(initial)]);
  const queue = [initial];
  const exits: Array<[E, string]> = [];
  for (let state = queue.shift(); state !== undefined; state = queue.shift()) {
    for (const event of traversal.events(state)) {
      const [next] = transition(machine, state, event as never);
      if (!event.type.startsWith('handler.')) exits.push([event, key(next)]);
      else if (!handlerOnly.has(key(next))) {
        handlerOnly.add(key(next));
        queue.push(next);
      }
    }
  }
  const triggers = exits
    .filter(([, to]) => !handlerOnly.has(to))
    .map(([event]) => describePath([{ event }, { event }]));
  return [...new Set(triggers)].sort((a, b) => a.localeCompare(b));
}

/** The paths that are not a strict prefix of another path. */
export function withoutPrefixes<P extends Path<EventObject>>(paths: P[]): P[] {
  const key = (p: P) => p.steps.map((s) => JSON.stringify(s.event)).join('\u0000');
  const keys = paths.map(key);
  const prefixes = new Set<string>();
  for (const k of keys) {
    let i = k.indexOf('\u0000');
    while (i !== -1) {
      prefixes.add(k.slice(0, i));
      i = k.indexOf('\u0000', i + 1);
    }
  }
  return paths.filter((_, i) => !prefixes.has(keys[i]!));
}

/** A path as failures name it: `stdin.end → done:closeTransport → error:disposeStore`. */
export function describePath(steps: Array<{ event: { type: string } }>): string {
  return steps
    .slice(1)
    .map((s) => {
      const e = s.event as { type: string; signal?: string; exitCode?: number };
      const type = e.type
        .replace(/^xstate\.(done|error)\.actor\./, '$1:')
        .replace(/^xstate\.after\.(\w+)\..*/, 'after:$1');
      return `${type}${e.signal ? `(${e.signal})` : ''}${e.exitCode ? `[exit ${e.exitCode}]` : ''}`;
    })
    .join(' → ');
}

/** Handlers in flight at the end of `path`, as the world counts them (starts minus settles). */
export function inflightAt(path: Path<EventObject>): number {
  return path.steps.reduce(
    (n, s) => n + (s.event.type === 'handler.started' ? 1 : s.event.type === 'handler.settled' ? -1 : 0),
    0,
  );
}

/** The inputs the machine ignores at the end of `path`: those after which it serialises the same. */
export function ignoredBy<E extends EventObject>(
  machine: AnyStateMachine,
  path: Path<E>,
  inputs: E[],
  serialize: (s: AnyMachineSnapshot) => string,
): E[] {
  const last = path.steps.at(-1)!.state;
  const here = serialize(last);
  return inputs.filter((event) => serialize(transition(machine, last, event as never)[0]) === here);
}
