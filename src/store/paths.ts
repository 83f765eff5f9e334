import * as fs from 'node:fs';
import * as path from 'node:path';
import { nonBlank, qmdCacheDir } from '../env.js';
import { QmdError } from '../errors.js';
import { indexProblem } from './index-problems.js';
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
  return chosen === undefined ? defaultIndexPath(env) : path.resolve(chosen);
}

/** The index when none is named: `index.sqlite` in qmd's cache directory. */
export function defaultIndexPath(env: NodeJS.ProcessEnv = process.env): string {
  return qmdCacheDir(env, 'index.sqlite');
}

/**
 * INDEX_MISSING (`No index at PATH: make one with …`) when `file` is missing with its folder
 * and was named by `--index` or `QMD_INDEX`, else undefined. `qmd mcp` serves before the first
 * `collection add` (issue 32), but a mistyped `--index ~/note/idx.sqlite` must fail at once
 * rather than leave a server answering "no index yet" forever. The default folder may be
 * missing on a fresh machine, and so may the peer's `INDEX_PATH` folder (the peer makes it; a
 * client configured for it may name one that does not exist yet): `collection add` makes them.
 */
export function mistypedIndex(file: string, env: NodeJS.ProcessEnv = process.env): QmdError | undefined {
  if (fs.existsSync(file) || fs.existsSync(path.dirname(file))) return undefined;
  const unnamed = resolveIndexPath({ env: { ...env, QMD_INDEX: undefined } });
  if (file === unnamed || file === defaultIndexPath(env)) return undefined;
  return indexProblem.missing(file);
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
