import * as fs from 'node:fs';
import * as path from 'node:path';
import type { IndexTarget, WatchedIndex } from '../core/watch-writer.js';
import { folderPassedBy, pathFilter } from '../indexing/ignore.js';

/** Files looked at (stat and the index's row) between two turns of the event loop. */
const SLICE = 64;
/** Folders listed between two turns of the event loop. */
const FOLDERS = 32;
/** Indexed paths read per page when looking for those gone. */
const PAGE = 512;

export interface SweepResult {
  /** Files whose mtime or size differs from the index's, or that it does not have. */
  changed: string[];
  /** Indexed paths no longer found. */
  removed: string[];
  /** Files looked at. */
  files: number;
  /** The folder could not be listed (gone, unreadable): nothing is said of it. */
  failed?: string;
}

/**
 * One pass over a collection's folder, compared with the index: the catch-up at start (what
 * changed while nobody watched) and each round of polling. The folder is walked a few folders
 * at a time (`FOLDERS`, symlinks not followed, folders the hidden/`node_modules` rule passes by
 * not entered) and each file kept by the collection's rules (`pathFilter`: the scan's mask,
 * `ignore` globs and hidden rule, one copy); its mtime and size are compared with the index's
 * row, as `update` skips a file unchanged by stat; then the index's paths are read in pages and
 * those not found are gone. Nothing is read or written here: the paths go to the watcher's
 * batches. Not the scan's listing (tinyglobby): that one returns the whole folder from one
 * call, which held the event loop 79 ms at 10k notes (load 9–11); this yields every `FOLDERS`
 * folders and `SLICE` files, so no step holds it long at any size (docs/design.md §9.2).
 */
export async function sweepCollection(
  index: WatchedIndex,
  target: IndexTarget,
  options: { signal?: AbortSignal; exclude?: (relative: string) => boolean } = {},
): Promise<SweepResult> {
  const { signal, exclude } = options;
  try {
    if (!fs.statSync(target.root).isDirectory()) throw new Error('not a directory');
  } catch (error) {
    return { changed: [], removed: [], files: 0, failed: error instanceof Error ? error.message : String(error) };
  }
  const accepts = pathFilter(target.mask, target.ignore);
  const passedBy = folderPassedBy(target.mask);
  const found = new Set<string>();
  const changed: string[] = [];
  let looked = 0;
  const stack = [''];
  let folders = 0;
  while (stack.length > 0) {
    const folder = stack.pop() as string;
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(path.join(target.root, folder), { withFileTypes: true });
    } catch {
      continue;
    }
    for (const entry of entries) {
      const relative = folder === '' ? entry.name : `${folder}/${entry.name}`;
      if (entry.isDirectory()) {
        if (!passedBy(relative)) stack.push(relative);
        continue;
      }
      if (!entry.isFile() || !accepts(relative) || exclude?.(relative) === true) continue;
      found.add(relative);
      let stat: fs.Stats;
      try {
        stat = fs.statSync(path.join(target.root, relative));
      } catch {
        found.delete(relative);
        continue;
      }
      const known = index.known(target.name, relative);
      if (known === undefined || known.mtimeMs !== stat.mtimeMs || known.size !== stat.size) changed.push(relative);
      if (++looked % SLICE === 0) {
        await turn();
        if (signal?.aborted) return { changed: [], removed: [], files: looked, failed: 'aborted' };
      }
    }
    if (++folders % FOLDERS === 0) {
      await turn();
      if (signal?.aborted) return { changed: [], removed: [], files: looked, failed: 'aborted' };
    }
  }
  const removed: string[] = [];
  for (let after = ''; ; ) {
    const page = index.indexedPaths(target.name, after, PAGE);
    for (const indexed of page) if (!found.has(indexed)) removed.push(indexed);
    const last = page.at(-1);
    if (last === undefined || page.length < PAGE) break;
    after = last;
    await turn();
    if (signal?.aborted) return { changed: [], removed: [], files: looked, failed: 'aborted' };
  }
  return { changed, removed, files: looked };
}

function turn(): Promise<void> {
  return new Promise<void>((resolve) => setImmediate(resolve));
}
