/**
 * How each platform hears file changes, as small pure rules (facts in, decision out), unit-tested
 * on any machine like `src/platform.ts`'s socket rules (`test/watch/platform.test.ts`). The real
 * code passes `process.platform`, the error it met, `/proc/self/mountinfo`. docs/design.md §9.3
 * says what holds on each platform and what only a real machine of each could confirm.
 */

export type Platform = NodeJS.Platform;

/**
 * How a collection's folder is watched:
 * - `per-folder`: one non-recursive `fs.watch` (an inotify watch) per folder, walked and kept by
 *   the watcher. Linux: measured against Node's recursive `fs.watch` (which walks in JS too),
 *   chokidar 5 and @parcel/watcher 2.6 (docs/design.md §9.1); any Unix without a native
 *   recursive watch is treated alike.
 * - `recursive`: one `fs.watch(root, { recursive: true })`: macOS (FSEvents: one stream per
 *   tree, no per-folder limit) and Windows (`ReadDirectoryChangesW` with `bWatchSubtree`).
 */
export function watchStrategy(platform: Platform): 'per-folder' | 'recursive' {
  return platform === 'darwin' || platform === 'win32' ? 'recursive' : 'per-folder';
}

/**
 * Whether an error met while adding a watch means the OS ran out of watches (fall back to
 * polling, saying so), rather than the folder being gone or unreadable (skip it): Linux's
 * inotify says ENOSPC when `fs.inotify.max_user_watches` is reached and EMFILE at
 * `max_user_instances`; file descriptors running out (macOS kqueue, any platform) is EMFILE or
 * ENFILE.
 */
export function isWatchLimit(code: string | undefined): boolean {
  return code === 'ENOSPC' || code === 'EMFILE' || code === 'ENFILE';
}

/** Why a limit error stops the events, for the one log line and `report()`. */
export function limitReason(platform: Platform, code: string | undefined): string {
  if (platform === 'linux' && code === 'ENOSPC')
    return 'the OS limit on watches was reached (inotify: sysctl fs.inotify.max_user_watches)';
  if (platform === 'linux' && code === 'EMFILE')
    return 'the OS limit on watchers was reached (inotify: sysctl fs.inotify.max_user_instances)';
  return `the OS refused more watches (${code ?? 'unknown error'})`;
}

/**
 * File system types whose folders send no events for changes made elsewhere (another machine,
 * the host of a VM, the Windows side of WSL): a watch there hears only what this machine writes,
 * so such a folder is polled. Linux names, as `/proc/self/mountinfo` gives them (a FUSE file
 * system as `fuse.NAME`).
 */
const NO_EVENTS = new Set([
  'nfs',
  'nfs4',
  'cifs',
  'smb3',
  'smbfs',
  'ncpfs',
  'afs',
  'ceph',
  'glusterfs',
  '9p',
  'virtiofs',
  'vboxsf',
  'vmhgfs',
  'drvfs',
  'davfs',
  'fuse.sshfs',
  'fuse.rclone',
  'fuse.davfs2',
  'fuse.glusterfs',
  'fuse.s3fs',
  'fuse.gcsfuse',
  'fuse.vmhgfs-fuse',
  'fuse.grpcfuse',
  'fuse.osxfs',
]);

/** Whether a folder on `fstype` must be polled (`NO_EVENTS`); unknown types are trusted to send events. */
export function sendsNoEvents(fstype: string): boolean {
  return NO_EVENTS.has(fstype) || fstype.startsWith('nfs');
}

export interface Mount {
  /** Where it is mounted (absolute, unescaped). */
  point: string;
  fstype: string;
}

/**
 * The mounts of `/proc/self/mountinfo` (proc(5)): field 5 is the mount point (octal escapes for
 * space, tab, newline and backslash), the type follows the ` - ` separator. Lines that do not
 * parse are skipped.
 */
export function parseMountinfo(text: string): Mount[] {
  const mounts: Mount[] = [];
  for (const line of text.split('\n')) {
    const dash = line.indexOf(' - ');
    if (dash < 0) continue;
    const before = line.slice(0, dash).split(' ');
    const after = line.slice(dash + 3).split(' ');
    const point = before[4];
    const fstype = after[0];
    if (point === undefined || fstype === undefined || fstype === '') continue;
    mounts.push({ point: unescapeMount(point), fstype });
  }
  return mounts;
}

function unescapeMount(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(Number.parseInt(octal, 8)));
}

/**
 * Why the folder at `root` is polled rather than watched, judged by the mounts it lives on and
 * those mounted anywhere below it (a network share inside a local folder sends no events
 * either); undefined when every one sends events. `root` is absolute and real.
 */
export function noEventsReason(root: string, mounts: readonly Mount[]): string | undefined {
  const inside = (point: string) =>
    point === root || root === '/' || point.startsWith(root.endsWith('/') ? root : `${root}/`);
  let own: Mount | undefined;
  for (const mount of mounts) {
    const contains = mount.point === '/' || root === mount.point || root.startsWith(`${mount.point}/`);
    if (contains && (own === undefined || mount.point.length >= own.point.length)) own = mount;
  }
  if (own !== undefined && sendsNoEvents(own.fstype))
    return `its file system (${own.fstype}) sends no events for changes made elsewhere`;
  const below = mounts.find((m) => m.point !== own?.point && inside(m.point) && sendsNoEvents(m.fstype));
  return below === undefined
    ? undefined
    : `${below.point} inside it is on a file system (${below.fstype}) that sends no events`;
}

/** What an `fs.watch` event means for the watcher. */
export type EventMeaning =
  /** Something happened at this path (relative to the collection's folder, `/`-separated). */
  | { kind: 'path'; path: string }
  /** Events were lost or say nothing usable: re-read the whole folder (a catch-up pass). */
  | { kind: 'rescan' };

/**
 * One event of `fs.watch` as the watcher takes it. `dir` is the watched folder relative to the
 * collection's folder (`''`: the folder itself; with a recursive watch always `''`), `filename`
 * what Node passed. Rename pairs need no pairing: each side is looked at (gone: removed; there:
 * read), so a move is right whether it comes as two events (inotify's MOVED_FROM/MOVED_TO),
 * as FSEvents' two renames, or as a delete and a create. A null name is a rescan: Windows
 * reports a lost buffer (`ERROR_NOTIFY_ENUM_DIR`) so, and it is all a path-less event can mean
 * anywhere. Windows separators become `/`.
 */
export function eventMeaning(platform: Platform, dir: string, filename: string | null): EventMeaning {
  if (filename === null || filename === '') return { kind: 'rescan' };
  const name = platform === 'win32' ? filename.replaceAll('\\', '/') : filename;
  return { kind: 'path', path: dir === '' ? name : `${dir}/${name}` };
}

/**
 * Whether lost events can be noticed on `platform` through `fs.watch`: Windows says so (a null
 * name, above); libuv drops inotify's IN_Q_OVERFLOW and FSEvents' MustScanSubDirs without a word.
 * Where it cannot, a slow sweep (a catch-up pass every `sweepMs`) bounds how long a lost event
 * can leave a note stale.
 */
export function reportsLostEvents(platform: Platform): boolean {
  return platform === 'win32';
}
