/**
 * The platform rules (src/platform.ts), every branch, on any machine: each rule takes the facts
 * and returns a decision. What only a real macOS or Windows machine can confirm (that those
 * systems behave as the rules assume) is listed in docs/design.md §7.
 */
import { describe, expect, it } from 'vitest';
import {
  enforcesFileModes,
  fitsSocketPath,
  type HostFacts,
  legacyPlaceDirs,
  legacyPrivateDir,
  maxSocketPathBytes,
  parentDeathRule,
  placeDir,
  shutdownSignals,
  socketPath,
  usesNamedPipes,
} from '../src/platform.js';

const HASH = '0123456789abcdef';
const linux = (env: HostFacts['env'] = {}, tmpdir = '/tmp'): HostFacts => ({
  platform: 'linux',
  env,
  uid: 1000,
  user: 'ann',
  home: '/home/ann',
  tmpdir,
});
const mac = (env: HostFacts['env'] = {}): HostFacts => ({
  platform: 'darwin',
  env,
  uid: 501,
  user: 'ann',
  home: '/Users/ann',
  tmpdir: env.TMPDIR ?? '/tmp',
});
const windows = (user = 'Ann', env: HostFacts['env'] = { USERNAME: user }): HostFacts => ({
  platform: 'win32',
  env,
  uid: undefined,
  user,
  home: 'C:\\Users\\Ann',
  tmpdir: 'C:\\Users\\Ann\\AppData\\Local\\Temp',
});
const place = (facts: HostFacts, name = `mcp-${HASH}`) => socketPath(facts, placeDir(facts), name);

/** What every client of one user may be started with: the SDK's default, a desktop terminal's, a macOS one's. */
const STRIPPED = {
  HOME: '/home/ann',
  LOGNAME: 'ann',
  PATH: '/usr/bin:/bin',
  SHELL: '/bin/sh',
  TERM: 'xterm',
  USER: 'ann',
};

describe('the one place per person', () => {
  it('Linux: /tmp/qmd-<uid>, whatever the environment (stripped, XDG_RUNTIME_DIR, another TMPDIR)', () => {
    const expected = `/tmp/qmd-1000/mcp-${HASH}.sock`;
    expect(place(linux(STRIPPED))).toBe(expected);
    expect(place(linux({ ...STRIPPED, XDG_RUNTIME_DIR: '/run/user/1000' }))).toBe(expected);
    expect(place(linux({ ...STRIPPED, TMPDIR: '/var/tmp/ann' }, '/var/tmp/ann'))).toBe(expected);
    expect(place(linux({ HOME: '/elsewhere', USER: 'bob' }))).toBe(expected);
  });

  it('macOS: /tmp/qmd-<uid> too, with or without the per-user $TMPDIR a stripped environment loses', () => {
    const tmp = '/var/folders/zz/zyxvpxvq6csfxvn_n0000000000000/T/';
    expect(place(mac({ TMPDIR: tmp }))).toBe(`/tmp/qmd-501/mcp-${HASH}.sock`);
    expect(place(mac(STRIPPED))).toBe(`/tmp/qmd-501/mcp-${HASH}.sock`);
    expect(place(mac({ TMPDIR: tmp, XDG_RUNTIME_DIR: '/Users/ann/run' }))).toBe(`/tmp/qmd-501/mcp-${HASH}.sock`);
  });

  it('Windows: a named pipe per user (from the user database) and index; files under the profile, not %TEMP%', () => {
    expect(place(windows())).toBe(`\\\\.\\pipe\\qmd-Ann-mcp-${HASH}`);
    expect(place(windows('Ann', {}))).toBe(place(windows('Ann', { USERNAME: 'someone-else', TEMP: 'D:\\t' })));
    expect(place(windows('Ann Lee\\corp'))).toBe(`\\\\.\\pipe\\qmd-Ann_Lee_corp-mcp-${HASH}`);
    expect(place(windows(''))).toBe(`\\\\.\\pipe\\qmd-user-mcp-${HASH}`);
    expect(place(windows(), `http-${HASH}`)).not.toBe(place(windows()));
    expect(placeDir(windows())).toBe('C:\\Users\\Ann\\AppData\\Local\\qmd\\run');
    expect(usesNamedPipes('win32')).toBe(true);
    expect(usesNamedPipes('linux')).toBe(false);
    expect(usesNamedPipes('darwin')).toBe(false);
  });

  it('the sun_path limit: 107 bytes on Linux, 103 on macOS; the place is far under both', () => {
    expect(maxSocketPathBytes('linux')).toBe(107);
    expect(maxSocketPathBytes('darwin')).toBe(103);
    const longest = socketPath(mac(), placeDir({ ...mac(), uid: 4_294_967_294 }), `mcp-${HASH}-retiring-4194304`);
    expect(Buffer.byteLength(longest)).toBeLessThanOrEqual(103);
    expect(longest).toBe(`/tmp/qmd-4294967294/mcp-${HASH}-retiring-4194304.sock`);
  });

  it('a directory too deep for a socket: the name is cut from the front, keeping its hash', () => {
    const dir = `/${'y'.repeat(90)}`;
    const path = socketPath(linux(), dir, `mcp-${HASH}`);
    expect(Buffer.byteLength(path)).toBeLessThanOrEqual(107);
    expect(path).toMatch(new RegExp(`^${dir}/[^/]*${HASH.slice(-8)}\\.sock$`));
    expect(fitsSocketPath(linux(), `/${'x'.repeat(110)}`)).toBe(false);
    expect(fitsSocketPath(mac(), `/${'x'.repeat(102)}`)).toBe(true);
    expect(fitsSocketPath(windows(), `\\\\.\\pipe\\${'x'.repeat(300)}`)).toBe(true);
  });

  it('file modes mean something everywhere but Windows', () => {
    expect(enforcesFileModes('linux')).toBe(true);
    expect(enforcesFileModes('darwin')).toBe(true);
    expect(enforcesFileModes('win32')).toBe(false);
  });
});

describe('where an older qmd (0.1) listened', () => {
  it('its rule: $XDG_RUNTIME_DIR/qmd, else $TMPDIR/qmd on macOS, else <tmp>/qmd-<uid>; %TEMP%\\qmd on Windows', () => {
    expect(legacyPrivateDir(linux({ XDG_RUNTIME_DIR: '/run/user/1000' }))).toBe('/run/user/1000/qmd');
    expect(legacyPrivateDir(linux({ XDG_RUNTIME_DIR: '  ' }))).toBe('/tmp/qmd-1000');
    expect(legacyPrivateDir(linux({}, '/var/tmp'))).toBe('/var/tmp/qmd-1000');
    expect(legacyPrivateDir(mac({ TMPDIR: '/var/folders/x/T/' }))).toBe('/var/folders/x/T/qmd');
    expect(legacyPrivateDir(mac())).toBe('/tmp/qmd-501');
    expect(legacyPrivateDir(mac({ TMPDIR: '/t', XDG_RUNTIME_DIR: '/Users/ann/run' }))).toBe('/Users/ann/run/qmd');
    expect(legacyPrivateDir(windows())).toBe('C:\\Users\\Ann\\AppData\\Local\\Temp\\qmd');
  });

  it('the places looked in: the old rule for this environment, and /run/user/<uid>/qmd on Linux, never the place itself', () => {
    expect(legacyPlaceDirs(linux(STRIPPED))).toEqual(['/run/user/1000/qmd']);
    expect(legacyPlaceDirs(linux({ XDG_RUNTIME_DIR: '/run/user/1000' }))).toEqual(['/run/user/1000/qmd']);
    expect(legacyPlaceDirs(linux({ XDG_RUNTIME_DIR: '/xdg' }))).toEqual(['/xdg/qmd', '/run/user/1000/qmd']);
    expect(legacyPlaceDirs(linux({ TMPDIR: '/var/tmp' }, '/var/tmp'))).toEqual([
      '/var/tmp/qmd-1000',
      '/run/user/1000/qmd',
    ]);
    expect(legacyPlaceDirs(mac({ TMPDIR: '/var/folders/x/T/' }))).toEqual(['/var/folders/x/T/qmd']);
    // A stripped macOS environment has no $TMPDIR: the old rule then gave the place itself.
    expect(legacyPlaceDirs(mac(STRIPPED))).toEqual([]);
    expect(legacyPlaceDirs(windows())).toEqual(['C:\\Users\\Ann\\AppData\\Local\\Temp\\qmd']);
  });
});

describe('how the parent’s death is seen', () => {
  it('reparenting (the PPID changes) on Linux and macOS; the parent no longer existing on Windows', () => {
    expect(parentDeathRule('linux')).toBe('reparented');
    expect(parentDeathRule('darwin')).toBe('reparented');
    expect(parentDeathRule('freebsd')).toBe('reparented');
    expect(parentDeathRule('win32')).toBe('parent-alive');
  });
});

describe('which signals mean shut down', () => {
  it('SIGTERM, SIGINT, SIGHUP on Unix; no SIGTERM on Windows (nothing can send one there)', () => {
    expect(shutdownSignals('linux')).toEqual(['SIGTERM', 'SIGINT', 'SIGHUP']);
    expect(shutdownSignals('darwin')).toEqual(['SIGTERM', 'SIGINT', 'SIGHUP']);
    expect(shutdownSignals('win32')).toEqual(['SIGINT', 'SIGHUP']);
  });
});
