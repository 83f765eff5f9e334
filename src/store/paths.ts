import * as path from 'node:path';
import { nonBlank, qmdCacheDir } from '../env.js';
import { QmdError } from '../errors.js';
import { climbs } from './refs.js';

/**
 * Where the index lives (docs/design.md §6): `--index PATH`, else `QMD_INDEX`, else
 * `INDEX_PATH` (the variable qmd 2.8 reads, so a client configured for it finds its index),
 * else `index.sqlite` in qmd's cache directory (`qmdCacheDir`: `$XDG_CACHE_HOME/qmd`, else
 * `~/.cache/qmd`). Blank values count as unset, so `QMD_INDEX=` does not point the index at
 * the current directory.
 */
export function resolveIndexPath(options: { flag?: string; env?: NodeJS.ProcessEnv } = {}): string {
  const env = options.env ?? process.env;
  const chosen = nonBlank(options.flag) ?? nonBlank(env.QMD_INDEX) ?? nonBlank(env.INDEX_PATH);
  return chosen === undefined ? qmdCacheDir(env, 'index.sqlite') : path.resolve(chosen);
}

/** True when `child` is `root` itself or below it (both absolute, already real paths). */
export function isInside(root: string, child: string): boolean {
  const relative = path.relative(root, child);
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
}

const validName = /^[\p{L}\p{N}][\p{L}\p{N}._-]{0,63}$/u;

/** A collection name is one path segment: letters, digits, `.`, `_`, `-`; no leading dot. */
export function checkCollectionName(name: string): string {
  if (!validName.test(name)) {
    throw new QmdError(
      'BAD_ARGUMENT',
      `Invalid collection name "${name}": use letters, digits, ".", "_" or "-" (at most 64, not starting with "." or "-")`,
    );
  }
  return name;
}

/** A valid name derived from a directory name: `My Notes!` → `My-Notes`. */
export function nameFromDirectory(dir: string): string {
  const cleaned = path
    .basename(dir)
    .replace(/[^\p{L}\p{N}._-]+/gu, '-')
    .replace(/^[._-]+|[-]+$/g, '')
    .slice(0, 64);
  return cleaned === '' ? 'notes' : cleaned;
}

/**
 * The mask is a glob relative to the root: it may not climb out of it or be absolute. A `..`
 * segment is what `refs.ts` (the authority on references) calls climbing.
 */
export function checkMask(mask: string): string {
  const trimmed = mask.trim();
  if (trimmed === '' || path.isAbsolute(trimmed) || /^[A-Za-z]:/.test(trimmed) || climbs(trimmed)) {
    throw new QmdError('BAD_ARGUMENT', `Invalid mask "${mask}": use a glob relative to the directory, like **/*.md`);
  }
  return trimmed;
}
