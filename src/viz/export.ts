import type { AnyStateMachine } from 'xstate';
import { toDot } from './dot.js';
import { toJsonMachine } from './json.js';
import { toMermaid } from './mermaid.js';
import { describeMachine } from './model.js';
import { toStately } from './stately.js';

export const EXPORT_FORMATS = ['mermaid', 'dot', 'stately', 'json'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

export function isExportFormat(value: string): value is ExportFormat {
  return (EXPORT_FORMATS as readonly string[]).includes(value);
}

/**
 * `qmd lifecycle export --format F`: the machine drawn from its own definition, every
 * transition included (guarded, eventless, delayed, done/error). Deterministic, ends with a
 * newline. `json` is pretty-printed `JsonMachine`.
 */
export function exportMachine(machine: AnyStateMachine, format: ExportFormat): string {
  const info = describeMachine(machine);
  switch (format) {
    case 'mermaid':
      return toMermaid(info);
    case 'dot':
      return toDot(info);
    case 'stately':
      return toStately(info);
    case 'json':
      return `${JSON.stringify(toJsonMachine(info), null, 2)}\n`;
  }
}
