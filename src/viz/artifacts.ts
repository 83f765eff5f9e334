import { createHash } from 'node:crypto';

/**
 * The generated artifacts checked into the repository: the README's Mermaid block and
 * `docs/lifecycle.svg`. Pure string functions, shared by the scripts that write them and the
 * tests that fail when they are stale.
 */

export const README_START = '<!-- lifecycle-diagram:start -->';
export const README_END = '<!-- lifecycle-diagram:end -->';

/** What goes between the README markers: a note and the fenced Mermaid export. */
export function readmeBlock(mermaid: string): string {
  return [
    '',
    '<!-- Generated from machines/lifecycle.ts by `npx tsx scripts/readme-diagram.ts`; do not edit by hand. -->',
    '```mermaid',
    mermaid.trimEnd(),
    '```',
    '',
  ].join('\n');
}

/** The text between the markers, or `null` when either is missing or they are out of order. */
export function betweenMarkers(text: string): string | null {
  const start = text.indexOf(README_START);
  const end = text.indexOf(README_END);
  if (start === -1 || end === -1 || end < start) return null;
  return text.slice(start + README_START.length, end);
}

/** `text` with only what lies between the markers replaced; throws if they are missing. */
export function replaceBetweenMarkers(text: string, block: string): string {
  if (betweenMarkers(text) === null) {
    throw new Error(`README.md needs the markers ${README_START} and ${README_END}, in that order`);
  }
  const start = text.indexOf(README_START) + README_START.length;
  const end = text.indexOf(README_END);
  return text.slice(0, start) + block + text.slice(end);
}

const STAMP = /<!-- dot-sha256: ([0-9a-f]{64}) -->/;

export function dotHash(dot: string): string {
  return createHash('sha256').update(dot).digest('hex');
}

/**
 * The SVG with the hash of the DOT it was rendered from, as a comment after the XML prolog:
 * a test compares it with the current DOT export without running Graphviz.
 */
export function stampSvg(svg: string, dot: string): string {
  const comment = `<!-- dot-sha256: ${dotHash(dot)} -->`;
  const prolog = svg.match(/^<\?xml[^>]*\?>\n?/);
  if (!prolog) return `${comment}\n${svg}`;
  return `${prolog[0]}${comment}\n${svg.slice(prolog[0].length)}`;
}

/** The DOT hash stamped into an SVG, or `null` if it has none. */
export function svgDotHash(svg: string): string | null {
  return svg.match(STAMP)?.[1] ?? null;
}
