/**
 * `src/private-file.ts`: every file qmd writes outside the index is 0600 from its first byte,
 * never written through a link, and tightened when it was left open to others; a folder qmd
 * makes is 0700. Run under a permissive umask (022), as a process that skipped `boot` would be.
 */
import {
  chmodSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  isUnsafePathError,
  makePrivateDir,
  openPrivateFile,
  replacePrivateFile,
  UnsafePathError,
  writePrivateFile,
} from '../src/private-file.js';

const dir = mkdtempSync(join(tmpdir(), 'qmd-private-file-'));
const mode = (path: string) => (statSync(path).mode & 0o777).toString(8);
let umask: number;
beforeAll(() => {
  umask = process.umask(0o022);
});
afterAll(() => {
  process.umask(umask);
});

describe('writePrivateFile and openPrivateFile', () => {
  it('a new file is 0600 under umask 022', () => {
    const file = join(dir, 'new.log');
    writePrivateFile(file, 'line\n', 'append');
    expect(mode(file)).toBe('600');
    expect(readFileSync(file, 'utf8')).toBe('line\n');
  });

  it('a file of ours left 0644 is made 0600 and appended to, its content kept', () => {
    const file = join(dir, 'old.log');
    writeFileSync(file, 'before\n', { mode: 0o644 });
    chmodSync(file, 0o644);
    writePrivateFile(file, 'after\n', 'append');
    expect(mode(file)).toBe('600');
    expect(readFileSync(file, 'utf8')).toBe('before\nafter\n');
  });

  it('a link at the path is refused, whatever it points at, and its target is untouched', () => {
    const target = join(dir, 'bashrc');
    writeFileSync(target, 'export PATH\n');
    chmodSync(target, 0o644);
    const link = join(dir, 'index.sqlite.mcp.log');
    symlinkSync(target, link);
    let caught: unknown;
    try {
      openPrivateFile(link, 'append');
    } catch (error) {
      caught = error;
    }
    expect(isUnsafePathError(caught)).toBe(true);
    expect((caught as UnsafePathError).reason).toBe('symlink');
    expect((caught as Error).message).toBe(
      `${link} is a symbolic link: qmd never writes through one (it could point at any file of yours); remove it (rm ${link})`,
    );
    expect(readFileSync(target, 'utf8')).toBe('export PATH\n');
    expect(mode(target)).toBe('644');
    // A dangling link is refused as well (O_CREAT would otherwise create its target).
    const dangling = join(dir, 'dangling.log');
    symlinkSync(join(dir, 'nowhere', 'x'), dangling);
    expect(() => openPrivateFile(dangling, 'truncate')).toThrow(UnsafePathError);
    expect(() => openPrivateFile(dangling, 'exclusive')).toThrow(UnsafePathError);
  });

  it('a folder at the path is refused as not a regular file', () => {
    const folder = join(dir, 'a-folder');
    mkdirSync(folder);
    expect(() => writePrivateFile(folder, 'x')).toThrow(/is not a regular file: qmd writes only its own files there/);
  });

  it('exclusive refuses an existing file with EEXIST, as O_EXCL does', () => {
    const file = join(dir, 'lock');
    writePrivateFile(file, '1', 'exclusive');
    expect(() => writePrivateFile(file, '2', 'exclusive')).toThrow(expect.objectContaining({ code: 'EEXIST' }));
  });
});

describe('replacePrivateFile', () => {
  it('replaces a file whole through a name aside, removing a link planted at that name', () => {
    const file = join(dir, 'record.json');
    writeFileSync(file, '{"old":true}\n', { mode: 0o644 });
    const victim = join(dir, 'victim');
    writeFileSync(victim, 'mine');
    const aside = `${file}.123.tmp`;
    symlinkSync(victim, aside);
    replacePrivateFile(file, aside, '{"new":true}\n');
    expect(readFileSync(file, 'utf8')).toBe('{"new":true}\n');
    expect(mode(file)).toBe('600');
    expect(readFileSync(victim, 'utf8')).toBe('mine');
    expect(() => lstatSync(aside)).toThrow();
  });
});

describe('makePrivateDir', () => {
  it('makes missing folders 0700; tightens an existing one only when asked', () => {
    const nested = join(dir, 'a', 'b', 'c');
    makePrivateDir(nested);
    expect(mode(nested)).toBe('700');
    const open = join(dir, 'open');
    mkdirSync(open, { mode: 0o755 });
    chmodSync(open, 0o755);
    makePrivateDir(open);
    expect(mode(open)).toBe('755');
    makePrivateDir(open, { tighten: true });
    expect(mode(open)).toBe('700');
  });
});
