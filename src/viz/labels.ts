import type { GuardRef, MachineInfo, NamedRef, StateInfo, TransitionInfo } from './model.js';

/**
 * The words the diagrams put on states and arrows, shared by Mermaid and DOT so both read the
 * same: `stdin.end [isEscalation] / recordEscalation`, `after stepTimeout`, `always [isIdle]`,
 * `done closeTransport`. No `:` or `;` ever appears: Mermaid ends a label at either.
 */

/** `recordStepFailure(step=closeTransport)`; a name alone when there are no params. */
export function formatRef(ref: NamedRef): string {
  if (ref.params === undefined) return ref.type;
  return `${ref.type}(${formatParams(ref.params)})`;
}

function formatParams(params: unknown): string {
  if (params && typeof params === 'object' && !Array.isArray(params)) {
    return Object.entries(params)
      .map(([k, v]) => `${k}=${formatValue(v)}`)
      .join(', ');
  }
  return formatValue(params);
}

function formatValue(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** `isIdle`, `not(isIdle)`, `and(a, b)`. */
export function formatGuard(guard: GuardRef): string {
  if (guard.guards) return `${guard.type}(${guard.guards.map(formatGuard).join(', ')})`;
  return formatRef(guard);
}

/** What fires the transition: the event, `always`, `after stepTimeout`, `after 500 ms`, `done closeTransport`. */
export function formatTrigger(t: TransitionInfo): string {
  switch (t.kind) {
    case 'event':
      return t.event;
    case 'always':
      return 'always';
    case 'after':
      return typeof t.delay === 'number' ? `after ${t.delay} ms` : `after ${t.delay}`;
    case 'done':
      return t.actor === undefined ? 'done' : `done ${t.actor}`;
    case 'error':
      return `error ${t.actor}`;
  }
}

/** The guard and actions part: ` [isEscalation] / recordEscalation, announceEscalation`. */
export function formatEffects(t: Pick<TransitionInfo, 'guard' | 'actions'>): string {
  const guard = t.guard ? ` [${formatGuard(t.guard)}]` : '';
  const actions = t.actions.length > 0 ? ` / ${t.actions.map(formatRef).join(', ')}` : '';
  return `${guard}${actions}`;
}

/** One arrow of a diagram: transitions that differ only by their event share it. */
export interface Edge {
  source: string;
  /** The target state's path; the source itself for a transition that stays put. */
  target: string;
  kind: TransitionInfo['kind'];
  /** Triggers, in definition order: several events, or one `always`/`after`/`done`/`error`. */
  triggers: string[];
  guard: string | null;
  actions: string[];
}

export function edgeLabel(edge: Edge): string {
  const guard = edge.guard ? ` [${edge.guard}]` : '';
  const actions = edge.actions.length > 0 ? ` / ${edge.actions.join(', ')}` : '';
  return `${edge.triggers.join(', ')}${guard}${actions}`;
}

/**
 * The arrows of a diagram, in definition order. Event transitions with the same source,
 * target, guard and actions are merged into one arrow listing their events (the seven
 * triggers of `connected` are one arrow, not seven); eventless, delayed and done/error
 * transitions are never merged, so their order (which guard is tried first) stays visible.
 */
export function edgesOf(machine: MachineInfo): Edge[] {
  const edges: Edge[] = [];
  const byKey = new Map<string, Edge>();
  const all = [...machine.transitions, ...machine.states.flatMap((s: StateInfo) => s.transitions)];
  for (const t of all) {
    const targets = t.targets.length > 0 ? t.targets : [t.source];
    for (const target of targets) {
      const edge: Edge = {
        source: t.source,
        target,
        kind: t.kind,
        triggers: [formatTrigger(t)],
        guard: t.guard ? formatGuard(t.guard) : null,
        actions: t.actions.map(formatRef),
      };
      if (t.kind !== 'event') {
        edges.push(edge);
        continue;
      }
      const key = JSON.stringify([edge.source, edge.target, edge.guard, edge.actions]);
      const existing = byKey.get(key);
      if (existing) existing.triggers.push(...edge.triggers);
      else {
        byKey.set(key, edge);
        edges.push(edge);
      }
    }
  }
  return edges;
}

/** Lines under a state's name: its description, what it invokes, its entry and exit actions. */
export function stateNotes(state: StateInfo): string[] {
  const notes: string[] = [];
  if (state.description) notes.push(state.description);
  for (const i of state.invoke) notes.push(i.id === i.src ? `invoke ${i.src}` : `invoke ${i.src} as ${i.id}`);
  if (state.entry.length > 0) notes.push(`entry / ${state.entry.map(formatRef).join(', ')}`);
  if (state.exit.length > 0) notes.push(`exit / ${state.exit.map(formatRef).join(', ')}`);
  return notes;
}

/** Breaks `text` into lines of at most `width` characters at `sep` boundaries (a long word stays whole). */
export function wrap(text: string, width: number, sep = ' '): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(sep)) {
    const next = line === '' ? word : `${line}${sep}${word}`;
    if (next.length > width && line !== '') {
      lines.push(line + (sep === ' ' ? '' : sep.trimEnd()));
      line = word;
    } else line = next;
  }
  if (line !== '') lines.push(line);
  return lines;
}
