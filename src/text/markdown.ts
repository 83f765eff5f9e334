import * as path from 'node:path';

const atxHeading = /^ {0,3}#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$/;
const setextUnderline = /^ {0,3}(?:=+|-+)[ \t]*$/;
const fence = /^ {0,3}(```|~~~)/;

/**
 * The title of a note: its first markdown heading (ATX `# Title` of any level, or a setext
 * `Title` over `===`/`---`), skipping YAML front matter and fenced code; else the file name
 * without its extension.
 */
export function extractTitle(text: string, relativePath: string): string {
  const lines = text.split(/\r?\n/, 400);
  let i = 0;
  if (lines[0] === '---') {
    const end = lines.indexOf('---', 1);
    if (end > 0) i = end + 1;
  }
  let inFence: string | undefined;
  for (; i < lines.length; i++) {
    const line = lines[i] ?? '';
    const fenced = fence.exec(line);
    if (fenced !== null) {
      if (inFence === undefined) inFence = fenced[1];
      else if (fenced[1] === inFence) inFence = undefined;
      continue;
    }
    if (inFence !== undefined) continue;
    const heading = atxHeading.exec(line)?.[1];
    if (heading !== undefined && heading.trim() !== '') return clean(heading);
    const next = lines[i + 1];
    if (next !== undefined && line.trim() !== '' && !/^\s/.test(line) && setextUnderline.test(next)) {
      return clean(line);
    }
  }
  return path.basename(relativePath, path.extname(relativePath));
}

/** Whitespace folded, never cut: qmd 2.x prints a title whole, in text and `--json`. */
function clean(title: string): string {
  return title.replace(/\s+/g, ' ').trim();
}

/** Offsets where each line starts; a final newline does not start another line. */
export function lineStarts(text: string): number[] {
  const starts = [0];
  for (let i = text.indexOf('\n'); i !== -1 && i + 1 < text.length; i = text.indexOf('\n', i + 1)) {
    starts.push(i + 1);
  }
  return starts;
}

/** 1-based line number of a character offset. */
export function lineAt(text: string, offset: number): number {
  let line = 1;
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) line++;
  return line;
}
