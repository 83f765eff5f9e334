import { type Edge, edgesOf, stateNotes, wrap } from './labels.js';
import type { MachineInfo } from './model.js';

/**
 * Graphviz DOT with the same arrows as the Mermaid export (one per `edgesOf` edge), for
 * `docs/lifecycle.svg`. Deterministic: definition order, fixed attributes, no timestamps.
 * Dashed arrows are delayed (`after`), dotted ones eventless (`always`); green is an invoked
 * actor's `done`, red its `error`; a double border marks a final state. Graphviz sizes boxes
 * with Helvetica's metrics; the generous margin keeps text inside when a viewer substitutes a
 * wider font (DejaVu Sans under librsvg ran ~10% wider).
 */
export function toDot(machine: MachineInfo): string {
  const nested = machine.states.some((s) => s.type === 'compound' || s.type === 'parallel');
  const lines = [
    `digraph ${quote(machine.id)} {`,
    `  // Generated from the ${machine.id} machine definition. Do not edit by hand.`,
    `  graph [rankdir=TB, fontname="Helvetica", fontsize=12, nodesep=0.5, ranksep=0.45, pad=0.25${nested ? ', compound=true' : ''}];`,
    '  node [shape=box, style=rounded, fontname="Helvetica", fontsize=11, margin="0.3,0.12"];',
    '  edge [fontname="Helvetica", fontsize=9];',
    '  "[*]" [shape=point, width=0.15, label=""];',
  ];
  if (machine.initial !== null) lines.push(`  "[*]" -> ${quote(machine.initial)};`);

  const clusters = new Set<string>();
  const renderLevel = (parent: string, indent: string): void => {
    for (const state of machine.states.filter((s) => s.parent === parent)) {
      if (state.type === 'compound' || state.type === 'parallel') {
        clusters.add(state.path);
        lines.push(`${indent}subgraph ${quote(`cluster_${state.path}`)} {`);
        lines.push(`${indent}  label=${nodeLabel(state.key, stateNotes(state))}; style=rounded;`);
        // Graphviz draws arrows between nodes only: an invisible anchor stands for the cluster.
        lines.push(`${indent}  ${quote(state.path)} [shape=point, style=invis, width=0, label=""];`);
        renderLevel(state.path, `${indent}  `);
        lines.push(`${indent}}`);
        continue;
      }
      const extra = state.type === 'final' ? ', peripheries=2' : '';
      lines.push(`${indent}${quote(state.path)} [label=${nodeLabel(state.key, stateNotes(state))}${extra}];`);
    }
  };
  renderLevel('', '  ');

  const rootId = `#${machine.id}`;
  if (machine.transitions.length > 0) {
    const notes = machine.description ? [machine.description] : [];
    lines.push(
      `  ${quote(rootId)} [label=${nodeLabel(`${machine.id} (in every state)`, notes)}, style="rounded,dashed"];`,
    );
  }
  const edges = edgesOf(machine);
  const loops = new Map<string, number>();
  for (const e of edges) if (e.source === e.target) loops.set(e.source, (loops.get(e.source) ?? 0) + 1);
  const loopIndex = new Map<string, number>();
  for (const edge of edges) {
    const from = edge.source === '' ? rootId : edge.source;
    const to = edge.target === '' ? rootId : edge.target;
    const attrs = [`label=${label(edgeLines(edge))}`, ...kindStyle(edge)];
    // Several self-loops on one node all leave from its east side and their labels collide:
    // spread them over the node's sides instead.
    if (edge.source === edge.target && (loops.get(edge.source) ?? 0) > 1) {
      const i = loopIndex.get(edge.source) ?? 0;
      loopIndex.set(edge.source, i + 1);
      const port = LOOP_PORTS[i % LOOP_PORTS.length];
      attrs.push(`tailport=${port}`, `headport=${port}`);
    }
    if (clusters.has(edge.source)) attrs.push(`ltail=${quote(`cluster_${edge.source}`)}`);
    if (clusters.has(edge.target)) attrs.push(`lhead=${quote(`cluster_${edge.target}`)}`);
    lines.push(`  ${quote(from)} -> ${quote(to)} [${attrs.join(', ')}];`);
  }
  lines.push('}');
  return `${lines.join('\n')}\n`;
}

const LOOP_PORTS = ['n', 's', 'w', 'e'] as const;

/** An HTML-like label: the state's name in bold over its notes. */
function nodeLabel(name: string, notes: string[]): string {
  const lines = [`<b>${html(name)}</b>`, ...notes.flatMap((note) => wrap(note, 38)).map(html)];
  return `<${lines.join('<br/>')}>`;
}

function html(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** Events wrapped at `, `, then the guard, then the actions: joined with spaces they read as the Mermaid label. */
function edgeLines(edge: Edge): string[] {
  const lines = wrap(edge.triggers.join(', '), 40, ', ');
  if (edge.guard) lines.push(`[${edge.guard}]`);
  if (edge.actions.length > 0) lines.push(...wrap(`/ ${edge.actions.join(', ')}`, 40, ', '));
  return lines;
}

function kindStyle(edge: Edge): string[] {
  switch (edge.kind) {
    case 'after':
      return ['style=dashed'];
    case 'always':
      return ['style=dotted'];
    case 'done':
      return ['color="#2e7d32"', 'fontcolor="#2e7d32"'];
    case 'error':
      return ['color="#c62828"', 'fontcolor="#c62828"'];
    case 'event':
      return [];
  }
}

function label(lines: string[]): string {
  return `"${lines.map(escapeDot).join('\\n')}"`;
}

function quote(id: string): string {
  return `"${escapeDot(id)}"`;
}

function escapeDot(s: string): string {
  return s.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}
