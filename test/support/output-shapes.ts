/**
 * The shape of qmd 2.x's outputs, with what may differ between two engines taken out: docids
 * (6 hex characters there, 8 here), scores, line numbers, sizes, times and the snippet's lines.
 * Two outputs of the same shape have the same skeleton.
 */

/** One line's skeleton: digits, docids and qmd:// paths replaced by placeholders. */
export function lineSkeleton(line: string): string {
  return line
    .replace(/#[0-9a-f]{6,}/g, '#ID')
    .replace(/qmd:\/\/[^\s,"`<]+/g, 'URI')
    .replace(/@@ -\d+,\d+ @@ \(\d+ before, \d+ after\)/g, '@@ HUNK @@')
    .replace(/\d+(\.\d+)?/g, 'N');
}

/** The terminal format of search results: each result's header lines, up to its snippet. */
export function cliResultSkeleton(stdout: string): string[][] {
  return stdout
    .trimEnd()
    .split(/\n\n\n+(?=qmd:\/\/|\.\/|\/)/)
    .map((block) => {
      const out: string[] = [];
      for (const line of block.split('\n')) {
        if (/^(qmd:\/\/|\.\/|\/)\S+/.test(line) && out.length === 0) out.push(lineSkeleton(line));
        else if (/^(Title|Context|Score):/.test(line)) out.push(line.replace(/:.*/, ':'));
        else if (line.startsWith('@@ ')) {
          out.push(lineSkeleton(line));
          break;
        }
      }
      return out;
    });
}

/** The keys of each object of a JSON array, sorted. */
export function jsonKeys(stdout: string): string[][] {
  return (JSON.parse(stdout) as Array<Record<string, unknown>>).map((row) => Object.keys(row).sort());
}

/** Lines that start a record in qmd 2.x's formats (a context may span several lines in CSV and files). */
export function recordStarts(stdout: string, start: RegExp): string[] {
  return stdout
    .split('\n')
    .filter((line) => start.test(line))
    .map(lineSkeleton);
}

/** The `qmd://` URIs in an output, in order. */
export function uris(stdout: string): string[] {
  return [...stdout.matchAll(/qmd:\/\/[^\s,"`<]+/g)].map((m) => m[0]);
}
