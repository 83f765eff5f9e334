import * as fs from 'node:fs';
import * as path from 'node:path';
import type { IndexTarget, WatchedIndex } from '../core/watch-writer.js';
import { ignoreRule } from '../indexing/ignore.js';
import { listFiles } from '../indexing/scan.js';

/** Files looked at (stat and the index's row) between two turns of the event loop. */
const SLICE = 256;
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
 * changed while nobody watched) and each round of polling. The listing is the scan's own
 * (`listFiles` and `ignoreRule`: the same mask and ignore rules as `update`); each file's
 * mtime and size are compared with the index's row, as `update` skips a file unchanged by stat;
 * then the index's paths are read in pages and those not listed are gone. Nothing is read or
 * written here: the paths go to the watcher's batches. It yields every `SLICE` files, so no
 * step holds the event loop long at any size (docs/design.md §9.2).
 */
export async function sweepCollection(
  index: WatchedIndex,
  target: IndexTarget,
  options: { signal?: AbortSignal; exclude?: (relative: string) => boolean } = {},
): Promise<SweepResult> {
  const { signal, exclude } = options;
  let listed: string[];
  try {
    listed = await listFiles(target.root, target.mask, target.ignore, signal);
  } catch (error) {
    return { changed: [], removed: [], files: 0, failed: error instanceof Error ? error.message : String(error) };
  }
  // An aborted listing may be partial: never take it for the folder (its missing files would be removed).
  if (signal?.aborted) return { changed: [], removed: [], files: 0, failed: 'aborted' };
  const rule = ignoreRule(target.mask);
  const files = listed.filter((relative) => rule(relative) === undefined && exclude?.(relative) !== true);
  const found = new Set(files);
  const changed: string[] = [];
  for (let i = 0; i < files.length; i++) {
    if (i % SLICE === SLICE - 1) {
      await turn();
      if (signal?.aborted) return { changed: [], removed: [], files: i, failed: 'aborted' };
    }
    const relative = files[i] as string;
    let stat: fs.Stats;
    try {
      stat = fs.statSync(path.join(target.root, relative));
    } catch {
      found.delete(relative);
      continue;
    }
    const known = index.known(target.name, relative);
    if (known === undefined || known.mtimeMs !== stat.mtimeMs || known.size !== stat.size) changed.push(relative);
  }
  const removed: string[] = [];
  for (let after = ''; ; ) {
    const page = index.indexedPaths(target.name, after, PAGE);
    for (const indexed of page) if (!found.has(indexed)) removed.push(indexed);
    const last = page.at(-1);
    if (last === undefined || page.length < PAGE) break;
    after = last;
    await turn();
    if (signal?.aborted) return { changed: [], removed: [], files: files.length, failed: 'aborted' };
  }
  return { changed, removed, files: files.length };
}

function turn(): Promise<void> {
  return new Promise<void>((resolve) => setImmediate(resolve));
}
