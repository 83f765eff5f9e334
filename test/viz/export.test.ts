import { describe, expect, it } from 'vitest';
import { type AnyStateMachine, createMachine, fromPromise, setup } from 'xstate';
import { lifecycleMachine } from '../../machines/lifecycle.js';
import { EXPORT_FORMATS, exportMachine } from '../../src/viz/export.js';
import type { JsonMachine, JsonTransition } from '../../src/viz/json.js';
import { actionText, type Expected, keys, readDefinition, triggerText } from './definition.js';

/** A small nested machine with every kind of transition, so the walker is not tuned to one shape. */
const nestedMachine = setup({
  guards: { ok: () => true },
  actions: { log: () => {} },
  actors: { job: fromPromise(async () => {}) },
  delays: { slow: 10 },
}).createMachine({
  id: 'demo',
  initial: 'idle',
  on: { reset: { target: '.idle', actions: 'log' } },
  states: {
    idle: { on: { go: 'working', peek: { actions: { type: 'log', params: { level: 2 } } } } },
    working: {
      initial: 'fetching',
      invoke: { id: 'job', src: 'job', onDone: 'finished', onError: { target: '#demo.idle', actions: 'log' } },
      onDone: 'finished',
      after: { slow: { target: 'idle' }, 500: 'finished' },
      states: {
        fetching: { always: [{ guard: 'ok', target: 'checking' }], on: { stop: '#demo.finished' } },
        checking: { type: 'final' },
      },
    },
    finished: { type: 'final' },
  },
});

const machines: Array<[string, AnyStateMachine]> = [
  ['the lifecycle machine', lifecycleMachine],
  ['a nested machine', nestedMachine],
];

/** `a [g] / x, y(k=v)` → its parts; actions split on commas outside parentheses. */
function parseLabel(label: string): { triggers: string[]; guard: string | null; actions: string[] } {
  const match = label.match(/^(.*?)(?: \[([^\]]+)\])?(?: \/ (.+))?$/);
  if (!match) throw new Error(`unparsable label: ${label}`);
  return {
    triggers: (match[1] ?? '').split(', '),
    guard: match[2] ?? null,
    actions: match[3] ? splitTopLevel(match[3]) : [],
  };
}

function splitTopLevel(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let current = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '(') depth++;
    if (c === ')') depth--;
    if (depth === 0 && text.startsWith(', ', i)) {
      parts.push(current);
      current = '';
      i++;
      continue;
    }
    current += c;
  }
  return [...parts, current];
}

/** One string per (arrow, trigger): what a diagram shows, comparable with the definition. */
function arrowKeys(edges: Array<{ from: string; to: string; label: string }>): string[] {
  return edges
    .flatMap(({ from, to, label }) => {
      const { triggers, guard, actions } = parseLabel(label);
      return triggers.map((trigger) => JSON.stringify([from, to, trigger, guard, actions]));
    })
    .sort();
}

function expectedArrowKeys(transitions: Expected[], id: (path: string) => string): string[] {
  return transitions
    .map((t) =>
      JSON.stringify([id(t.source), id(t.target ?? t.source), triggerText(t), t.guard, t.actions.map(actionText)]),
    )
    .sort();
}

function fromJson(machine: JsonMachine): Expected[] {
  const convert = (source: string, t: JsonTransition): Expected => ({
    source,
    kind: t.kind,
    on: t.kind === 'event' ? t.event : t.kind === 'after' ? String(t.delay) : (t.actor ?? ''),
    target: Array.isArray(t.target) ? (t.target[0] ?? null) : t.target,
    guard: t.guard?.type ?? null,
    actions: t.actions.map((a) => (a.params === undefined ? { type: a.type } : { type: a.type, params: a.params })),
  });
  return [
    ...machine.transitions.map((t) => convert('', t)),
    ...machine.states.flatMap((s) => s.transitions.map((t) => convert(s.id, t))),
  ];
}

describe.each(machines)('exporting %s', (_name, machine) => {
  const definition = readDefinition(machine);

  it('reads a definition with every kind of transition (the test is not vacuous)', () => {
    const kinds = new Set(definition.transitions.map((t) => t.kind));
    expect([...kinds].sort()).toEqual(['after', 'always', 'done', 'error', 'event']);
    expect(definition.transitions.some((t) => t.guard !== null)).toBe(true);
  });

  it.each(EXPORT_FORMATS)('%s names every state', (format) => {
    const text = exportMachine(machine, format);
    for (const state of definition.states) expect(text).toContain(state.split('.').at(-1));
  });

  it('json lists exactly the transitions of the definition', () => {
    const json = JSON.parse(exportMachine(machine, 'json')) as JsonMachine;
    expect(json.states.map((s) => s.id)).toEqual(definition.states);
    expect(keys(fromJson(json))).toEqual(keys(definition.transitions));
  });

  it('stately is a createMachine config with exactly the transitions of the definition', () => {
    const source = exportMachine(machine, 'stately');
    expect(source).toMatch(/^import \{ createMachine \} from 'xstate';$/m);
    const body = source
      .replace(/^import .*$/m, '')
      .replace('export const machine = ', 'return ')
      .replace(/^\/\/.*$/gm, '');
    // The export is plain JavaScript inside: rebuild a machine from it and read it back.
    const rebuilt = new Function('createMachine', body)(createMachine) as AnyStateMachine;
    const reread = readDefinition(rebuilt);
    expect(reread.states).toEqual(definition.states);
    expect(keys(reread.transitions)).toEqual(keys(definition.transitions));
  });

  it('mermaid draws one arrow per transition (self-loops for those that stay put)', () => {
    const text = exportMachine(machine, 'mermaid');
    expect(text.startsWith('stateDiagram-v2\n')).toBe(true);
    const edges = [...text.matchAll(/^\s*(\S+) --> (\S+) : (.+)$/gm)].map(([, from, to, label]) => ({
      from: from ?? '',
      to: to ?? '',
      label: label ?? '',
    }));
    const id = (path: string): string => (path === '' ? machine.id : path.replace(/\./g, '_'));
    expect(arrowKeys(edges)).toEqual(expectedArrowKeys(definition.transitions, id));
    // Mermaid ends a label at ':' or ';' (stateDiagram.jison): none may appear after the first.
    for (const line of text.split('\n')) expect(line.split(' : ').slice(1).join('')).not.toMatch(/[:;]/);
  });

  it('dot draws the same arrows', () => {
    const text = exportMachine(machine, 'dot');
    const edges = [...text.matchAll(/^\s*"([^"]+)" -> "([^"]+)" \[label="((?:[^"\\]|\\.)*)"/gm)].map(
      ([, from, to, label]) => ({ from: from ?? '', to: to ?? '', label: (label ?? '').replace(/\\n/g, ' ') }),
    );
    const id = (path: string): string => (path === '' ? `#${machine.id}` : path);
    expect(arrowKeys(edges)).toEqual(expectedArrowKeys(definition.transitions, id));
  });

  it.each(EXPORT_FORMATS)('%s is deterministic', (format) => {
    expect(exportMachine(machine, format)).toBe(exportMachine(machine, format));
  });
});
