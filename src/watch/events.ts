import * as fs from 'node:fs';
import * as path from 'node:path';
import { eventMeaning, isWatchLimit, type Platform, watchStrategy } from './platform.js';

/** `fs.watch` as the watcher calls it: a seam for tests (an OS limit, a platform's events). */
export type WatchFn = (
  folder: string,
  options: { persistent: false; recursive: boolean },
  listener: (event: string, filename: string | null) => void,
) => fs.FSWatcher;

export interface FolderEventsOptions {
  /** The collection's folder (absolute, real). */
  root: string;
  platform: Platform;
  /** Folders (relative) the collection's rules pass by entirely: not watched (`folderPassedBy`). */
  passedBy: (folder: string) => boolean;
  /** Something happened at this path (relative, `/`-separated). */
  onPath: (path: string) => void;
  /** Events were lost or say nothing: read the folder again. */
  onRescan: () => void;
  /** The OS has no more watches to give (ENOSPC, EMFILE…): the caller polls instead. */
  onLimit: (code: string) => void;
  watch?: WatchFn;
  /** Test-only: fail with ENOSPC past this many watches, as a lowered inotify limit would. */
  limit?: number;
}

/** Folders walked between two turns of the event loop while watches are added. */
const WALK_SLICE = 64;

/**
 * The OS events of one collection's folder. Linux (`per-folder`, docs/design.md §9.1): one
 * non-recursive `fs.watch` per folder, added as folders are walked and as new ones appear (a
 * folder that appears is then read as a whole, so files written into it before its watch was
 * added are not missed), closed when a folder goes or moves away (a moved folder's watches would
 * report its old paths). macOS and Windows (`recursive`): one native recursive watch. Every
 * watch is `persistent: false`: none keeps the process alive. An OS limit met at any point
 * closes every watch of the collection and calls `onLimit` once.
 */
export class FolderEvents {
  private readonly watches = new Map<string, fs.FSWatcher>();
  private closed = false;
  private failed = false;
  private readonly watchFn: WatchFn;

  constructor(private readonly options: FolderEventsOptions) {
    this.watchFn = options.watch ?? ((folder, opts, listener) => fs.watch(folder, opts, listener));
  }

  /** Folders under watch now. */
  get folders(): number {
    return this.watches.size;
  }

  /** Adds the watches (walking the tree in slices); resolves once changes will be heard. */
  async start(): Promise<void> {
    if (watchStrategy(this.options.platform) === 'recursive') {
      this.add('', true);
      return;
    }
    await this.walk('');
  }

  close(): void {
    this.closed = true;
    for (const watch of this.watches.values()) closeQuietly(watch);
    this.watches.clear();
  }

  private async walk(start: string): Promise<void> {
    const stack = [start];
    let walked = 0;
    while (stack.length > 0 && !this.closed && !this.failed) {
      const folder = stack.pop() as string;
      if (!this.add(folder, false)) continue;
      let entries: fs.Dirent[];
      try {
        entries = fs.readdirSync(path.join(this.options.root, folder), { withFileTypes: true });
      } catch {
        continue;
      }
      for (const entry of entries) {
        if (!entry.isDirectory()) continue;
        const child = folder === '' ? entry.name : `${folder}/${entry.name}`;
        if (!this.options.passedBy(child)) stack.push(child);
      }
      if (++walked % WALK_SLICE === 0) await new Promise<void>((resolve) => setImmediate(resolve));
    }
  }

  /** One watch; false when the folder cannot be watched (gone, unreadable, or the limit). */
  private add(folder: string, recursive: boolean): boolean {
    if (this.closed || this.failed) return false;
    if (this.watches.has(folder)) return true;
    try {
      if (this.options.limit !== undefined && this.watches.size >= this.options.limit) {
        throw Object.assign(new Error('ENOSPC: System limit for number of file watchers reached (test)'), {
          code: 'ENOSPC',
        });
      }
      const absolute = folder === '' ? this.options.root : path.join(this.options.root, folder);
      const watch = this.watchFn(absolute, { persistent: false, recursive }, (event, filename) =>
        this.heard(folder, event, filename),
      );
      watch.on('error', () => this.lost(folder));
      this.watches.set(folder, watch);
      return true;
    } catch (error) {
      const code = errno(error);
      if (isWatchLimit(code)) this.limitReached(code as string);
      return false;
    }
  }

  private heard(folder: string, event: string, filename: string | null): void {
    if (this.closed || this.failed) return;
    const meaning = eventMeaning(this.options.platform, folder, filename);
    if (meaning.kind === 'rescan') {
      this.options.onRescan();
      return;
    }
    const relative = meaning.path;
    this.options.onPath(relative);
    // Only a `rename` (made, deleted, moved in or out) can be a folder appearing or going: a
    // `change` is a file's content or attributes, and costs no stat (a burst is mostly those).
    if (watchStrategy(this.options.platform) === 'recursive' || event !== 'rename') return;
    let isFolder = false;
    try {
      isFolder = fs.lstatSync(path.join(this.options.root, relative)).isDirectory();
    } catch {
      // Gone: below.
    }
    if (!isFolder) {
      this.forget(relative);
      return;
    }
    if (this.watches.has(relative) || this.options.passedBy(relative)) return;
    // A new folder (made, or moved in): watch it and what is under it, then read it whole.
    void this.walk(relative).then(() => {
      if (!this.closed && !this.failed) this.options.onPath(relative);
    });
  }

  /**
   * A watched folder went (or moved away): its watches, and those under it, are closed. Most
   * paths that go are files, never watched: they cost one lookup, not a pass over every watch
   * (at 100k notes, that pass for each of a burst's 1,000 files held the loop 708 ms).
   */
  private forget(relative: string): void {
    if (!this.watches.has(relative)) return;
    const prefix = `${relative}/`;
    for (const [folder, watch] of this.watches) {
      if (folder === relative || folder.startsWith(prefix)) {
        closeQuietly(watch);
        this.watches.delete(folder);
      }
    }
  }

  private lost(folder: string): void {
    const watch = this.watches.get(folder);
    if (watch !== undefined) closeQuietly(watch);
    this.watches.delete(folder);
    if (folder === '') this.options.onRescan();
  }

  private limitReached(code: string): void {
    if (this.failed) return;
    this.failed = true;
    for (const watch of this.watches.values()) closeQuietly(watch);
    this.watches.clear();
    this.options.onLimit(code);
  }
}

function closeQuietly(watch: fs.FSWatcher): void {
  try {
    watch.close();
  } catch {
    // Already closed.
  }
}

function errno(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : undefined;
}
