/**
 * What a command may draw on one of its output streams. A terminal gets a progress bar, colour
 * and lines cut to its width; anything else (a pipe, a file, `qmd mcp`'s client) gets plain
 * lines and never an escape sequence. Read once per stream, when the command starts; `columns`
 * is read again on each draw (`width()`), so a resized window is followed.
 */
export interface Terminal {
  /** The stream is a terminal (`isTTY`). */
  readonly tty: boolean;
  /** Colour is allowed: a terminal, `NO_COLOR` unset or empty (no-color.org), and `TERM` not `dumb`. */
  readonly colour: boolean;
  /** The terminal's width now; 80 when it does not say (a pty of size 0, or not a terminal). */
  width(): number;
}

/** The part of a `tty.WriteStream` this reads; a plain `Writable` has neither member. */
export interface TerminalStream {
  isTTY?: boolean;
  columns?: number;
}

export const DEFAULT_WIDTH = 80;

export function terminalOf(stream: TerminalStream, env: NodeJS.ProcessEnv = process.env): Terminal {
  const tty = stream.isTTY === true;
  const noColour = (env.NO_COLOR ?? '') !== '' || env.TERM === 'dumb';
  return {
    tty,
    colour: tty && !noColour,
    width: () => {
      const columns = stream.columns;
      return tty && typeof columns === 'number' && columns > 0 ? columns : DEFAULT_WIDTH;
    },
  };
}

/** SGR styles, or the identity when colour is off: call sites read the same either way. */
export interface Paint {
  bold(text: string): string;
  dim(text: string): string;
  cyan(text: string): string;
  green(text: string): string;
  yellow(text: string): string;
}

const sgr = (open: number, close: number) => (text: string) =>
  text === '' ? text : `\x1b[${open}m${text}\x1b[${close}m`;
const plain = (text: string) => text;

export function paintFor(terminal: Pick<Terminal, 'colour'>): Paint {
  if (!terminal.colour) return { bold: plain, dim: plain, cyan: plain, green: plain, yellow: plain };
  return { bold: sgr(1, 22), dim: sgr(2, 22), cyan: sgr(36, 39), green: sgr(32, 39), yellow: sgr(33, 39) };
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: matching escape sequences is the point.
const ESCAPES = /\x1b\[[0-9;?]*[A-Za-z]/g;

/** How many columns `text` takes: escape sequences take none; each code point one (notes are mostly Latin text). */
export function visibleLength(text: string): number {
  return [...text.replace(ESCAPES, '')].length;
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: matching escape sequences is the point.
const ESCAPE_HERE = /\x1b\[[0-9;?]*[A-Za-z]/y;

/**
 * `text` cut to `width` columns with `…` at the cut. Escape sequences are kept whole and cost
 * nothing; a cut line that had any ends with a reset, so no colour runs on past it.
 */
export function fitWidth(text: string, width: number): string {
  if (visibleLength(text) <= width) return text;
  if (width <= 0) return '';
  let out = '';
  let used = 0;
  let styled = false;
  for (let i = 0; i < text.length && used < width - 1; ) {
    ESCAPE_HERE.lastIndex = i;
    const sequence = ESCAPE_HERE.exec(text);
    if (sequence !== null) {
      out += sequence[0];
      styled = true;
      i += sequence[0].length;
      continue;
    }
    const char = String.fromCodePoint(text.codePointAt(i) as number);
    out += char;
    used++;
    i += char.length;
  }
  return `${out}…${styled ? '\x1b[0m' : ''}`;
}

/**
 * How a command's results are drawn on its stdout: on a terminal, coloured (unless
 * `NO_COLOR`), matched words marked in colour, and snippet lines cut to the width; anything
 * else gets the plain text scripts read (docs/design.md §6).
 */
export interface OutputStyle {
  paint: Paint;
  /** The terminal's width, or `undefined` when lines are never cut (not a terminal). */
  width: number | undefined;
  /** The marks put around matched words; none when colour is off. */
  highlight?: { open: string; close: string };
}

export const PLAIN_OUTPUT: OutputStyle = { paint: paintFor({ colour: false }), width: undefined };

export function outputStyle(
  stream: TerminalStream = process.stdout,
  env: NodeJS.ProcessEnv = process.env,
): OutputStyle {
  const terminal = terminalOf(stream, env);
  if (!terminal.tty) return PLAIN_OUTPUT;
  return {
    paint: paintFor(terminal),
    width: terminal.width(),
    ...(terminal.colour && { highlight: { open: '\x1b[1;33m', close: '\x1b[22;39m' } }),
  };
}
