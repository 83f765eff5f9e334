import * as fs from 'node:fs';
import * as path from 'node:path';
import type { IndexTarget } from '../core/watch-writer.js';
import { folderPassedBy, pathFilter } from '../indexing/ignore.js';
import type { Log } from '../log.js';
import type { WatchClock } from './clock.js';
import { FolderEvents, type WatchFn } from './events.js';
import { limitReason, type Mount, noEventsReason, type Platform } from './platform.js';
import type { WatchedCollection } from './types.js';

/** Polling waits at least this many times as long as its last pass took. */
const POLL_SHARE = 20;

export interface FollowSettings {
  clock: WatchClock;
  platform: Platform;
  log: Log;
  /** The index's own files (absolute): never taken for notes, even by a mask of `**\/*`. */
  ownFiles: (absolute: string) => boolean;
  mounts: () => Mount[];
  pollIntervalMs: number;
  /** Between two catch-up passes of a watched folder, where lost events go unnoticed (`reportsLostEvents`). */
  sweepMs: number;
  watch?: WatchFn;
  watchLimit?: number;
}

/**
 * One collection as the writer follows it: OS events on its folder (`FolderEvents`), or polling
 * it when it cannot be watched (a file system that sends no events, the OS limit on watches),
 * said in one log line. What it hears goes to `heard` (a path) or `rescan` (read it all again:
 * the catch-up, a polling round, lost events); the watcher coalesces and writes.
 */
export class FollowedCollection {
  via: 'events' | 'polling' = 'events';
  reason: string | undefined;
  private events: FolderEvents | undefined;
  private timer: unknown;
  /** How long the last pass over the folder took (catch-up, polling, sweep). */
  private lastPassMs = 0;
  private closed = false;
  readonly accepts: (relative: string) => boolean;

  constructor(
    readonly target: IndexTarget,
    private readonly settings: FollowSettings,
    private readonly heard: (relative: string) => void,
    private readonly rescan: () => void,
  ) {
    const filter = pathFilter(target.mask, target.ignore);
    this.accepts = (relative) => filter(relative) && !settings.ownFiles(path.join(target.root, relative));
  }

  /** Whether `target` is still what this follows (the same folder and rules). */
  follows(target: IndexTarget): boolean {
    const { root, mask, ignore } = this.target;
    return root === target.root && mask === target.mask && ignore.join('\0') === target.ignore.join('\0');
  }

  /** Watches (or polls), then asks for the catch-up; resolves once changes will be heard. */
  async start(): Promise<void> {
    const { settings, target } = this;
    const reason = noEventsReason(target.root, settings.mounts());
    if (reason !== undefined) this.poll(reason);
    else {
      const passedBy = folderPassedBy(target.mask);
      this.events = new FolderEvents({
        root: target.root,
        platform: settings.platform,
        passedBy,
        onPath: (relative) => {
          if (this.accepts(relative) || mayHoldNotes(target.root, relative, settings.ownFiles)) this.heard(relative);
        },
        onRescan: () => this.rescan(),
        onLimit: (code) => this.poll(limitReason(settings.platform, code)),
        ...(settings.watch !== undefined && { watch: settings.watch }),
        ...(settings.watchLimit !== undefined && { limit: settings.watchLimit }),
      });
      await this.events.start();
      if (this.via === 'events') this.every(() => settings.sweepMs);
    }
    this.rescan();
  }

  report(): WatchedCollection {
    return {
      collection: this.target.name,
      root: this.target.root,
      via: this.via,
      ...(this.reason !== undefined && { reason: this.reason }),
      folders: this.events?.folders ?? 0,
      ...(this.via === 'polling' && { intervalMs: this.pollEvery() }),
    };
  }

  /** A pass over the folder took `ms`: polling slows down to stay a small share of a core. */
  passed(ms: number): void {
    this.lastPassMs = ms;
  }

  /**
   * The polling interval: the one configured, or 20 passes' time if longer, so polling never
   * takes more than about 5% of a core, whatever the folder's size (a pass of 100k notes is
   * seconds of CPU, docs/design.md §9.7).
   */
  private pollEvery(): number {
    return Math.max(this.settings.pollIntervalMs, Math.round(POLL_SHARE * this.lastPassMs));
  }

  close(): void {
    this.closed = true;
    this.events?.close();
    this.settings.clock.clearTimeout(this.timer);
  }

  private poll(reason: string): void {
    if (this.closed || this.via === 'polling') return;
    this.via = 'polling';
    this.reason = reason;
    this.events?.close();
    this.events = undefined;
    const seconds = Math.round(this.settings.pollIntervalMs / 100) / 10;
    this.settings.log.line(
      `Watching: polling ${this.target.root} every ${seconds} s (longer if a pass takes over 1/${POLL_SHARE} of that): ${reason}`,
    );
    this.every(() => this.pollEvery());
    // Events may have been missed while the watches were being given up.
    this.rescan();
  }

  private every(ms: () => number): void {
    const { clock } = this.settings;
    clock.clearTimeout(this.timer);
    if (!Number.isFinite(ms()) || ms() <= 0) return;
    const round = (): void => {
      if (this.closed) return;
      this.rescan();
      this.timer = clock.setTimeout(round, ms(), { unref: true });
    };
    this.timer = clock.setTimeout(round, ms(), { unref: true });
  }
}

/**
 * A path the rules do not take as a note may still matter: a folder (made, moved in: its notes
 * are read) or something gone (maybe a folder that held notes). Anything else (an editor's
 * swap file, the index's own files) is not worth a write.
 */
function mayHoldNotes(root: string, relative: string, ownFiles: (absolute: string) => boolean): boolean {
  const absolute = path.join(root, relative);
  if (ownFiles(absolute)) return false;
  try {
    return fs.lstatSync(absolute).isDirectory();
  } catch {
    return true;
  }
}
