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
import {
  daemonControlPath,
  fnv1a64,
  hostFacts,
  legacyDaemonControlPaths,
  legacySharedPaths,
  ownSocketPath,
  retiringRecordPath,
  secureDir,
  secureSocket,
  sharedPaths,
} from '../../src/relay/paths.js';

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
  const uid = process.getuid?.();
  it('one socket per index, in /tmp/qmd-<uid> whatever the environment; its files beside it', () => {
    const a = sharedPaths('/data/a/index.sqlite', { XDG_RUNTIME_DIR: '/run/user/1000' });
    const b = sharedPaths('/data/b/index.sqlite', {});
    expect(a.dir).toBe(`/tmp/qmd-${uid}`);
    expect(a.socket).toMatch(new RegExp(`^/tmp/qmd-${uid}/mcp-[0-9a-f]{16}\\.sock$`));
    expect(a.socket).toBe(sharedPaths('/data/a/index.sqlite', { TMPDIR: '/var/tmp/x' }).socket);
    expect(a.record).toBe(a.socket.replace(/\.sock$/, '.json'));
    expect(a.failure).toBe(a.socket.replace(/\.sock$/, '.failed'));
    expect(a.socket).not.toBe(b.socket);
    expect(sharedPaths('/data/a/../a/index.sqlite', {}).socket).toBe(sharedPaths('/data/a/index.sqlite', {}).socket);
  });

  it('QMD_TEST_LEGACY_PLACE=1 (tests only) plays qmd 0.1: its place is the old rule’s', () => {
    const old = sharedPaths('/data/a/index.sqlite', { XDG_RUNTIME_DIR: '/run/user/1000', QMD_TEST_LEGACY_PLACE: '1' });
    expect(old.dir).toBe('/run/user/1000/qmd');
    // A process with the same environment looks there for an older server.
    const facts = hostFacts({ XDG_RUNTIME_DIR: '/run/user/1000' });
    expect(legacySharedPaths('/data/a/index.sqlite', facts).map((p) => p.socket)).toContain(old.socket);
  });

  it('the daemon’s control socket: same directory, its own name, found from the index alone', () => {
    const env = { XDG_RUNTIME_DIR: '/run/user/1000' };
    const control = daemonControlPath('/data/a/index.sqlite', env);
    expect(control).toMatch(new RegExp(`^/tmp/qmd-${uid}/http-[0-9a-f]{16}\\.sock$`));
    expect(control.slice(-21)).toBe(sharedPaths('/data/a/index.sqlite', env).socket.slice(-21));
    expect(daemonControlPath('/data/b/index.sqlite', env)).not.toBe(control);
    expect(legacyDaemonControlPaths('/data/a/index.sqlite', hostFacts(env))).toContain(
      `/run/user/1000/qmd/${control.slice(-26)}`,
    );
  });

  it('a server’s own socket, and a retiring server’s record: named from the index and its pid', () => {
    const paths = sharedPaths('/data/a/index.sqlite', {});
    expect(ownSocketPath(paths, 4242)).toBe(paths.socket.replace(/\.sock$/, '-4242.sock'));
    expect(retiringRecordPath(paths, 4242)).toBe(paths.socket.replace(/\.sock$/, '-retiring-4242.json'));
  });

  it('on Windows (the facts given): a named pipe, and the files under the profile', () => {
    const facts = {
      platform: 'win32' as const,
      env: { USERNAME: 'other', TEMP: 'C:\\Temp' },
      uid: undefined,
      user: 'ann',
      home: 'C:\\Users\\ann',
      tmpdir: 'C:\\Temp',
    };
    const paths = sharedPaths('/data/a/index.sqlite', facts);
    expect(paths.socket).toMatch(/^\\\\\.\\pipe\\qmd-ann-mcp-[0-9a-f]{16}$/);
    expect(paths.dir).toBe('C:\\Users\\ann\\AppData\\Local\\qmd\\run');
    expect(paths.record).toMatch(/^C:\\Users\\ann\\AppData\\Local\\qmd\\run\\mcp-[0-9a-f]{16}\.json$/);
    // qmd 0.1: the files in %TEMP%\qmd, the pipe named after %USERNAME%.
    const [old] = legacySharedPaths('/data/a/index.sqlite', facts);
    expect(old?.dir).toBe('C:\\Temp\\qmd');
    expect(old?.socket).toMatch(/^\\\\\.\\pipe\\qmd-other-mcp-/);
  });

  it('names sockets with 64-bit FNV-1a (the published test vectors)', () => {
    expect(fnv1a64('')).toBe('cbf29ce484222325');
    expect(fnv1a64('a')).toBe('af63dc4c8601ec8c');
    expect(fnv1a64('foobar')).toBe('85944171f73967e8');
  });

  it('an index path of any length: the socket stays short (the name is a hash)', () => {
    const deep = `/${'d'.repeat(200)}/index.sqlite`;
    expect(Buffer.byteLength(sharedPaths(deep, {}).socket)).toBeLessThanOrEqual(103);
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
