import type { AnyStateMachine } from 'xstate';

/**
 * An independent reading of a machine's definition, for the export tests: it walks the
 * config as written (`machine.root.config`: `on`, `always`, `after`, `invoke.onDone/onError`,
 * `onDone`) where `src/viz/model.ts` walks XState's state nodes. If both agree, the exports
 * carry every transition the author wrote.
 */
export interface Expected {
  /** Source state path (`closingTransport`), `''` for the root. */
  source: string;
  kind: 'event' | 'always' | 'after' | 'done' | 'error';
  /** The event type (`event`), the delay (`after`), the actor id (`done`/`error`), `''` (`always`). */
  on: string;
  /** Target state path, `null` when the transition stays put. */
  target: string | null;
  guard: string | null;
  actions: Array<{ type: string; params?: unknown }>;
}

type Config = Record<string, unknown>;

export function readDefinition(machine: AnyStateMachine): { states: string[]; transitions: Expected[] } {
  const states: string[] = [];
  const transitions: Expected[] = [];
  const machineId = machine.id;

  const visit = (config: Config, path: string[]): void => {
    const source = path.join('.');
    const resolve = (target: string): string => {
      if (target.startsWith('#')) return target.slice(machineId.length + 2);
      if (target.startsWith('.')) return [...path, target.slice(1)].join('.');
      return [...path.slice(0, -1), target].join('.');
    };
    const add = (kind: Expected['kind'], on: string, raw: unknown): void => {
      for (const t of list(raw)) {
        const c: Config = typeof t === 'string' ? { target: t } : (t as Config);
        const target = c.target === undefined ? null : resolve(String(list(c.target)[0]));
        transitions.push({ source, kind, on, target, guard: guardName(c.guard), actions: list(c.actions).map(action) });
      }
    };
    for (const [event, raw] of Object.entries((config.on as Config | undefined) ?? {})) add('event', event, raw);
    if (config.always !== undefined) add('always', '', config.always);
    for (const [delay, raw] of Object.entries((config.after as Config | undefined) ?? {})) add('after', delay, raw);
    for (const invoke of list(config.invoke) as Config[]) {
      const id = String(invoke.id ?? invoke.src);
      if (invoke.onDone !== undefined) add('done', id, invoke.onDone);
      if (invoke.onError !== undefined) add('error', id, invoke.onError);
    }
    if (config.onDone !== undefined) add('done', '', config.onDone);
    for (const [key, child] of Object.entries((config.states as Config | undefined) ?? {})) {
      states.push([...path, key].join('.'));
      visit(child as Config, [...path, key]);
    }
  };
  visit(machine.root.config as Config, []);
  return { states, transitions };
}

function list(value: unknown): unknown[] {
  if (value === undefined) return [];
  return Array.isArray(value) ? value : [value];
}

function action(value: unknown): { type: string; params?: unknown } {
  if (typeof value === 'string') return { type: value };
  const { type, params } = value as { type: string; params?: unknown };
  return params === undefined ? { type } : { type, params };
}

function guardName(value: unknown): string | null {
  if (value === undefined) return null;
  if (typeof value === 'string') return value;
  return String((value as { type: unknown }).type);
}

/** A stable text for one transition, so lists compare as multisets. */
export function key(t: Expected): string {
  return JSON.stringify([t.source, t.kind, t.on, t.target, t.guard, t.actions]);
}

export function keys(list: Expected[]): string[] {
  return list.map(key).sort();
}

/** How the diagrams name a transition's trigger (the format's documented label syntax). */
export function triggerText(t: Expected): string {
  switch (t.kind) {
    case 'event':
      return t.on;
    case 'always':
      return 'always';
    case 'after':
      return /^\d+$/.test(t.on) ? `after ${t.on} ms` : `after ${t.on}`;
    case 'done':
      return t.on === '' ? 'done' : `done ${t.on}`;
    case 'error':
      return `error ${t.on}`;
  }
}

/** `recordStepFailure(step=closeTransport)`. */
export function actionText(a: { type: string; params?: unknown }): string {
  if (a.params === undefined) return a.type;
  const params = Object.entries(a.params as Record<string, unknown>)
    .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
    .join(', ');
  return `${a.type}(${params})`;
}
