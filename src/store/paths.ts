import * as fs from 'node:fs';
import * as path from 'node:path';
import { nonBlank, qmdCacheDir } from '../env.js';
import { QmdError } from '../errors.js';
import { indexProblem } from './index-problems.js';
import { climbs } from './refs.js';
import { APPLICATION_ID } from './schema/schema-id.js';

/**
 * Where the index lives (docs/design.md §6): `--index PATH` (a bare name, `--index work`, is a
 * named index, `indexes/work.sqlite` in the cache directory, as qmd 2.x's `--index work` names
 * one), else `QMD_INDEX`, else `INDEX_PATH` (the variable qmd 2.8 reads, so a client configured
 * for it finds its index), else `indexes/index.sqlite` in qmd's cache directory (`qmdCacheDir`:
 * `$XDG_CACHE_HOME/qmd`, else `~/.cache/qmd`). Blank values count as unset, so `QMD_INDEX=`
 * does not point the index at the current directory.
 *
 * Not qmd 2.x's default, `index.sqlite` in the same directory: qmd 2.8.3 opening an index of
 * ours drops its `collections` table, and every document with it by cascade (measured, README
 * "Coming from qmd 2.x"), so the two must never share a file. An index of ours already at that
 * old default (made before this rule, its header says so: `legacyIndexPath`) is still used
 * while the new default does not exist.
 */
export function resolveIndexPath(options: { flag?: string; env?: NodeJS.ProcessEnv } = {}): string {
  const env = options.env ?? process.env;
  const flag = nonBlank(options.flag);
  if (flag !== undefined && isIndexName(flag)) return namedIndexPath(env, flag);
  const chosen = flag ?? nonBlank(env.QMD_INDEX) ?? nonBlank(env.INDEX_PATH);
  return chosen === undefined ? defaultIndexPath(env) : path.resolve(chosen);
}

/**
 * The index when none is named: `indexes/index.sqlite` in qmd's cache directory, or an index of
 * ours at the old default (`legacyIndexPath`) while that one does not exist.
 */
export function defaultIndexPath(env: NodeJS.ProcessEnv = process.env): string {
  const fresh = namedIndexPath(env, DEFAULT_INDEX_NAME);
  if (fs.existsSync(fresh)) return fresh;
  return legacyIndexPath(env) ?? fresh;
}

/**
 * INDEX_MISSING (`No index at PATH: make one with …`) when `file` is missing with its folder
 * and was named by `--index` or `QMD_INDEX`, else undefined. `qmd mcp` serves before the first
 * `collection add` (a client configured on a fresh machine must find a live server), but a mistyped `--index ~/note/idx.sqlite` must fail at once
 * rather than leave a server answering "no index yet" forever. The default folder may be
 * missing on a fresh machine, and so may a named index's (`--index work`: the same folder) and
 * the peer's `INDEX_PATH` folder (the peer makes it; a client configured for it may name one
 * that does not exist yet): `collection add` makes them.
 */
export function mistypedIndex(file: string, env: NodeJS.ProcessEnv = process.env): QmdError | undefined {
  if (fs.existsSync(file) || fs.existsSync(path.dirname(file))) return undefined;
  const unnamed = resolveIndexPath({ env: { ...env, QMD_INDEX: undefined } });
  if (file === unnamed || file === defaultIndexPath(env)) return undefined;
  if (path.dirname(file) === path.dirname(namedIndexPath(env, DEFAULT_INDEX_NAME))) return undefined;
  return indexProblem.missing(file);
}

/** The name of the default index: qmd 2.x's too (`--index index` is the default there and here). */
export const DEFAULT_INDEX_NAME = 'index';

/** `--index work`: letters, digits, `_`, `-`; a `.` or a `/` makes it a path. */
export function isIndexName(text: string): boolean {
  return /^[\p{L}\p{N}][\p{L}\p{N}_-]{0,63}$/u.test(text);
}

/** Where the named index NAME lives: `indexes/NAME.sqlite` in the cache directory. */
export function namedIndexPath(env: NodeJS.ProcessEnv, name: string): string {
  return qmdCacheDir(env, 'indexes', `${name}.sqlite`);
}

/**
 * `index.sqlite` in the cache directory when it is an index of ours (its header carries our
 * application id), else undefined: there it is qmd 2.x's, or nothing.
 */
export function legacyIndexPath(env: NodeJS.ProcessEnv): string | undefined {
  const legacy = qmdCacheDir(env, 'index.sqlite');
  return headerApplicationId(legacy) === APPLICATION_ID ? legacy : undefined;
}

/**
 * A SQLite file's application id, read from its 100-byte header (offset 68, big-endian), or
 * undefined when it cannot be read. No SQLite connection: this runs at every start.
 */
export function headerApplicationId(file: string): number | undefined {
  let fd: number | undefined;
  try {
    fd = fs.openSync(file, 'r');
    const header = Buffer.alloc(100);
    if (fs.readSync(fd, header, 0, 100, 0) < 100) return undefined;
    if (header.toString('latin1', 0, 16) !== 'SQLite format 3\0') return undefined;
    return header.readUInt32BE(68);
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
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
