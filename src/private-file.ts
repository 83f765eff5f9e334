import * as fs from 'node:fs';

/**
 * How qmd writes a file of its own outside the index (the daemon's and the shared server's
 * logs, pidfiles and records, the HTTP token, traces, the code cache, downloaded models): the
 * owner's alone from the first byte (0600; a folder qmd makes is 0700), and never through a
 * symbolic link. A file sits beside an index whose folder may be shared (a project folder,
 * `/tmp`): a link planted at `index.sqlite.mcp.log` pointing at `~/.bashrc` would have the
 * daemon append its log there, and a file left 0644 by an older release would keep showing
 * what it holds to everyone. So the last component is opened with `O_NOFOLLOW` (a link is
 * refused, whatever it points at), an existing file must be a regular file of this user, and
 * one open to others is tightened to 0600 before anything is written into it.
 *
 * A neutral leaf: it imports nothing of ours, so every package (the LLM wrapper's downloads
 * too) can use it. The umask set at boot (`src/cli/boot.ts`) already makes new files 0600;
 * this adds what a umask cannot: links, files that exist, and code run without `boot`.
 */

/** Why a path was refused: `symlink`, `not-a-file` or `not-ours`. The message is one line saying what to do. */
export class UnsafePathError extends Error {
  constructor(
    readonly reason: 'symlink' | 'not-a-file' | 'not-ours',
    readonly path: string,
    message: string,
  ) {
    super(message);
    this.name = 'UnsafePathError';
  }
}

export function isUnsafePathError(error: unknown): error is UnsafePathError {
  return error instanceof UnsafePathError;
}

/** How `openPrivateFile` opens: at the end, emptied, or only if it does not exist yet. */
export type PrivateOpenMode = 'append' | 'truncate' | 'exclusive';

// Absent on Windows (no links there in the sense meant here, and no modes: docs/design.md §7).
const NOFOLLOW = fs.constants.O_NOFOLLOW ?? 0;
const FLAGS: Record<PrivateOpenMode, number> = {
  append: fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_APPEND,
  truncate: fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_TRUNC,
  exclusive: fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL,
};

/**
 * Opens `file` for writing, creating it 0600; returns the descriptor. Refuses (UnsafePathError)
 * a symbolic link at the path, anything but a regular file, and a file of another user; a file
 * of this user open to others is made 0600 first. Other errors (EACCES, ENOENT of the folder,
 * EEXIST for `exclusive`) are thrown as the system gives them.
 */
export function openPrivateFile(file: string, mode: PrivateOpenMode): number {
  // A FIFO or a device would block or misbehave on open: look before opening (lstat: a link
  // is seen as a link). O_NOFOLLOW below closes the race for links; the fstat for the rest.
  refuseUnsafe(file, lstatOf(file));
  let fd: number;
  try {
    fd = fs.openSync(file, FLAGS[mode] | NOFOLLOW, 0o600);
  } catch (error) {
    // ELOOP: a link was put there between the look and the open (Linux, macOS).
    if ((error as NodeJS.ErrnoException).code === 'ELOOP') throw symlinkError(file);
    throw error;
  }
  try {
    const stat = fs.fstatSync(fd);
    refuseUnsafe(file, stat);
    if (ownedBy(stat) && (stat.mode & 0o077) !== 0) fs.fchmodSync(fd, 0o600);
  } catch (error) {
    fs.closeSync(fd);
    throw error;
  }
  return fd;
}

/** Writes `data` to `file` as `openPrivateFile` opens it (default: emptied first). */
export function writePrivateFile(file: string, data: string | Uint8Array, mode: PrivateOpenMode = 'truncate'): void {
  const fd = openPrivateFile(file, mode);
  try {
    fs.writeFileSync(fd, data);
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Writes `data` beside `file` (`aside`, a name of this process's own) and renames it over
 * `file`: a reader sees the old content or the new, never half. Whatever sits at `aside`
 * (a file a crash left, a planted link) is removed first: unlinking a link removes the link,
 * never what it points at.
 */
export function replacePrivateFile(file: string, aside: string, data: string | Uint8Array): void {
  fs.rmSync(aside, { force: true });
  writePrivateFile(aside, data, 'exclusive');
  try {
    fs.renameSync(aside, file);
  } catch (error) {
    fs.rmSync(aside, { force: true });
    throw error;
  }
}

/**
 * Makes `dir` and its missing parents 0700. With `tighten`, an existing `dir` of this user
 * open to others is made 0700 too: for qmd's own folders (its cache, its socket folder), never
 * a folder the user chose to put an index in, whose mode is theirs to decide.
 */
export function makePrivateDir(dir: string, options: { tighten?: boolean } = {}): void {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (!options.tighten) return;
  const stat = fs.statSync(dir);
  if (stat.isDirectory() && ownedBy(stat) && (stat.mode & 0o077) !== 0) fs.chmodSync(dir, 0o700);
}

function lstatOf(file: string): fs.Stats | undefined {
  try {
    return fs.lstatSync(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

function refuseUnsafe(file: string, stat: fs.Stats | undefined): void {
  if (stat === undefined) return;
  if (stat.isSymbolicLink()) throw symlinkError(file);
  if (!stat.isFile()) {
    throw new UnsafePathError(
      'not-a-file',
      file,
      `${file} is not a regular file: qmd writes only its own files there; move it away`,
    );
  }
  if (!ownedBy(stat)) {
    throw new UnsafePathError(
      'not-ours',
      file,
      `${file} belongs to another user (uid ${stat.uid}): qmd writes only files of its own user; move it away`,
    );
  }
}

function symlinkError(file: string): UnsafePathError {
  return new UnsafePathError(
    'symlink',
    file,
    `${file} is a symbolic link: qmd never writes through one (it could point at any file of yours); remove it (rm ${file})`,
  );
}

/** This user's file (always true where there are no uids: Windows). */
function ownedBy(stat: fs.Stats): boolean {
  const uid = process.getuid?.();
  return uid === undefined || stat.uid === uid;
}
