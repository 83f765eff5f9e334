import { type Edge, edgeLabel, edgesOf, stateNotes } from './labels.js';
import type { MachineInfo, StateInfo } from './model.js';

/**
 * Mermaid `stateDiagram-v2`, deterministic (definition order, no timestamps), for the README
 * and anything else that renders Mermaid (GitHub, GitLab). Every transition is an arrow:
 * a transition that stays put is a self-loop, and the root's transitions (they apply in every
 * state) hang off a box named after the machine.
 */
export function toMermaid(machine: MachineInfo): string {
  const ids = mermaidIds(machine);
  const id = (path: string): string => ids.get(path) ?? path;
  const lines = [
    'stateDiagram-v2',
    `  %% Generated from the ${text(machine.id)} machine definition. Do not edit by hand.`,
  ];

  const children = (parent: string): StateInfo[] => machine.states.filter((s) => s.parent === parent);
  const renderLevel = (parent: string, initial: string | null, indent: string): void => {
    if (initial !== null) lines.push(`${indent}[*] --> ${id(initial)}`);
    for (const state of children(parent)) {
      if (state.type === 'compound' || state.type === 'parallel') {
        lines.push(`${indent}state ${id(state.path)} {`);
        renderLevel(state.path, state.initial, `${indent}  `);
        lines.push(`${indent}}`);
      }
      for (const note of stateNotes(state)) lines.push(`${indent}${id(state.path)} : ${text(note)}`);
      if (state.type === 'final') lines.push(`${indent}${id(state.path)} --> [*]`);
    }
  };
  renderLevel('', machine.initial, '  ');

  if (machine.transitions.length > 0) {
    lines.push(`  state "${text(machine.id)} (in every state)" as ${id('')}`);
    if (machine.description) lines.push(`  ${id('')} : ${text(machine.description)}`);
  }
  for (const edge of edgesOf(machine))
    lines.push(`  ${id(edge.source)} --> ${id(edge.target)} : ${mermaidLabel(edge)}`);
  return `${lines.join('\n')}\n`;
}

function mermaidLabel(edge: Edge): string {
  return text(edgeLabel(edge));
}

/**
 * Mermaid ids allow neither `-` nor spaces, and nested paths are flattened with `_`; the root
 * (for its own transitions) takes the machine's id, renamed if a state already has it.
 */
function mermaidIds(machine: MachineInfo): Map<string, string> {
  const ids = new Map<string, string>();
  const safe = (s: string): string => s.replace(/[^A-Za-z0-9_]/g, '_');
  for (const state of machine.states) ids.set(state.path, safe(state.path));
  const taken = new Set(ids.values());
  let rootId = safe(machine.id);
  while (taken.has(rootId)) rootId = `${rootId}_root`;
  ids.set('', rootId);
  return ids;
}

/**
 * Mermaid's state grammar ends a description or label at `:` or `;` and treats `#` as a
 * comment start (stateDiagram.jison: DESCR is `":"[^:\n;]+`), so those become safe look-alikes.
 */
function text(s: string): string {
  return s
    .replace(/\s*:\s*/g, ' — ')
    .replace(/;/g, ',')
    .replace(/#/g, 'no. ')
    .replace(/"/g, "'")
    .replace(/\s+/g, ' ')
    .trim();
}
