/**
 * Text from qmd 2.x's files as `qmd migrate` prints it: one line, every control character shown
 * as an escape (`\x1b`, `\t`, `\n`) rather than sent to the terminal. An `index.yml` is a file
 * anyone who could write it may have filled: an escape sequence in a collection name or a
 * context would otherwise recolour, move or clear what the person reads, or hide a line (a
 * carriage return), and a bidirectional override (U+202E) would reorder it.
 */
export function printable(text: string): string {
  // C0 and C1 controls, DEL, and the bidirectional embeddings, overrides and isolates.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point.
  return text.replace(/[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/g, (c) => {
    const named: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };
    const code = c.charCodeAt(0);
    return named[c] ?? (code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16)}`);
  });
}
