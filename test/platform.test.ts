/**
 * The platform rules (src/platform.ts), every branch, on any machine: each rule takes the facts
 * and returns a decision. What only a real macOS or Windows machine can confirm (that those
 * systems behave as the rules assume) is listed in docs/design.md §7.
 */
import { describe, expect, it } from 'vitest';
import {
  enforcesFileModes,
  type HostFacts,
  maxSocketPathBytes,
  parentDeathRule,
  privateDir,
  shortDir,
  shutdownSignals,
  socketPath,
  usesNamedPipes,
} from '../src/platform.js';

const HASH = '0123456789abcdef';
const linux = (env: HostFacts['env'] = {}): HostFacts => ({
  platform: 'linux',
  env,
  uid: 1000,
  user: 'ann',
  tmpdir: '/tmp',
});
const mac = (env: HostFacts['env'] = {}): HostFacts => ({
  platform: 'darwin',
  env,
  uid: 501,
  user: 'ann',
  tmpdir: env.TMPDIR ?? '/tmp',
});
const windows = (user = 'Ann'): HostFacts => ({
  platform: 'win32',
  env: { USERNAME: user },
  uid: undefined,
  user,
  tmpdir: 'C:\\Users\\Ann\\AppData\\Local\\Temp',
});
const place = (facts: HostFacts, name = `mcp-${HASH}`) => socketPath(facts, privateDir(facts), shortDir(facts), name);

describe('where the socket lives', () => {
  it('Linux: $XDG_RUNTIME_DIR/qmd, else a per-uid directory under tmp', () => {
    expect(place(linux({ XDG_RUNTIME_DIR: '/run/user/1000' }))).toBe(`/run/user/1000/qmd/mcp-${HASH}.sock`);
    expect(place(linux({ XDG_RUNTIME_DIR: '  ' }))).toBe(`/tmp/qmd-1000/mcp-${HASH}.sock`);
    expect(place(linux())).toBe(`/tmp/qmd-1000/mcp-${HASH}.sock`);
  });

  it('macOS: the per-user $TMPDIR, else /tmp/qmd-<uid>; $XDG_RUNTIME_DIR if a user set one', () => {
    const tmp = '/var/folders/zz/zyxvpxvq6csfxvn_n0000000000000/T/';
    expect(place(mac({ TMPDIR: tmp }))).toBe(`/var/folders/zz/zyxvpxvq6csfxvn_n0000000000000/T/qmd/mcp-${HASH}.sock`);
    expect(place(mac())).toBe(`/tmp/qmd-501/mcp-${HASH}.sock`);
    expect(place(mac({ TMPDIR: tmp, XDG_RUNTIME_DIR: '/Users/ann/run' }))).toBe(`/Users/ann/run/qmd/mcp-${HASH}.sock`);
  });

  it('the sun_path limit: 107 bytes on Linux, 103 on macOS; a longer path falls back to /tmp/qmd-<uid>', () => {
    expect(maxSocketPathBytes('linux')).toBe(107);
    expect(maxSocketPathBytes('darwin')).toBe(103);
    // A $TMPDIR that leaves the socket at exactly 104 bytes: fine on Linux, too long on macOS.
    const dir = `/${'t'.repeat(104 - `/qmd/mcp-${HASH}.sock`.length - 1)}`;
    expect(Buffer.byteLength(`${dir}/qmd/mcp-${HASH}.sock`)).toBe(104);
    expect(place(mac({ TMPDIR: dir }))).toBe(`/tmp/qmd-501/mcp-${HASH}.sock`);
    expect(place(linux({ XDG_RUNTIME_DIR: dir }))).toBe(`${dir}/qmd/mcp-${HASH}.sock`);
    const deeper = `/${'t'.repeat(120)}`;
    expect(place(linux({ XDG_RUNTIME_DIR: deeper }))).toBe(`/tmp/qmd-1000/mcp-${HASH}.sock`);
  });

  it('a fallback directory too deep as well: the name is cut from the front, keeping its hash', () => {
    const facts: HostFacts = { ...linux(), tmpdir: `/${'x'.repeat(90)}` };
    const path = socketPath(facts, `/${'y'.repeat(120)}`, `/${'x'.repeat(90)}`, `mcp-${HASH}`);
    expect(Buffer.byteLength(path)).toBeLessThanOrEqual(107);
    expect(path).toMatch(new RegExp(`/${'x'.repeat(90)}/[^/]*${HASH.slice(-8)}\\.sock$`));
  });

  it('Windows: a named pipe per user and index; files under %TEMP%\\qmd', () => {
    expect(place(windows())).toBe(`\\\\.\\pipe\\qmd-Ann-mcp-${HASH}`);
    expect(place(windows('Ann Lee\\corp'))).toBe(`\\\\.\\pipe\\qmd-Ann_Lee_corp-mcp-${HASH}`);
    expect(place(windows(''))).toBe(`\\\\.\\pipe\\qmd-user-mcp-${HASH}`);
    expect(place(windows(), `http-${HASH}`)).not.toBe(place(windows()));
    expect(privateDir(windows())).toBe('C:\\Users\\Ann\\AppData\\Local\\Temp\\qmd');
    expect(usesNamedPipes('win32')).toBe(true);
    expect(usesNamedPipes('linux')).toBe(false);
    expect(usesNamedPipes('darwin')).toBe(false);
  });

  it('file modes mean something everywhere but Windows', () => {
    expect(enforcesFileModes('linux')).toBe(true);
    expect(enforcesFileModes('darwin')).toBe(true);
    expect(enforcesFileModes('win32')).toBe(false);
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
