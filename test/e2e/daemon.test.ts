/**
 * `qmd mcp --http --daemon` and `qmd mcp stop`, with real processes. The pidfile
 * (`<index>.mcp.pid`) records the pid with its start time (field 22 of /proc/PID/stat), the
 * boot id and the command line; `stop` signals only the very process that wrote it. The
 * peer's `stop` once SIGTERMed whatever had inherited a recycled PID.
 */
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PidRecord } from '../../src/cli/daemon/pidfile.js';
import { type ProcessIdentity, readIdentity } from '../../src/cli/daemon/proc.js';
import { QMD_BIN, qmdEnv, runQmd, tempWorkspace } from '../support/qmd.js';
import { spawnProcess, waitForExit } from '../support/spawn.js';
import { connectClient, health } from './fixtures/http-server.js';

const ws = tempWorkspace();
const pidfile = `${ws.index}.mcp.pid`;
const env = qmdEnv(ws.index);
beforeAll(async () => {
  const added = await runQmd(['collection', 'add', ws.notesDir, '--name', 'notes'], env);
  expect(added.code, added.stderr).toBe(0);
});
afterAll(() => ws.cleanup());

/** SIGKILL the daemon in `finally`, only while that pid is still a qmd. */
function killIfQmd(pid: number | undefined): void {
  if (pid === undefined) return;
  if (readIdentity(pid)?.cmdline.includes(QMD_BIN)) process.kill(pid, 'SIGKILL');
}

describe('the daemon', () => {
  it('starts detached, serves, refuses a second start, and `stop` ends it through the machine', async () => {
    let pid: number | undefined;
    try {
      const started = await runQmd(['mcp', '--http', '--daemon', '--port', '0'], env);
      expect(started.code, started.stderr).toBe(0);
      const match = /Serving (http:\/\/127\.0\.0\.1:(\d+)\/mcp) \(pid (\d+)\)/.exec(started.stdout);
      expect(match, started.stdout).not.toBeNull();
      const url = new URL(match?.[1] ?? '');
      const port = Number(match?.[2]);
      pid = Number(match?.[3]);

      // The pidfile says who it is, and /proc agrees.
      const record = JSON.parse(readFileSync(pidfile, 'utf8')) as PidRecord;
      const identity = readIdentity(pid);
      expect(record).toMatchObject({ pid, port, url: url.href, startTicks: identity?.startTicks });
      expect(record.cmdline).toEqual(identity?.cmdline);
      expect(record.cmdline).toContain('--daemon');

      expect((await health(port)).pid).toBe(pid);
      // The daemon made the bearer token beside the index, readable by this user alone.
      const tokenFile = `${ws.index}.mcp-token`;
      expect(statSync(tokenFile).mode & 0o777).toBe(0o600);
      const { client } = await connectClient(url, 'daemon-client', readFileSync(tokenFile, 'utf8').trim());
      const found = await client.callTool({ name: 'query', arguments: { query: 'sourdough' } });
      expect(found.isError).toBeFalsy();
      await client.close();

      const again = await runQmd(['mcp', '--http', '--daemon', '--port', '0'], env);
      expect(again.code).toBe(1);
      expect(again.stderr).toContain(`a daemon already serves ${url.href} (pid ${pid})`);

      const stopped = await runQmd(['mcp', 'stop'], env);
      expect(stopped.code, stopped.stderr).toBe(0);
      expect(stopped.stdout).toContain(`Stopped the daemon (pid ${pid}`);
      // `stop` waited for the exit: the process is gone and took its pidfile with it.
      expect(readIdentity(pid)).toBeNull();
      expect(existsSync(pidfile)).toBe(false);
      const log = readFileSync(`${ws.index}.mcp.log`, 'utf8');
      expect(log).toContain('Shutting down (SIGTERM)...');
      expect(log).toMatch(/Shutdown complete in [\d.]+ ms: SIGTERM: drained, all steps ok, exit 0/);
      expect(existsSync(`${ws.index}-wal`)).toBe(false);
    } finally {
      killIfQmd(pid);
    }
  });

  it('a stale pidfile naming a live, unrelated process: reported, removed, never signalled', async () => {
    const stranger = spawnProcess('sleep', ['600']);
    const anotherStranger = spawnProcess('sleep', ['600']);
    try {
      const write = (pid: number, change: (real: ProcessIdentity) => Partial<PidRecord>) => {
        const real = readIdentity(pid);
        if (real === null) throw new Error(`sleep ${pid} is not running`);
        const record: PidRecord = {
          ...real,
          host: '127.0.0.1',
          port: 8181,
          url: 'http://127.0.0.1:8181/mcp',
          index: ws.index,
          version: '0.0.0',
          startedAt: new Date().toISOString(),
        };
        writeFileSync(pidfile, JSON.stringify({ ...record, ...change(real) }));
      };

      // The PID was recycled: same number, a process that started at another time.
      write(stranger.child.pid ?? -1, (real) => ({
        startTicks: real.startTicks + 1,
        cmdline: [process.execPath, QMD_BIN, 'mcp'],
      }));
      const first = await runQmd(['mcp', 'stop'], env);
      expect(first.code).toBe(1);
      expect(first.stderr).toContain('is another process now (its start time differs)');
      expect(first.stderr).toContain('removed it and signalled nothing');
      expect(existsSync(pidfile)).toBe(false);

      // Same start time but another program: still not ours.
      write(anotherStranger.child.pid ?? -1, () => ({
        cmdline: [process.execPath, QMD_BIN, 'mcp', '--http', '--daemon'],
      }));
      const second = await runQmd(['mcp', 'stop'], env);
      expect(second.code).toBe(1);
      expect(second.stderr).toContain('is another program now (sleep 600)');
      expect(existsSync(pidfile)).toBe(false);

      // Both strangers are alive, and die by our SIGKILL — not by a SIGTERM sent before it.
      for (const p of [stranger, anotherStranger]) {
        expect(readIdentity(p.child.pid ?? -1)).not.toBeNull();
        p.kill();
        expect(await waitForExit(p)).toEqual({ code: null, signal: 'SIGKILL' });
      }
    } finally {
      stranger.kill();
      anotherStranger.kill();
    }
  });

  it('stop with no pidfile says so and exits 1', async () => {
    const result = await runQmd(['mcp', 'stop'], env);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('no daemon is running');
  });
});
