import type { IgnoredFiles, IndexReport } from '../../core/types.js';
import { count } from '../terminal/progress.js';

/** What a report says after its count of files not indexed: how to include them. */
export type IgnoredHint = (ignored: IgnoredFiles) => string;

/**
 * The one line about files the mask's wildcards pass by (so a person whose notes are in a
 * hidden folder learns why they are missing, and how to include them), or nothing when there are
 * none: `not indexed: 24 files under node_modules (vendor/node_modules/), 3 hidden (.obsidian/); …`.
 */
export function formatIgnored(ignored: IgnoredFiles, hint: IgnoredHint): string | undefined {
  const parts: string[] = [];
  const { node_modules: modules, hidden } = ignored.counts;
  if (modules > 0)
    parts.push(`${plural(modules, 'file')} under node_modules (${ignored.examples.node_modules.join(', ')})`);
  if (hidden > 0) parts.push(`${plural(hidden, 'hidden file')} (${ignored.examples.hidden.join(', ')})`);
  return parts.length === 0 ? undefined : `  not indexed: ${parts.join(', ')}; ${hint(ignored)}`;
}

/** For `collection add`: a mask that would include the first folder passed by. */
export function addHint(mask: string): IgnoredHint {
  return (ignored) => `to index them, name them in --mask, e.g. --mask '${includingMask(mask, firstExample(ignored))}'`;
}

/** For `update`: the command that changes the mask of the collection the example is in. */
export function updateHint(masks: ReadonlyMap<string, string>): IgnoredHint {
  return (ignored) => {
    const example = ignored.examples.node_modules[0] ?? ignored.examples.hidden[0] ?? 'notes/.hidden/';
    const collection = example.slice(0, example.indexOf('/'));
    const mask = includingMask(masks.get(collection) ?? '**/*.md', firstExample(ignored));
    return `to index them, change its mask: qmd collection set-mask ${collection} '${mask}', then qmd update`;
  };
}

/** What `collection add` says when Ctrl-C stopped it (stderr, one line): what it kept, and what goes on. */
export function interruptedAdd(report: IndexReport, added: string | undefined): string {
  const partial = report.stopped?.partial;
  if (added === undefined) return 'Interrupted before any file was read: no collection was added.';
  if (report.stopped === undefined)
    return `Interrupted after the work was done: collection ${added} is indexed in full.`;
  const files = partial ? `${count(partial.read)} of ${count(partial.listed)} files` : 'all its files';
  return `Interrupted: collection ${added} was added with ${files}; qmd update indexes the rest (qmd collection remove ${added} undoes it).`;
}

/** What `update` says when Ctrl-C stopped it (stderr, one line): what was written, what was not. */
export function interruptedUpdate(report: IndexReport): string {
  const stopped = report.stopped;
  if (stopped === undefined) return 'Interrupted after the work was done: every collection is up to date.';
  const kept = `${report.added} added, ${report.updated} updated, ${report.removed} removed`;
  const partial = stopped.partial;
  const where = [
    stopped.complete.length > 0 && `read in full: ${stopped.complete.join(', ')}`,
    partial &&
      `${partial.collection}: ${count(partial.read)} of ${count(partial.listed)} files read, what is gone from it left for the next update`,
    stopped.untouched.length > 0 && `not read: ${stopped.untouched.join(', ')}`,
  ].filter(Boolean);
  return `Interrupted: kept ${kept} (${where.join('; ')}); qmd update finishes the rest.`;
}

/** The first example, relative to its collection's root (a report addresses it `collection/…`). */
function firstExample(ignored: IgnoredFiles): string {
  const example = ignored.examples.node_modules[0] ?? ignored.examples.hidden[0] ?? 'notes/.hidden/';
  return example.slice(example.indexOf('/') + 1);
}

/**
 * The mask with one more alternative, the example folder (or file) in its terms:
 * `{*.md,**\/*.md,.obsidian/**\/*.md}`. Inside braces picomatch's leading `**\/` no longer
 * matches the root (measured: `{**\/*.md,x}` misses `a.md`), hence `*.md` beside it.
 */
export function includingMask(mask: string, example: string): string {
  const leaf = /[{}]/.test(mask) ? '*.md' : (mask.split('/').at(-1) ?? '*.md');
  const extra = example.endsWith('/') ? `${example}**/${leaf}` : example;
  if (mask.startsWith('{') && mask.endsWith('}')) return `${mask.slice(0, -1)},${extra}}`;
  const alternatives = mask.startsWith('**/') ? [mask.slice(3), mask] : [mask];
  return `{${[...alternatives, extra].join(',')}}`;
}

function plural(n: number, word: string): string {
  return `${count(n)} ${word}${n === 1 ? '' : 's'}`;
}
