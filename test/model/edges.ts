/**
 * Every transition of the reachable graph, cheaply. The shortest paths reach every
 * state but take one way into each, so a transition that leads into an already reached state
 * (a repeated HTTP listener close escalating while draining lands where a SIGTERM would) is
 * in no shortest path; the simple paths take it, but cost ~12 s to enumerate and are left out under
 * mutation testing. Here each such transition is replayed as the shortest path to its source
 * plus the transition itself: with the probes of what the machine ignores, every (reachable
 * state, input) pair is exercised, for a few thousand short replays.
 */
import type { AnyMachineSnapshot, AnyStateMachine, EventObject } from 'xstate';
import { getAdjacencyMap } from 'xstate/graph';
import type { LifecycleEvent } from '../../machines/lifecycle.js';
import { type EventBounds, eventsFor, INPUT, serializeState as lifecycleState } from './model.js';

type Step<E> = { event: E; state: AnyMachineSnapshot };
type Path<E> = { steps: Array<Step<E>> };

/** How a traversal sees a machine: its input, what makes two snapshots one state, and the events offered. */
export interface Traversal<E extends EventObject, I = unknown> {
  input: I;
  serializeState: (snapshot: AnyMachineSnapshot) => string;
  events: (snapshot: AnyMachineSnapshot) => E[];
}

/** The lifecycle's traversal with these bounds (./model.ts). */
export function lifecycleTraversal(bounds: EventBounds): Traversal<LifecycleEvent, typeof INPUT> {
  return { input: INPUT, serializeState: lifecycleState, events: eventsFor(bounds) };
}

/** The paths `shortest` lacks to take every transition between distinct states, one per transition. */
export function otherTransitions<E extends EventObject, I>(
  machine: AnyStateMachine,
  shortest: Array<Path<E>>,
  traversal: Traversal<E, I>,
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

  function edgeKey(from: AnyMachineSnapshot | undefined, event: E): string {
    return `${from ? serializeState(from) : '(start)'} ${JSON.stringify(event)}`;
  }
}
