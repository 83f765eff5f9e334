/**
 * `qmd mcp --http --daemon` and `qmd mcp stop`, with real processes, both with /proc and with
 * the /proc reader answering "unavailable" (`QMD_TEST_NO_PROC=1`, as on macOS and Windows).
 * `stop` asks the daemon over its control socket (found from the index) and never signals a
 * PID read from the pidfile: the peer's `stop` once SIGTERMed whatever had inherited a
 * recycled PID, and a pidfile is anybody's to edit.
 */
import {
  chmodSync,
  existsSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { daemonControlPath } from '../../src/relay/paths.js';
import type { PidRecord } from '../../src/serve/daemon/pidfile.js';
import { readIdentity } from '../../src/serve/daemon/proc.js';
import { QMD_BIN, qmdEnv, runQmd, tempWorkspace } from '../support/qmd.js';
import { spawnProcess, waitForExit } from '../support/spawn.js';
import { connectClient, health } from './fixtures/http-server.js';
import { PROC_MODES } from './fixtures/proc-modes.js';

/** SIGKILL the daemon in `finally`, only while that pid is still a qmd (read by the test, on Linux). */
function killIfQmd(pid: number | undefined): void {
  if (pid === undefined) return;
  if (readIdentity(pid)?.cmdline.includes(QMD_BIN)) process.kill(pid, 'SIGKILL');
}

describe.each(PROC_MODES)('the daemon, $mode', ({ extra }) => {
  const ws = tempWorkspace();
  const runtime = mkdtempSync(join(tmpdir(), 'qmd-run-'));
  const pidfile = `${ws.index}.mcp.pid`;
  const env = qmdEnv(ws.index, { XDG_RUNTIME_DIR: runtime, ...extra });
  const control = daemonControlPath(ws.index, env);
  const noProc = 'QMD_TEST_NO_PROC' in extra;
  beforeAll(async () => {
    const added = await runQmd(['collection', 'add', ws.notesDir, '--name', 'notes'], env);
    expect(added.code, added.stderr).toBe(0);
  });
  afterAll(() => {
    ws.cleanup();
    rmSync(runtime, { recursive: true, force: true });
  });

  async function startDaemon(): Promise<{ pid: number; url: URL; port: number }> {
    const started = await runQmd(['mcp', '--http', '--daemon', '--port', '0'], env);
    expect(started.code, started.stderr).toBe(0);
    const match = /Serving (http:\/\/127\.0\.0\.1:(\d+)\/mcp) \(pid (\d+)\)/.exec(started.stdout);
    expect(match, started.stdout).not.toBeNull();
    return { url: new URL(match?.[1] ?? ''), port: Number(match?.[2]), pid: Number(match?.[3]) };
  }

  it('starts detached, serves, refuses a second start, and `stop` ends it through the machine', async () => {
    let pid: number | undefined;
    try {
      const daemon = await startDaemon();
      pid = daemon.pid;

      // The pidfile says who claimed the index and where its control socket is; /proc adds
      // the identity only where the product may read it.
      const record = JSON.parse(readFileSync(pidfile, 'utf8')) as PidRecord;
      expect(record).toMatchObject({ pid, port: daemon.port, url: daemon.url.href, control, index: ws.index });
      expect(record.instance).toMatch(/^[0-9a-f-]{36}$/);
      if (noProc) expect(record.identity).toBeUndefined();
      else expect(record.identity?.startTicks).toBe(readIdentity(pid)?.startTicks);
      expect(existsSync(control)).toBe(true);

      expect((await health(daemon.port)).pid).toBe(pid);
      // The daemon made the bearer token beside the index, readable by this user alone.
      const tokenFile = `${ws.index}.mcp-token`;
      expect(statSync(tokenFile).mode & 0o777).toBe(0o600);
      const { client } = await connectClient(daemon.url, 'daemon-client', readFileSync(tokenFile, 'utf8').trim());
      const found = await client.callTool({ name: 'query', arguments: { query: 'sourdough' } });
      expect(found.isError).toBeFalsy();
      await client.close();

      const again = await runQmd(['mcp', '--http', '--daemon', '--port', '0'], env);
      expect(again.code).toBe(1);
      expect(again.stderr).toContain(`a daemon already serves ${daemon.url.href} (pid ${pid})`);

      const stopped = await runQmd(['mcp', 'stop'], env);
      expect(stopped.code, stopped.stderr).toBe(0);
      expect(stopped.stdout).toContain(`Stopped the daemon (pid ${pid})`);
      // `stop` waited for the exit: the process is gone and took its pidfile and socket with it.
      expect(readIdentity(pid)).toBeNull();
      expect(existsSync(pidfile)).toBe(false);
      expect(existsSync(control)).toBe(false);
      const log = readFileSync(`${ws.index}.mcp.log`, 'utf8');
      expect(log).toContain('Shutting down (qmd mcp stop)...');
      expect(log).toMatch(/Shutdown complete in [\d.]+ ms: qmd mcp stop: drained, all steps ok, exit 0/);
      expect(existsSync(`${ws.index}-wal`)).toBe(false);
    } finally {
      killIfQmd(pid);
    }
  });

  it('a pidfile naming a live stranger: start replaces it, `stop` never signals it and still stops the daemon', async () => {
    const stranger = spawnProcess('sleep', ['600']);
    let pid: number | undefined;
    try {
      const strangerPid = stranger.child.pid ?? -1;
      const forged = (change: Partial<PidRecord>): void => {
        const record: PidRecord = {
          pid: strangerPid,
          instance: 'forged',
          host: '127.0.0.1',
          port: 8181,
          url: 'http://127.0.0.1:8181/mcp',
          index: ws.index,
          version: '0.0.0',
          startedAt: new Date(Date.now() - 3_600_000).toISOString(),
          control,
          ...change,
        };
        writeFileSync(pidfile, JSON.stringify(record));
      };

      // Left from an hour ago, its PID since given to another program: stale; nothing answers.
      forged({});
      const first = await runQmd(['mcp', 'stop'], env);
      expect(first.code).toBe(1);
      expect(first.stderr).toContain(`removed a record naming pid ${strangerPid}`);
      expect(first.stderr).toContain('signalled nothing');
      expect(existsSync(pidfile)).toBe(false);

      // The same stale pidfile does not keep a daemon from starting.
      forged({});
      const daemon = await startDaemon();
      pid = daemon.pid;
      expect(JSON.parse(readFileSync(pidfile, 'utf8')).pid).toBe(pid);

      // Tampered with while the daemon runs: it names the stranger now. `stop` asks the socket.
      forged({ startedAt: new Date().toISOString() });
      const stopped = await runQmd(['mcp', 'stop'], env);
      expect(stopped.code, stopped.stderr).toBe(0);
      expect(stopped.stdout).toContain(`Stopped the daemon (pid ${pid})`);
      expect(readIdentity(pid)).toBeNull();
      expect(readFileSync(`${ws.index}.mcp.log`, 'utf8')).toContain('Shutting down (qmd mcp stop)...');
      // Nothing answers any more: the forged record was stale and is gone.
      expect(existsSync(pidfile)).toBe(false);

      // The stranger is alive, and dies by our SIGKILL — not by a SIGTERM sent before it.
      expect(readIdentity(strangerPid)).not.toBeNull();
      stranger.kill();
      expect(await waitForExit(stranger)).toEqual({ code: null, signal: 'SIGKILL' });
    } finally {
      stranger.kill();
      killIfQmd(pid);
    }
  });

  it('stop with no daemon and no pidfile says so and exits 1', async () => {
    const result = await runQmd(['mcp', 'stop'], env);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('no HTTP server (daemon or qmd mcp --http) is running');
  });
});

describe('the daemon’s log beside the index (src/private-file.ts)', () => {
  const ws = tempWorkspace();
  const runtime = mkdtempSync(join(tmpdir(), 'qmd-run-'));
  const env = qmdEnv(ws.index, { XDG_RUNTIME_DIR: runtime });
  const log = `${ws.index}.mcp.log`;
  beforeAll(async () => {
    const added = await runQmd(['collection', 'add', ws.notesDir, '--name', 'notes'], env);
    expect(added.code, added.stderr).toBe(0);
  });
  afterAll(() => {
    ws.cleanup();
    rmSync(runtime, { recursive: true, force: true });
  });

  it('a symbolic link planted at its path is refused in one line, exit 1; what it points at is untouched, no daemon starts', async () => {
    const victim = join(ws.dir, 'bashrc');
    writeFileSync(victim, 'export PATH\n');
    symlinkSync(victim, log);
    try {
      const started = await runQmd(['mcp', '--http', '--daemon', '--port', '0'], env);
      expect(started.code).toBe(1);
      expect(started.stdout).toBe('');
      expect(started.stderr).toBe(
        `qmd: ${log} is a symbolic link: qmd never writes through one (it could point at any file of yours); remove it (rm ${log})\n`,
      );
      expect(readFileSync(victim, 'utf8')).toBe('export PATH\n');
      expect(existsSync(`${ws.index}.mcp.pid`)).toBe(false);
    } finally {
      rmSync(log, { force: true });
    }
  });

  it('a log left 0644 by an older release becomes 0600, its lines kept, before the daemon writes', async () => {
    writeFileSync(log, 'an older run\n');
    chmodSync(log, 0o644);
    let pid: number | undefined;
    try {
      const started = await runQmd(['mcp', '--http', '--daemon', '--port', '0'], env);
      expect(started.code, started.stderr).toBe(0);
      pid = Number(/\(pid (\d+)\)/.exec(started.stdout)?.[1]);
      expect(statSync(log).mode & 0o777).toBe(0o600);
      expect(readFileSync(log, 'utf8').startsWith('an older run\n')).toBe(true);
      const stopped = await runQmd(['mcp', 'stop'], env);
      expect(stopped.code, stopped.stderr).toBe(0);
    } finally {
      killIfQmd(pid);
    }
  });
});
