import type { AnyStateMachine } from 'xstate';

/**
 * A plain, serialisable description of a machine, read from its state nodes (`machine.root`),
 * so every export format draws the same transitions: guarded ones, eventless (`always`) ones,
 * delayed (`after`) ones and an invoked actor's `onDone`/`onError`, which `@xstate/graph`'s
 * helpers leave out by default. Nothing here runs the machine.
 */

/** How a transition is triggered. */
export type TransitionKind = 'event' | 'always' | 'after' | 'done' | 'error';

/** A named action or guard as the definition names it, e.g. `{ type: 'recordStepFailure', params: { step: 'closeTransport' } }`. */
export interface NamedRef {
  type: string;
  params?: unknown;
}

/** A guard; `not`, `and` and `or` carry the guards they combine. */
export interface GuardRef extends NamedRef {
  guards?: GuardRef[];
}

export interface TransitionInfo {
  /** The source state's path from the root, e.g. `closingTransport`; `''` for the root itself. */
  source: string;
  kind: TransitionKind;
  /** The event type XState processes: `stdin.end`, `xstate.after.stepTimeout.lifecycle.closingTransport`; `''` for `always`. */
  event: string;
  /** `after`: the delay, a name (`stepTimeout`) or milliseconds. */
  delay?: string | number;
  /** `done`/`error` of an invoked actor: its id. */
  actor?: string;
  /** Target state paths; empty when the transition only runs actions and stays put. */
  targets: string[];
  guard: GuardRef | null;
  actions: NamedRef[];
  reenter: boolean;
  description?: string;
}

export interface InvokeInfo {
  id: string;
  src: string;
}

export interface StateInfo {
  /** Path from the root joined with `.`: `closingTransport`, or `a.b` when nested. */
  path: string;
  key: string;
  /** XState's id for the node (`lifecycle.closingTransport`), what `#id` targets name. */
  id: string;
  /** The parent's path; `''` for a top-level state. */
  parent: string;
  type: 'atomic' | 'compound' | 'parallel' | 'final' | 'history';
  initial: string | null;
  description: string | null;
  entry: NamedRef[];
  exit: NamedRef[];
  invoke: InvokeInfo[];
  tags: string[];
  transitions: TransitionInfo[];
}

export interface MachineInfo {
  id: string;
  initial: string | null;
  description: string | null;
  /** Transitions of the root node: they apply in every state (e.g. `handler.started`). */
  transitions: TransitionInfo[];
  /** Every state, depth first, in the order the definition lists them. */
  states: StateInfo[];
}

/** The structural view of XState 5.33's `StateNode` this walker reads (its public fields). */
interface NodeLike {
  key: string;
  id: string;
  type: StateInfo['type'];
  path: string[];
  states: Record<string, NodeLike>;
  description?: string;
  tags: string[];
  entry: unknown[];
  exit: unknown[];
  invoke: Array<{ id: string; src: unknown }>;
  initial?: { target: NodeLike[] };
  transitions: Map<string, TransitionLike[]>;
  always?: TransitionLike[];
  after: Array<{ delay: string | number; eventType: string }>;
}

interface TransitionLike {
  eventType: string;
  target?: NodeLike[];
  guard?: unknown;
  actions: unknown[];
  reenter: boolean;
  description?: string;
}

const AFTER = 'xstate.after.';
const DONE_ACTOR = 'xstate.done.actor.';
const ERROR_ACTOR = 'xstate.error.actor.';
const DONE_STATE = 'xstate.done.state.';

export function describeMachine(machine: AnyStateMachine): MachineInfo {
  const root = machine.root as unknown as NodeLike;
  const states: StateInfo[] = [];
  const visit = (node: NodeLike): void => {
    for (const child of Object.values(node.states)) {
      states.push(describeState(child));
      visit(child);
    }
  };
  visit(root);
  return {
    id: machine.id,
    initial: initialOf(root),
    description: root.description ?? null,
    transitions: transitionsOf(root),
    states,
  };
}

function pathOf(node: NodeLike): string {
  return node.path.join('.');
}

function initialOf(node: NodeLike): string | null {
  const target = node.initial?.target[0];
  return target ? pathOf(target) : null;
}

function describeState(node: NodeLike): StateInfo {
  // `after` is implemented with an entry `raise` and an exit `cancel` per delay (XState 5.33);
  // they are the delayed transitions, drawn as such, not as the state's own actions.
  const delayed = new Set(node.after.map((a) => a.eventType));
  const own = (action: unknown): boolean => {
    const a = action as { type?: unknown; id?: unknown; sendId?: unknown };
    if (a.type === 'xstate.raise' && delayed.has(a.id as string)) return false;
    if (a.type === 'xstate.cancel' && delayed.has(a.sendId as string)) return false;
    return true;
  };
  return {
    path: pathOf(node),
    key: node.key,
    id: node.id,
    parent: node.path.slice(0, -1).join('.'),
    type: node.type,
    initial: initialOf(node),
    description: node.description ?? null,
    entry: node.entry.filter(own).map(actionRef),
    exit: node.exit.filter(own).map(actionRef),
    invoke: node.invoke.map((i) => ({ id: i.id, src: typeof i.src === 'string' ? i.src : i.id })),
    tags: [...node.tags],
    transitions: transitionsOf(node),
  };
}

function transitionsOf(node: NodeLike): TransitionInfo[] {
  const source = pathOf(node);
  const delays = new Map(node.after.map((a) => [a.eventType, a.delay]));
  const out: TransitionInfo[] = [];
  for (const [event, list] of node.transitions) {
    for (const t of list) out.push(transitionInfo(source, event, t, delays));
  }
  for (const t of node.always ?? []) out.push(transitionInfo(source, '', t, delays));
  return out;
}

function transitionInfo(
  source: string,
  event: string,
  t: TransitionLike,
  delays: Map<string, string | number>,
): TransitionInfo {
  const info: TransitionInfo = {
    source,
    kind: 'event',
    event,
    targets: (t.target ?? []).map(pathOf),
    guard: t.guard === undefined ? null : guardRef(t.guard),
    actions: t.actions.map(actionRef),
    reenter: t.reenter,
  };
  if (event === '') info.kind = 'always';
  else if (event.startsWith(AFTER)) {
    info.kind = 'after';
    info.delay = delays.get(event) ?? event.slice(AFTER.length).split('.')[0] ?? '';
  } else if (event.startsWith(DONE_ACTOR)) {
    info.kind = 'done';
    info.actor = event.slice(DONE_ACTOR.length);
  } else if (event.startsWith(ERROR_ACTOR)) {
    info.kind = 'error';
    info.actor = event.slice(ERROR_ACTOR.length);
  } else if (event.startsWith(DONE_STATE)) info.kind = 'done';
  if (t.description !== undefined) info.description = t.description;
  return info;
}

/** Named actions stay names; built-ins (`assign()`…) are named by their type; inline functions by their name. */
function actionRef(action: unknown): NamedRef {
  if (typeof action === 'string') return { type: action };
  if (typeof action === 'function') {
    const builtin = (action as { type?: unknown }).type;
    if (typeof builtin === 'string') return { type: builtin };
    return { type: action.name || 'inline' };
  }
  if (action && typeof action === 'object' && typeof (action as NamedRef).type === 'string') {
    const { type, params } = action as NamedRef;
    return params === undefined ? { type } : { type, params: plain(params) };
  }
  return { type: 'inline' };
}

function guardRef(guard: unknown): GuardRef {
  if (typeof guard === 'function') {
    // Higher-order guards (`not`, `and`, `or`, `stateIn`) are functions with a `check`;
    // `not`/`and`/`or` also list the guards they combine.
    const combined = (guard as { guards?: unknown }).guards;
    if (Array.isArray(combined)) return { type: guard.name, guards: combined.map(guardRef) };
    // An inline arrow under the `guard` key takes that key as its name: call it what it is.
    const name = guard.name && guard.name !== 'guard' ? guard.name : 'inline';
    return { type: name };
  }
  return actionRef(guard);
}

/** Params as data: dynamic (function) params cannot be exported, so they are marked as such. */
function plain(value: unknown): unknown {
  if (typeof value === 'function') return '(dynamic)';
  if (Array.isArray(value)) return value.map(plain);
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, plain(v)]));
  }
  return value;
}
