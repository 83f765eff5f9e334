/**
 * Every transition of the reachable graph, cheaply. The shortest paths reach every
 * state but take one way into each, so a transition that leads into an already reached state
 * (a repeated HTTP stop escalating while draining lands where a SIGTERM would) is in no
 * shortest path; the simple paths take it, but cost ~12 s to enumerate and are left out under
 * mutation testing. Here each such transition is replayed as the shortest path to its source
 * plus the transition itself: with the probes of what the machine ignores, every (reachable
 * state, input) pair is exercised, for a few thousand short replays.
 */
import type { AnyMachineSnapshot, AnyStateMachine } from 'xstate';
import { getAdjacencyMap } from 'xstate/graph';
import type { LifecycleEvent } from '../../machines/lifecycle.js';
import { type EventBounds, eventsFor, INPUT, serializeState } from './model.js';

type Step = { event: LifecycleEvent; state: AnyMachineSnapshot };
type Path = { steps: Step[] };

/** The paths `shortest` lacks to take every transition between distinct states, one per transition. */
export function otherTransitions(machine: AnyStateMachine, shortest: Path[], bounds: EventBounds): Path[] {
  const adjacency = getAdjacencyMap(machine, { input: INPUT, serializeState, events: eventsFor(bounds) });
  const toState = new Map(shortest.map((p) => [serializeState(p.steps.at(-1)!.state), p]));
  const taken = new Set(shortest.map((p) => edgeKey(p.steps.at(-2)?.state, p.steps.at(-1)!.event)));
  const out: Path[] = [];
  for (const [from, { transitions }] of Object.entries(adjacency)) {
    const path = toState.get(from);
    if (!path) throw new Error(`no shortest path reaches ${from}`);
    for (const { event, state } of Object.values(transitions) as Step[]) {
      if (serializeState(state) === from || taken.has(edgeKey(path.steps.at(-1)!.state, event))) continue;
      out.push({ steps: [...path.steps, { event, state }] });
    }
  }
  return out;
}

function edgeKey(from: AnyMachineSnapshot | undefined, event: LifecycleEvent): string {
  return `${from ? serializeState(from) : '(start)'} ${JSON.stringify(event)}`;
}
