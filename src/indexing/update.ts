import { addIgnored, noneIgnored } from './ignore.js';
import type { WriteCounts } from './index-writer.js';
import { type CollectionScan, scanCollection } from './scan.js';
import type { IndexOptions, IndexReport } from './types.js';
import { collectRemovedTexts, commitStaged, commitUnit, removeGone, type UpdateParts } from './write-units.js';

export type { UpdateParts } from './write-units.js';

export const defaultMask = '**/*.md';

/** A collection as indexing reads it: where, which files, which to leave out. */
export interface IndexTarget {
  name: string;
  root: string;
  mask: string;
  ignore: string[];
}

/**
 * `addCollection`'s indexing: one collection scanned, each batch read written as one unit
 * (`write-units.ts`), `register` adding its row inside the first unit (under the write lock,
 * where a name taken meanwhile by another process is seen). Stopped before a file was read,
 * nothing is kept: the collection is not added. Stopped later, it is added with the files
 * written, and the report says how many of how many.
 */
export async function indexNewCollection(
  parts: UpdateParts,
  target: IndexTarget,
  options: IndexOptions,
  register: (now: string) => void,
): Promise<IndexReport> {
  const started = performance.now();
  const run = parts.guard.run(() => parts.writer().newRun());
  const counts = noCounts();
  // The collection's row goes in the first unit that commits, whichever it is.
  const first: FirstUnit = {
    pending: true,
    write: (now) => {
      if (!first.pending) return;
      register(now);
      first.pending = false;
    },
  };
  try {
    const scan = await scanTarget(parts, run, target, options, counts, first);
    counts.unchanged += scan.unchangedByStat;
    if (scan.stopped && scan.found === 0) return report(started, [scan], counts, []);
    if (scan.skipped || scan.stopped) {
      if (first.pending) await commitUnit(parts, first.write);
    } else if (!(await removeGone(parts, run, target.name, counts, { stop: options.stop, first: first.write }))) {
      scan.stopped = true;
    }
    return report(started, [scan], counts, []);
  } finally {
    parts.writer().unstage(run);
  }
}

/**
 * `update`: every collection re-scanned incrementally (mtime + hash), each batch read written
 * as one unit, then the files gone from a collection read in full deleted; `stop` ends it
 * after the unit in hand, and the collections not reached are reported untouched.
 */
export async function updateCollections(
  parts: UpdateParts,
  targets: readonly IndexTarget[],
  options: IndexOptions,
): Promise<IndexReport> {
  const started = performance.now();
  const run = parts.guard.run(() => parts.writer().newRun());
  const counts = noCounts();
  const scans: CollectionScan[] = [];
  try {
    for (const target of targets) {
      if (options.stop?.aborted) break;
      const scan = await scanTarget(parts, run, target, options, counts);
      scans.push(scan);
      counts.unchanged += scan.unchangedByStat;
      if (scan.skipped || scan.stopped) continue;
      if (!(await removeGone(parts, run, target.name, counts, { stop: options.stop }))) scan.stopped = true;
    }
    if (counts.removed > 0) await collectRemovedTexts(parts);
  } finally {
    parts.writer().unstage(run);
  }
  const untouched = targets.slice(scans.length).map((t) => t.name);
  return report(started, scans, counts, untouched);
}

/**
 * The read phase of one collection: its files are staged batch by batch as they are read
 * (`IndexWriter.stage`), so memory holds one batch, not the corpus (docs/design.md §8.5).
 * No lock on the index is held while files are read.
 */
async function scanTarget(
  parts: UpdateParts,
  run: bigint,
  target: IndexTarget,
  options: IndexOptions,
  counts: WriteCounts,
  first?: FirstUnit,
): Promise<CollectionScan> {
  const { guard, writer } = parts;
  return scanCollection({
    collection: target.name,
    root: target.root,
    mask: target.mask,
    ignore: target.ignore,
    known: (path) => guard.run(() => writer().known(target.name, path)),
    onBatch: async (files, seen) => {
      guard.run(() => writer().stage(run, target.name, files, seen));
      // A batch of files unchanged by their mtime and size writes nothing: no unit.
      if (files.length > 0 || first?.pending) {
        await commitStaged(parts, run, target.name, counts, first?.pending ? { first: first.write } : {});
      }
    },
    onProgress: options.onProgress,
    signal: options.signal,
    stop: options.stop,
  });
}

/** What the first unit of `collection add` writes before its files: the collection's row. */
interface FirstUnit {
  pending: boolean;
  write: (now: string) => void;
}

function noCounts(): WriteCounts {
  return { added: 0, updated: 0, removed: 0, unchanged: 0 };
}

function report(started: number, scans: CollectionScan[], counts: WriteCounts, untouched: string[]): IndexReport {
  const ignored = noneIgnored();
  for (const scan of scans) addIgnored(ignored, scan.ignored, `${scan.collection}/`);
  const stopped = scans.find((scan) => scan.stopped);
  return {
    collections: scans.length,
    scanned: scans.reduce((sum, scan) => sum + scan.listed, 0),
    ...counts,
    errors: scans.flatMap((scan) => scan.errors),
    ignored,
    ...((stopped !== undefined || untouched.length > 0) && {
      stopped: {
        complete: scans.filter((scan) => !scan.stopped).map((scan) => scan.collection),
        ...(stopped !== undefined &&
          stopped.found > 0 && {
            partial: { collection: stopped.collection, read: stopped.found, listed: stopped.listed },
          }),
        untouched: [...(stopped !== undefined && stopped.found === 0 ? [stopped.collection] : []), ...untouched],
      },
    }),
    ms: Math.round(performance.now() - started),
  };
}
