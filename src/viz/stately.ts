import { formatGuard } from './labels.js';
import type { GuardRef, MachineInfo, NamedRef, StateInfo, TransitionInfo } from './model.js';
import { toSource } from './source.js';

/**
 * TypeScript source that Stately Studio imports (Code panel → Import, or Machine → Import
 * from code): one `createMachine({...})` call, the form its importer looks for (the first
 * `createMachine` call in the text; `@xstate/machine-extractor` reads `guard`, named actions,
 * `invoke.src`, and named delays under `after`). Every guard, action, actor and delay is
 * named as a string, as in the definition; their code stays in the project. It is also a
 * valid XState 5 config, so the tests rebuild a machine from it and compare transitions.
 */
export function toStately(machine: MachineInfo): string {
  const config: Record<string, unknown> = { id: machine.id };
  if (machine.initial !== null) config.initial = keyOf(machine.initial);
  if (machine.description) config.description = machine.description;
  Object.assign(config, transitionsConfig(machine, '', machine.transitions, []));
  config.states = statesConfig(machine, '');
  return [
    `// Generated from the ${machine.id} machine definition. Do not edit by hand.`,
    '// Stately Studio: Code panel → Import (or Machine → Import from code), paste this file.',
    '// Guards, actions, actors and delays are named here; their code lives in the project.',
    "import { createMachine } from 'xstate';",
    '',
    `export const machine = createMachine(${toSource(config)});`,
    '',
  ].join('\n');
}

function statesConfig(machine: MachineInfo, parent: string): Record<string, unknown> {
  const states: Record<string, unknown> = {};
  for (const state of machine.states.filter((s) => s.parent === parent)) {
    states[state.key] = stateConfig(machine, state);
  }
  return states;
}

function stateConfig(machine: MachineInfo, state: StateInfo): Record<string, unknown> {
  const config: Record<string, unknown> = {};
  if (state.type !== 'atomic' && state.type !== 'compound') config.type = state.type;
  if (state.initial !== null) config.initial = keyOf(state.initial);
  if (state.description) config.description = state.description;
  if (state.tags.length > 0) config.tags = state.tags;
  if (state.entry.length > 0) config.entry = state.entry.map(actionSource);
  if (state.exit.length > 0) config.exit = state.exit.map(actionSource);
  Object.assign(config, transitionsConfig(machine, state.path, state.transitions, state.invoke));
  if (machine.states.some((s) => s.parent === state.path)) config.states = statesConfig(machine, state.path);
  return config;
}

/** Sorts a node's transitions back into `invoke.onDone`/`onError`, `after`, `always`, `on` and `onDone`. */
function transitionsConfig(
  machine: MachineInfo,
  source: string,
  transitions: TransitionInfo[],
  invoke: StateInfo['invoke'],
): Record<string, unknown> {
  const on = new Map<string, unknown[]>();
  const after = new Map<string, unknown[]>();
  const always: unknown[] = [];
  const stateDone: unknown[] = [];
  const actorDone = new Map<string, { onDone: unknown[]; onError: unknown[] }>();
  for (const i of invoke) actorDone.set(i.id, { onDone: [], onError: [] });
  const push = <K>(map: Map<K, unknown[]>, key: K, t: unknown): void => {
    map.set(key, [...(map.get(key) ?? []), t]);
  };
  for (const t of transitions) {
    const config = transitionSource(machine, source, t);
    const actor = t.actor === undefined ? undefined : actorDone.get(t.actor);
    if (t.kind === 'always') always.push(config);
    else if (t.kind === 'after') push(after, String(t.delay), config);
    else if (t.kind === 'done' && actor) actor.onDone.push(config);
    else if (t.kind === 'error' && actor) actor.onError.push(config);
    else if (t.kind === 'done' && t.actor === undefined) stateDone.push(config);
    else push(on, t.event, config);
  }
  const out: Record<string, unknown> = {};
  if (invoke.length > 0) {
    const invokes = invoke.map((i) => {
      const handlers = actorDone.get(i.id);
      return {
        id: i.id,
        src: i.src,
        onDone: handlers && one(handlers.onDone),
        onError: handlers && one(handlers.onError),
      };
    });
    out.invoke = one(invokes);
  }
  if (always.length > 0) out.always = always;
  if (after.size > 0) out.after = Object.fromEntries([...after].map(([k, v]) => [k, one(v)]));
  if (on.size > 0) out.on = Object.fromEntries([...on].map(([k, v]) => [k, one(v)]));
  if (stateDone.length > 0) out.onDone = one(stateDone);
  return out;
}

function transitionSource(machine: MachineInfo, source: string, t: TransitionInfo): Record<string, unknown> {
  const config: Record<string, unknown> = {};
  if (t.targets.length > 0) {
    const targets = t.targets.map((target) => targetSource(machine, source, target));
    config.target = targets.length === 1 ? targets[0] : targets;
  }
  if (t.guard) config.guard = guardSource(t.guard);
  if (t.actions.length > 0) config.actions = t.actions.map(actionSource);
  if (t.reenter) config.reenter = true;
  if (t.description) config.description = t.description;
  return config;
}

/** A sibling by its key, a child as `.key`, anything else by its `#id`: XState 5's target rules. */
function targetSource(machine: MachineInfo, source: string, target: string): string {
  const state = machine.states.find((s) => s.path === target);
  if (!state) return target;
  const sourceParent = source === '' ? null : (machine.states.find((s) => s.path === source)?.parent ?? null);
  if (state.parent === source) return `.${state.key}`;
  if (state.parent === sourceParent) return state.key;
  return `#${state.id}`;
}

function actionSource(ref: NamedRef): unknown {
  return ref.params === undefined ? ref.type : { type: ref.type, params: ref.params };
}

/** Combined guards (`not`, `and`) have no string form in Studio's importer: they are written as their text. */
function guardSource(guard: GuardRef): unknown {
  if (guard.guards) return formatGuard(guard);
  return actionSource(guard);
}

function keyOf(path: string): string {
  return path.split('.').at(-1) ?? path;
}

function one<T>(list: T[]): T | T[] | undefined {
  if (list.length === 0) return undefined;
  return list.length === 1 ? list[0] : list;
}
