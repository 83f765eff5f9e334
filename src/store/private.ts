import * as fs from 'node:fs';
import * as path from 'node:path';
import { qmdCacheDir } from '../env.js';
import type { Log } from '../log.js';

/**
 * The index is private by default: it holds every note's text, so another user who
 * can read the file (or its `-wal`, which holds recent writes) reads the notes, whatever token
 * guards the server. A folder qmd makes is 0700 and an index it makes is 0600 from its first
 * byte, whatever the umask; SQLite gives `-wal` and `-shm` the index's own mode when it creates
 * them, umask or not (measured: `bench/experiments/private-modes.mjs`), so they follow.
 *
 * An existing index of this user that others can read is tightened with one line on the log;
 * one that belongs to someone else is not ours to change, and `qmd status` reports it
 * (`privacyProblems`). So is qmd's own cache folder (the default index's); a folder the user
 * chose is left as it is: the files in it are what must be private.
 */

/** Makes the index's folder (0700, parents too) and an empty index file (0600): SQLite takes an empty file as a new database. */
export function createPrivateIndex(file: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const fd = fs.openSync(file, 'wx', 0o600);
  try {
    // The umask can only take bits away: this makes sure the owner can still write.
    fs.fchmodSync(fd, 0o600);
  } finally {
    fs.closeSync(fd);
  }
}

/** The index and the files SQLite keeps beside it, which hold the same notes. */
export function indexFiles(file: string): string[] {
  return [file, `${file}-wal`, `${file}-shm`];
}

/**
 * Tightens what is this user's and readable by others: the index, its `-wal` and `-shm` (to
 * 0600), and qmd's own cache folder when the index lives in it (to 0700). One line on `log`
 * says what changed. Best effort: a file that cannot be changed is left for `qmd status`.
 */
export function tightenIndex(file: string, log: Log, env: NodeJS.ProcessEnv = process.env): void {
  tightenQuietly(file, env).report(log);
}

/** What `tightenQuietly` changed: said once the file is known to be a qmd index, else undone. */
export interface Tightening {
  /** The one line (a note, not an error) saying what changed, if anything did. */
  report(log: Log): void;
  /** Puts every mode back as it was: the file turned out not to be ours to change (qmd 2.x's index). */
  restore(): void;
}

/**
 * `tightenIndex` before the file has been opened: the modes change at once (so the `-wal` and
 * `-shm` SQLite makes copy a private mode), the line waits for `report`, and `restore` undoes
 * it all when the file is refused.
 */
export function tightenQuietly(file: string, env: NodeJS.ProcessEnv = process.env): Tightening {
  const uid = process.getuid?.();
  const changed: Array<{ target: string; mode: number; words: string }> = [];
  if (uid !== undefined) {
    for (const target of indexFiles(file)) {
      const stat = statOf(target);
      if (stat === undefined || stat.uid !== uid || (stat.mode & 0o077) === 0 || !stat.isFile()) continue;
      if (chmod(target, 0o600))
        changed.push({ target, mode: stat.mode, words: `${path.basename(target)} ${octal(stat.mode)} → 600` });
    }
    const folder = path.dirname(file);
    if (folder === qmdCacheDir(env)) {
      const stat = statOf(folder);
      if (stat !== undefined && stat.uid === uid && stat.isDirectory() && (stat.mode & 0o077) !== 0) {
        if (chmod(folder, 0o700))
          changed.push({ target: folder, mode: stat.mode, words: `its folder ${octal(stat.mode)} → 700` });
      }
    }
  }
  return {
    report(log) {
      if (changed.length === 0) return;
      // A note, not an error: no `qmd:` prefix.
      log.line(
        `The index ${file} was open to other users; made it private (${changed.map((c) => c.words).join(', ')})`,
      );
    },
    restore() {
      for (const { target, mode } of changed) chmod(target, mode & 0o7777);
    },
  };
}

/**
 * What other users can still read or write: for `qmd status`, one phrase each, with what to do
 * (files of another user are not ours to change). Empty when the index is private.
 */
export function privacyProblems(file: string, extra: readonly string[] = []): string[] {
  const uid = process.getuid?.();
  if (uid === undefined) return [];
  const problems: string[] = [];
  for (const target of [...indexFiles(file), ...extra]) {
    const stat = statOf(target);
    if (stat === undefined || (stat.mode & 0o077) === 0) continue;
    const whose =
      stat.uid === uid ? `chmod 600 ${target}` : `it belongs to uid ${stat.uid}: ask its owner to chmod 600 ${target}`;
    problems.push(`${target} is open to other users (mode ${octal(stat.mode)}): ${whose}`);
  }
  return problems;
}

function statOf(target: string): fs.Stats | undefined {
  try {
    return fs.statSync(target);
  } catch {
    return undefined;
  }
}

function chmod(target: string, mode: number): boolean {
  try {
    fs.chmodSync(target, mode);
    return true;
  } catch {
    return false;
  }
}

function octal(mode: number): string {
  return (mode & 0o777).toString(8);
}
