/**
 * Where the shared server listens, whom a relay trusts, and who starts the server: real files,
 * real Unix sockets, real modes and owners (the ownership cases need root to chown, and skip
 * themselves otherwise).
 */
import { chmodSync, chownSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { releaseSpawnLock, takeSpawnLock } from '../../src/relay/connect.js';
import { daemonControlPath, fnv1a64, secureDir, secureSocket, sharedPaths } from '../../src/relay/paths.js';

const dirs: string[] = [];
const servers: Server[] = [];
function temp(): string {
  const dir = mkdtempSync(join(tmpdir(), 'qmd-relay-'));
  dirs.push(dir);
  return dir;
}
afterEach(() => {
  for (const s of servers.splice(0)) s.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const isRoot = process.getuid?.() === 0;
/** An index's paths with a runtime directory of the test's own (not the machine's shared tmp one). */
const _privatePaths = () => sharedPaths(join(temp(), 'index.sqlite'), { XDG_RUNTIME_DIR: temp() });

function listenOn(path: string, mode = 0o600): Promise<Server> {
  return new Promise((resolve) => {
    const server = createServer((socket) => socket.end());
    servers.push(server);
    server.listen(path, () => {
      chmodSync(path, mode);
      resolve(server);
    });
  });
}

describe('sharedPaths', () => {
  it('one socket per index, in $XDG_RUNTIME_DIR/qmd, else a per-uid directory under tmp; its files beside it', () => {
    const a = sharedPaths('/data/a/index.sqlite', { XDG_RUNTIME_DIR: '/run/user/1000' });
    const b = sharedPaths('/data/b/index.sqlite', { XDG_RUNTIME_DIR: '/run/user/1000' });
    expect(a.dir).toBe('/run/user/1000/qmd');
    expect(a.socket).toMatch(/^\/run\/user\/1000\/qmd\/mcp-[0-9a-f]{16}\.sock$/);
    expect(a.record).toBe(a.socket.replace(/\.sock$/, '.json'));
    expect(a.failure).toBe(a.socket.replace(/\.sock$/, '.failed'));
    expect(a.socket).not.toBe(b.socket);
    expect(sharedPaths('/data/a/../a/index.sqlite', {}).socket).toBe(sharedPaths('/data/a/index.sqlite', {}).socket);
    expect(sharedPaths('/data/a/index.sqlite', {}).dir).toBe(join(tmpdir(), `qmd-${process.getuid?.()}`));
  });

  it('the daemon’s control socket: same directory, its own name, found from the index alone', () => {
    const env = { XDG_RUNTIME_DIR: '/run/user/1000' };
    const control = daemonControlPath('/data/a/index.sqlite', env);
    expect(control).toMatch(/^\/run\/user\/1000\/qmd\/http-[0-9a-f]{16}\.sock$/);
    expect(control.slice(-21)).toBe(sharedPaths('/data/a/index.sqlite', env).socket.slice(-21));
    expect(daemonControlPath('/data/b/index.sqlite', env)).not.toBe(control);
  });

  it('on Windows (the facts given): a named pipe, and the files in %TEMP%\\qmd', () => {
    const facts = { platform: 'win32' as const, env: {}, uid: undefined, user: 'ann', tmpdir: 'C:\\Temp' };
    const paths = sharedPaths('/data/a/index.sqlite', {}, facts);
    expect(paths.socket).toMatch(/^\\\\\.\\pipe\\qmd-ann-mcp-[0-9a-f]{16}$/);
    expect(paths.dir).toBe('C:\\Temp\\qmd');
    expect(paths.record).toMatch(/^C:\\Temp\\qmd\\mcp-[0-9a-f]{16}\.json$/);
  });

  it('names sockets with 64-bit FNV-1a (the published test vectors)', () => {
    expect(fnv1a64('')).toBe('cbf29ce484222325');
    expect(fnv1a64('a')).toBe('af63dc4c8601ec8c');
    expect(fnv1a64('foobar')).toBe('85944171f73967e8');
  });

  it('a path too long for a Unix socket falls back to a private directory under tmp', () => {
    const deep = `/${'d'.repeat(120)}/index.sqlite`;
    const paths = sharedPaths(deep, {});
    expect(Buffer.byteLength(paths.socket)).toBeLessThanOrEqual(103);
    expect(paths.dir.startsWith(tmpdir())).toBe(true);
  });
});

describe('whom a relay trusts', () => {
  it('makes its directory 0700 and accepts it', () => {
    const dir = join(temp(), 'qmd');
    expect(secureDir(dir)).toBeNull();
    expect(statSync(dir).mode & 0o777).toBe(0o700);
  });

  it('refuses a directory others can enter', () => {
    const dir = temp();
    chmodSync(dir, 0o755);
    expect(secureDir(dir)).toMatch(/open to other users \(mode 755\)/);
  });

  it('refuses a socket others can open (0666), accepts a 0600 one, and a missing one', async () => {
    const dir = temp();
    chmodSync(dir, 0o700);
    expect(secureSocket(join(dir, 'none.sock'))).toBeNull();
    await listenOn(join(dir, 'open.sock'), 0o666);
    expect(secureSocket(join(dir, 'open.sock'))).toMatch(/open to other users \(mode 666\)/);
    await listenOn(join(dir, 'ok.sock'), 0o600);
    expect(secureSocket(join(dir, 'ok.sock'))).toBeNull();
    writeFileSync(join(dir, 'file.sock'), '');
    expect(secureSocket(join(dir, 'file.sock'))).toMatch(/not a socket/);
  });

  it.skipIf(!isRoot)('refuses a directory and a socket that belong to another user', async () => {
    const dir = temp();
    const theirs = join(dir, 'theirs');
    mkdirSync(theirs, { mode: 0o700 });
    chownSync(theirs, 65534, 65534);
    expect(secureDir(theirs)).toMatch(/belongs to another user \(uid 65534\)/);
    chmodSync(dir, 0o700);
    await listenOn(join(dir, 's.sock'));
    chownSync(join(dir, 's.sock'), 65534, 65534);
    expect(secureSocket(join(dir, 's.sock'))).toMatch(/belongs to another user/);
  });
});

describe('the spawn lock', () => {
  it('one holder at a time; released by its holder; a dead holder’s lock is taken over', () => {
    const lock = join(temp(), 'x.spawn');
    expect(takeSpawnLock(lock, 10_000)).toBe(true);
    expect(takeSpawnLock(lock, 10_000)).toBe(false);
    releaseSpawnLock(lock);
    expect(takeSpawnLock(lock, 10_000)).toBe(true);
    releaseSpawnLock(lock);
    // A lock left by a process that no longer exists.
    writeFileSync(lock, '2147483646');
    expect(takeSpawnLock(lock, 10_000)).toBe(true);
  });
});
