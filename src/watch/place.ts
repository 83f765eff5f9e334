import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';

/**
 * The writer's place of an index (docs/design.md §9.4): one process at a time follows the
 * folders and writes, the others read. Its record is a small file beside the index
 * (`INDEX-writer`, 0600, never followed through a symlink), holding the holder's pid, host and a
 * token; its mtime is the heartbeat. It is taken inside `BEGIN IMMEDIATE` on the index (the
 * caller's `underWriteLock`), so two processes deciding at once are serialized by SQLite; a
 * watcher's every write checks, under the same lock, that the token is still its own.
 */
export interface PlaceRecord {
  pid: number;
  host: string;
  token: string;
  /** When it was taken (ms since the epoch). */
  since: number;
  /** What holds it: `qmd mcp`, `qmd update --watch`. */
  by: string;
}

export interface PlaceFacts {
  pid: number;
  host: string;
  /** Whether process `pid` of this host exists (`process.kill(pid, 0)`). */
  alive: (pid: number) => boolean;
  /** Wall clock, ms since the epoch. */
  now: () => number;
}

export const hostFacts: PlaceFacts = {
  pid: process.pid,
  host: os.hostname(),
  alive: (pid) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch (error) {
      return (error as NodeJS.ErrnoException).code === 'EPERM';
    }
  },
  now: () => Date.now(),
};

/** The record's file: beside the index, like its `-wal` and `-shm`. */
export function placeFile(indexPath: string): string {
  return `${indexPath}-writer`;
}

/**
 * Whether the place recorded is free to take: no record; a holder of this host whose process is
 * gone (a crash or SIGKILL is noticed at the next look); or a heartbeat older than `staleMs`
 * (a holder stopped or hung, or of another host, where a pid means nothing). A pid reused by
 * another process keeps the place only until its heartbeat is stale.
 */
export function placeIsFree(
  record: (PlaceRecord & { heartbeatAt: number }) | undefined,
  facts: PlaceFacts,
  staleMs: number,
): boolean {
  if (record === undefined) return true;
  if (record.host === facts.host && record.pid !== facts.pid && !facts.alive(record.pid)) return true;
  return facts.now() - record.heartbeatAt > staleMs;
}

/** The record now, with its heartbeat; undefined when there is none or it cannot be read as one. */
export function readPlace(file: string): (PlaceRecord & { heartbeatAt: number }) | undefined {
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | (fs.constants.O_NOFOLLOW ?? 0));
  } catch {
    return undefined;
  }
  try {
    const stat = fs.fstatSync(fd);
    if (!stat.isFile() || stat.size > 4096) return undefined;
    const record = JSON.parse(fs.readFileSync(fd, 'utf8')) as Partial<PlaceRecord>;
    if (typeof record.pid !== 'number' || typeof record.token !== 'string' || typeof record.host !== 'string')
      return undefined;
    return {
      pid: record.pid,
      host: record.host,
      token: record.token,
      since: typeof record.since === 'number' ? record.since : 0,
      by: typeof record.by === 'string' ? record.by : 'qmd',
      heartbeatAt: stat.mtimeMs,
    };
  } catch {
    return undefined;
  } finally {
    fs.closeSync(fd);
  }
}

/** One process's claim on the place. */
export class WriterPlace {
  readonly token = randomBytes(12).toString('hex');

  constructor(
    readonly file: string,
    private readonly by: string,
    private readonly facts: PlaceFacts,
    private readonly staleMs: number,
  ) {}

  /** Takes the place if it is free (call under the index's write lock); true when held after. */
  take(): boolean {
    const record = readPlace(this.file);
    if (record?.token === this.token) return true;
    if (!placeIsFree(record, this.facts, this.staleMs)) return false;
    const mine: PlaceRecord = {
      pid: this.facts.pid,
      host: this.facts.host,
      token: this.token,
      since: this.facts.now(),
      by: this.by,
    };
    // Written aside, then renamed over: a reader never sees half a record, and a symlink put
    // where the record goes is replaced, never followed.
    const aside = `${this.file}.${this.facts.pid}.${randomBytes(4).toString('hex')}`;
    const flags = fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | (fs.constants.O_NOFOLLOW ?? 0);
    const fd = fs.openSync(aside, flags, 0o600);
    try {
      fs.writeFileSync(fd, JSON.stringify(mine));
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(aside, this.file);
    return true;
  }

  /** Whether this claim still holds the place (asked under the write lock before each write). */
  holds(): boolean {
    return readPlace(this.file)?.token === this.token;
  }

  /** The holder now, if any (for a reader's report). */
  holder(): (PlaceRecord & { heartbeatAt: number }) | undefined {
    return readPlace(this.file);
  }

  /** Renews the heartbeat (the record's mtime, not following a link); false when the place was lost. */
  heartbeat(): boolean {
    if (!this.holds()) return false;
    const now = new Date(this.facts.now());
    try {
      fs.lutimesSync(this.file, now, now);
      return true;
    } catch {
      return false;
    }
  }

  /** Gives the place up if this claim holds it (best effort: a process gone frees it anyway). */
  release(): void {
    try {
      if (this.holds()) fs.unlinkSync(this.file);
    } catch {
      // Gone already, or another took it meanwhile.
    }
  }
}
