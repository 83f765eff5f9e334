import { QmdError } from '../../errors.js';

/**
 * qmd 2.x's output formats for search results and multi-get, by `--format KIND` or its
 * legacy flags (`--json`, `--csv`, `--md`, `--xml`, `--files`), which it still reads.
 */
export const OUTPUT_FORMATS = ['cli', 'json', 'csv', 'md', 'xml', 'files'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

export interface FormatFlags {
  format?: string;
  json?: boolean;
  csv?: boolean;
  md?: boolean;
  xml?: boolean;
  files?: boolean;
}

/** `--format` wins; else the first legacy flag in qmd 2.x's order (csv, md, xml, files, json); else `cli`. */
export function outputFormat(flags: FormatFlags): OutputFormat {
  if (flags.format !== undefined) {
    const kind = flags.format.trim().toLowerCase();
    if (!(OUTPUT_FORMATS as readonly string[]).includes(kind)) {
      throw new QmdError('BAD_ARGUMENT', `Unknown --format ${flags.format}: use one of ${OUTPUT_FORMATS.join(', ')}`);
    }
    return kind as OutputFormat;
  }
  if (flags.csv) return 'csv';
  if (flags.md) return 'md';
  if (flags.xml) return 'xml';
  if (flags.files) return 'files';
  if (flags.json) return 'json';
  return 'cli';
}

/** qmd 2.x's CSV field: quoted when it holds a comma, a quote or a line end. */
export function csvField(value: string | number | undefined): string {
  if (value === undefined) return '';
  const text = String(value);
  return /[",\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function xmlEscape(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;');
}

/** `12: text` for each line, numbered from `first`. */
export function numberLines(text: string, first: number): string {
  return text
    .split('\n')
    .map((line, i) => `${first + i}: ${line}`)
    .join('\n');
}

/** `qmd://collection/path.md`: how qmd 2.x names a document, and a reference `get` takes. */
export function qmdUri(file: string): string {
  return `qmd://${file}`;
}
