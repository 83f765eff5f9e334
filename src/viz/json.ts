import type { GuardRef, MachineInfo, NamedRef, StateInfo, TransitionInfo, TransitionKind } from './model.js';

/** One transition in the JSON export. `target` is `null` when the transition stays put (actions only). */
export interface JsonTransition {
  event: string;
  kind: TransitionKind;
  target: string | string[] | null;
  guard: GuardRef | null;
  actions: NamedRef[];
  delay?: string | number;
  actor?: string;
  reenter?: boolean;
  description?: string;
}

export interface JsonState {
  /** The state's path from the root (`closingTransport`; `a.b` when nested). */
  id: string;
  parent: string | null;
  type: StateInfo['type'];
  initial: string | null;
  description: string | null;
  entry: NamedRef[];
  exit: NamedRef[];
  invoke: StateInfo['invoke'];
  tags: string[];
  transitions: JsonTransition[];
}

/** `qmd lifecycle export --format json`: plain data, the same transitions as every other format. */
export interface JsonMachine {
  id: string;
  initial: string | null;
  description: string | null;
  /** The root's own transitions: they apply in every state. */
  transitions: JsonTransition[];
  states: JsonState[];
}

export function toJsonMachine(machine: MachineInfo): JsonMachine {
  return {
    id: machine.id,
    initial: machine.initial,
    description: machine.description,
    transitions: machine.transitions.map(jsonTransition),
    states: machine.states.map((s) => ({
      id: s.path,
      parent: s.parent === '' ? null : s.parent,
      type: s.type,
      initial: s.initial,
      description: s.description,
      entry: s.entry,
      exit: s.exit,
      invoke: s.invoke,
      tags: s.tags,
      transitions: s.transitions.map(jsonTransition),
    })),
  };
}

function jsonTransition(t: TransitionInfo): JsonTransition {
  const out: JsonTransition = {
    event: t.event,
    kind: t.kind,
    target: t.targets.length === 0 ? null : t.targets.length === 1 ? (t.targets[0] ?? null) : t.targets,
    guard: t.guard,
    actions: t.actions,
  };
  if (t.delay !== undefined) out.delay = t.delay;
  if (t.actor !== undefined) out.actor = t.actor;
  if (t.reenter) out.reenter = true;
  if (t.description !== undefined) out.description = t.description;
  return out;
}
