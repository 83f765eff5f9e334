/** The platform rules of the watcher, every branch, on any machine (docs/design.md §9.3). */
import { describe, expect, it } from 'vitest';
import {
  eventMeaning,
  isWatchLimit,
  limitReason,
  noEventsReason,
  parseMountinfo,
  reportsLostEvents,
  sendsNoEvents,
  watchStrategy,
} from '../../src/watch/platform.js';

const MOUNTINFO = [
  '22 1 253:0 / / rw,relatime shared:1 - ext4 /dev/vda rw',
  '30 22 0:26 / /proc rw,nosuid - proc proc rw',
  '41 22 0:40 / /home/me/nas rw,relatime - nfs4 nas:/export rw,vers=4.2',
  '42 22 0:41 / /home/me/remote\\040notes rw - fuse.sshfs me@host:/notes rw',
  '43 22 0:42 / /mnt/c rw - 9p drvfs rw',
  '44 22 0:43 / /home/me/notes/shared rw - cifs //srv/share rw',
  'garbage line without separator',
].join('\n');

describe('watch platform rules', () => {
  it('watches folder by folder on Linux and other Unixes, recursively on macOS and Windows', () => {
    expect(watchStrategy('linux')).toBe('per-folder');
    expect(watchStrategy('freebsd')).toBe('per-folder');
    expect(watchStrategy('darwin')).toBe('recursive');
    expect(watchStrategy('win32')).toBe('recursive');
  });

  it('takes ENOSPC, EMFILE and ENFILE for the OS limit, and nothing else', () => {
    for (const code of ['ENOSPC', 'EMFILE', 'ENFILE']) expect(isWatchLimit(code)).toBe(true);
    for (const code of ['ENOENT', 'EACCES', 'EPERM', undefined]) expect(isWatchLimit(code)).toBe(false);
    expect(limitReason('linux', 'ENOSPC')).toContain('fs.inotify.max_user_watches');
    expect(limitReason('linux', 'EMFILE')).toContain('fs.inotify.max_user_instances');
    expect(limitReason('darwin', 'EMFILE')).toBe('the OS refused more watches (EMFILE)');
  });

  it('parses /proc/self/mountinfo, escapes and all, skipping what does not parse', () => {
    const mounts = parseMountinfo(MOUNTINFO);
    expect(mounts).toHaveLength(6);
    expect(mounts[3]).toEqual({ point: '/home/me/remote notes', fstype: 'fuse.sshfs' });
  });

  it('knows the file systems that send no events for changes made elsewhere', () => {
    for (const t of ['nfs', 'nfs4', 'cifs', 'smb3', 'fuse.sshfs', '9p', 'virtiofs', 'drvfs'])
      expect(sendsNoEvents(t), t).toBe(true);
    for (const t of ['ext4', 'btrfs', 'xfs', 'tmpfs', 'overlay', 'zfs', 'apfs', 'fuse.portal'])
      expect(sendsNoEvents(t), t).toBe(false);
  });

  it('polls a folder on a network mount, or one with a network mount inside it', () => {
    const mounts = parseMountinfo(MOUNTINFO);
    expect(noEventsReason('/home/me/notes', mounts)).toBe(
      '/home/me/notes/shared inside it is on a file system (cifs) that sends no events',
    );
    expect(noEventsReason('/home/me/nas/notes', mounts)).toBe(
      'its file system (nfs4) sends no events for changes made elsewhere',
    );
    expect(noEventsReason('/home/me/remote notes/x', mounts)).toContain('fuse.sshfs');
    expect(noEventsReason('/mnt/c/Users/me/notes', mounts)).toContain('(9p)');
    // A sibling whose name starts the same is not inside.
    expect(noEventsReason('/home/me/nasty', mounts)).toBeUndefined();
    expect(noEventsReason('/home/me/work', mounts)).toBeUndefined();
    expect(noEventsReason('/home/me/work', [])).toBeUndefined();
  });

  it('turns each fs.watch event into a path, or a rescan when it names nothing', () => {
    expect(eventMeaning('linux', '', 'a.md')).toEqual({ kind: 'path', path: 'a.md' });
    expect(eventMeaning('linux', 'sub/deep', 'a.md')).toEqual({ kind: 'path', path: 'sub/deep/a.md' });
    expect(eventMeaning('win32', '', 'sub\\a.md')).toEqual({ kind: 'path', path: 'sub/a.md' });
    // A backslash is a legal name character on Linux.
    expect(eventMeaning('linux', '', 'odd\\name.md')).toEqual({ kind: 'path', path: 'odd\\name.md' });
    expect(eventMeaning('win32', '', null)).toEqual({ kind: 'rescan' });
    expect(eventMeaning('linux', 'sub', '')).toEqual({ kind: 'rescan' });
  });

  it('says where lost events cannot be noticed (so a slow sweep bounds them)', () => {
    expect(reportsLostEvents('win32')).toBe(true);
    expect(reportsLostEvents('linux')).toBe(false);
    expect(reportsLostEvents('darwin')).toBe(false);
  });
});
