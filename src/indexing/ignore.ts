import picomatch from 'picomatch';
import type { IgnoredFiles, IgnoreReason } from './types.js';

/** How many example folders a report keeps for each reason. */
const EXAMPLES = 3;

/**
 * The one ignore rule of a scan: a vault's `.obsidian/`, a `.git/` and a project's `node_modules`
 * are not notes, yet a mask may name them on purpose. The mask is matched with hidden names treated as
 * any other (`dot: true`); then a file under `node_modules` or with a hidden name on its path
 * (`.git`, `.obsidian`, `.draft.md`) is indexed only if one alternative of the mask matches it
 * and names each such name as a segment of its own: `{*.md,**\/*.md,.obsidian/**\/*.md}`
 * includes `.obsidian/` (not `sub/.obsidian/`), `**\/.*\/*.md` every hidden folder,
 * `{**\/*.md,vendor/node_modules/**\/*.md}` that `node_modules` only. The alternatives are those
 * of a mask written as one brace group. Not picomatch's `dot: false`: inside braces its `*.md`
 * matches `.draft.md` (measured, picomatch 4.0.7).
 *
 * Returns why a listed path is passed by, and the folder (or hidden file) that decides it, or
 * `undefined` when the file is indexed.
 */
export function ignoreRule(mask: string): (path: string) => { reason: IgnoreReason; folder: string } | undefined {
  // A comma-separated mask (qmd 2.x's union) is its parts, each maybe one brace group.
  const alternatives = splitMask(mask)
    .flatMap(topLevelAlternatives)
    .map((alternative) => {
      const names = alternative
        .split(/[/{},]/)
        .filter(special)
        .map((token) => picomatch(token, { dot: true }));
      return { matches: picomatch(alternative, { dot: true }), names };
    });
  return (path) => {
    const segments = path.split('/');
    if (!segments.some(special)) return undefined;
    const matching = alternatives.filter(({ matches }) => matches(path));
    const names = (a: (typeof alternatives)[number], s: string) => a.names.some((isMatch) => isMatch(s));
    if (matching.some((a) => segments.every((s) => !special(s) || names(a, s)))) return undefined;
    // The reason is the first such name that no matching alternative names.
    const unnamed = segments.findIndex((s) => special(s) && !matching.some((a) => names(a, s)));
    const first = unnamed >= 0 ? unnamed : segments.findIndex(special);
    return {
      reason: segments[first] === 'node_modules' ? 'node_modules' : 'hidden',
      // A folder ends with `/`; a hidden file is itself.
      folder: segments.slice(0, first + 1).join('/') + (first < segments.length - 1 ? '/' : ''),
    };
  };
}

/**
 * Whether a file at `path` (relative to the root, `/`-separated) belongs to a collection of
 * `mask` and `ignore`: the mask matches it, no `ignore` glob does, and `ignoreRule` does not
 * pass it by. The same rules a scan applies to its listing (`scan.ts`: tinyglobby matches with
 * picomatch, `dot: true`), for one path at a time: what a watcher asks of each event.
 */
export function pathFilter(mask: string, ignore: readonly string[] = []): (path: string) => boolean {
  const matches = picomatch(splitMask(mask), { dot: true });
  const ignored = ignore.length === 0 ? () => false : picomatch([...ignore], { dot: true });
  const rule = ignoreRule(mask);
  return (path) => matches(path) && !ignored(path) && rule(path) === undefined;
}

/**
 * Whether nothing under `folder` can be indexed by the hidden/`node_modules` rule, so a watcher
 * need not watch it: a folder with a hidden or `node_modules` segment that no alternative of
 * the mask names (`.git/`, `.obsidian/` under `**\/*.md`). A folder the mask names is watched.
 */
export function folderPassedBy(mask: string): (folder: string) => boolean {
  const names = splitMask(mask)
    .flatMap(topLevelAlternatives)
    .map((alternative) =>
      alternative
        .split(/[/{},]/)
        .filter(special)
        .map((token) => picomatch(token, { dot: true })),
    );
  return (folder) => {
    const segments = folder.split('/').filter(special);
    if (segments.length === 0) return false;
    return !names.some((alternative) => segments.every((s) => alternative.some((isMatch) => isMatch(s))));
  };
}

function special(name: string): boolean {
  return name === 'node_modules' || name.startsWith('.');
}

/** `{a,b/{c,d}}` → `a`, `b/{c,d}`; any other mask is its own one alternative. */
function topLevelAlternatives(mask: string): string[] {
  if (!mask.startsWith('{') || !mask.endsWith('}')) return [mask];
  const parts: string[] = [];
  let depth = 0;
  let start = 1;
  for (let i = 1; i < mask.length - 1; i++) {
    const c = mask[i];
    if (c === '{') depth++;
    else if (c === '}') {
      if (--depth < 0) return [mask];
    } else if (c === ',' && depth === 0) {
      parts.push(mask.slice(start, i));
      start = i + 1;
    }
  }
  if (depth !== 0) return [mask];
  parts.push(mask.slice(start, -1));
  return parts;
}

export function noneIgnored(): IgnoredFiles {
  return { counts: { node_modules: 0, hidden: 0 }, examples: { node_modules: [], hidden: [] } };
}

/** Counts one ignored file into `into`, keeping a few distinct folders as examples. */
export function countIgnored(into: IgnoredFiles, reason: IgnoreReason, folder: string): void {
  into.counts[reason]++;
  const examples = into.examples[reason];
  if (examples.length < EXAMPLES && !examples.includes(folder)) examples.push(folder);
}

/** Adds `from` into `into`, its examples given `prefix` (`notes/`: a report addresses them as documents are). */
export function addIgnored(into: IgnoredFiles, from: IgnoredFiles, prefix = ''): void {
  for (const reason of ['node_modules', 'hidden'] as const) {
    into.counts[reason] += from.counts[reason];
    for (const folder of from.examples[reason]) {
      const example = `${prefix}${folder}`;
      if (into.examples[reason].length < EXAMPLES && !into.examples[reason].includes(example))
        into.examples[reason].push(example);
    }
  }
}

/**
 * A mask's globs: split at commas outside `{}` and `[]`, as qmd 2.x reads `--mask` and
 * `pattern:` (`sources/**\/*.md,CO - *.md` is the union of two; `{a,b}/*.md` stays one),
 * blanks dropped.
 */
export function splitMask(mask: string): string[] {
  const parts: string[] = [];
  let current = '';
  let braces = 0;
  let brackets = 0;
  for (const ch of mask) {
    if (ch === '{') braces++;
    else if (ch === '}' && braces > 0) braces--;
    else if (ch === '[') brackets++;
    else if (ch === ']' && brackets > 0) brackets--;
    else if (ch === ',' && braces === 0 && brackets === 0) {
      parts.push(current);
      current = '';
      continue;
    }
    current += ch;
  }
  parts.push(current);
  return parts.map((part) => part.trim()).filter((part) => part !== '');
}
