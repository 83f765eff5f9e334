/**
 * A foreground `qmd mcp --http` (issue 31), against the built binary: it holds the index's one
 * HTTP claim as the daemon does, so `qmd status` shows it (pid, URL, uptime, through its
 * control socket), `qmd mcp stop` stops it (its success on stdout, nothing on stderr), and a
 * second server for the same index is refused naming the first; a busy port names what holds
 * it and the fixes; and it ends by signals and `stop`, not by its parent's exit: started with
 * `nohup … &` from a script, it outlives the script (over stdio the parent is the client, and
 * that watch stays: test/e2e/parent.test.ts).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { processExists } from '../../src/lifecycle/parent.js';
import { daemonControlPath } from '../../src/relay/paths.js';
import { askStatus } from '../../src/serve/control/client.js';
import { QMD_BIN, qmdEnv, runQmd, tempWorkspace } from '../support/qmd.js';
import { spawnProcess, waitForExit } from '../support/spawn.js';
import { startHttpServer } from './fixtures/http-server.js';

const ws = tempWorkspace();
const other = tempWorkspace();
const runtime = mkdtempSync(join(tmpdir(), 'qmd-run-'));
const env = qmdEnv(ws.index, { XDG_RUNTIME_DIR: runtime });
const otherEnv = qmdEnv(other.index, { XDG_RUNTIME_DIR: runtime });

beforeAll(async () => {
  for (const [w, e] of [
    [ws, env],
    [other, otherEnv],
  ] as const) {
    const added = await runQmd(['collection', 'add', w.notesDir, '--name', 'notes'], e);
    expect(added.code, added.stderr).toBe(0);
  }
});
afterAll(() => {
  ws.cleanup();
  other.cleanup();
  rmSync(runtime, { recursive: true, force: true });
});

describe('a foreground qmd mcp --http', () => {
  it('is shown by qmd status, refuses a second server for its index, and qmd mcp stop ends it', async () => {
    const server = await startHttpServer(env);
    try {
      const pid = server.p.child.pid;
      const status = await runQmd(['status'], env);
      expect(status.code, status.stderr).toBe(0);
      expect(status.stdout).toMatch(
        new RegExp(
          `^HTTP server: ${server.url.href.replaceAll('.', '\\.')}, pid ${pid}, up \\d+ s \\(foreground; qmd mcp stop stops it\\)$`,
          'm',
        ),
      );
      const json = JSON.parse((await runQmd(['status', '--json'], env)).stdout) as {
        httpServer: { running: boolean; mode: string; pid: number; url: string; uptime: number };
      };
      expect(json.httpServer).toMatchObject({ running: true, mode: 'foreground', pid, url: server.url.href });

      const second = await runQmd(['mcp', '--http', '--port', '0', '--no-auth'], env);
      expect(second.code).toBe(1);
      expect(second.stderr.trim()).toBe(
        `qmd: qmd mcp --http (pid ${pid}) already serves this index at ${server.url.href}; use it, or stop it with qmd mcp stop`,
      );

      const stopped = await runQmd(['mcp', 'stop'], env);
      expect(stopped.code, stopped.stderr).toBe(0);
      expect(stopped.stdout).toBe(`Stopped the HTTP server (pid ${pid}): it ran its teardown and exited\n`);
      expect(stopped.stderr).toBe('');
      expect(await waitForExit(server.p)).toEqual({ code: 0, signal: null });
      expect(server.p.stderr()).toContain('Shutting down (qmd mcp stop)...');
      // Its claim went with it: status says so, and stop finds nothing.
      expect((await runQmd(['status'], env)).stdout).toContain(
        'HTTP server: not running (qmd mcp --http, or --http --daemon, starts one)',
      );
      const again = await runQmd(['mcp', 'stop'], env);
      expect(again.code).toBe(1);
      expect(again.stderr).toMatch(
        new RegExp(
          `^qmd: no HTTP server \\(daemon or qmd mcp --http\\) is running for ${ws.index.replaceAll('.', '\\.')} \\(`,
        ),
      );
    } finally {
      server.p.kill();
    }
  });

  it('a busy port: names the qmd holding it (pid, index, how to stop it), or says it is another program', async () => {
    const holder = await startHttpServer(otherEnv);
    try {
      const busy = await runQmd(['mcp', '--http', '--port', String(holder.port), '--no-auth'], env);
      expect(busy.code).toBe(1);
      expect(busy.stdout).toBe('');
      expect(qmdLine(busy.stderr)).toBe(
        `qmd: cannot listen on 127.0.0.1:${holder.port}: qmd mcp --http (pid ${holder.p.child.pid}) listens there, serving ${other.index}; stop it with qmd mcp stop --index ${other.index}, or choose another port (--port N, or --port 0 for any free one)`,
      );
    } finally {
      holder.p.kill();
    }
    const stranger: Server = createServer();
    const port = await new Promise<number>((resolve) =>
      stranger.listen(0, '127.0.0.1', () => resolve((stranger.address() as { port: number }).port)),
    );
    try {
      const busy = await runQmd(['mcp', '--http', '--port', String(port), '--no-auth'], env);
      expect(busy.code).toBe(1);
      expect(qmdLine(busy.stderr)).toBe(
        `qmd: cannot listen on 127.0.0.1:${port}: the port is in use (EADDRINUSE) by another program, or by a qmd of another user; choose another port (--port N, or --port 0 for any free one)`,
      );
    } finally {
      stranger.close();
    }
  });

  it('started with nohup … & from a script, it outlives the script; qmd mcp stop ends it', async () => {
    const log = join(ws.dir, 'nohup.log');
    // The script starts the server in the background, goes on until the test lets it finish
    // (so the server knows it as its parent), then exits: a deploy script's shape.
    const script = spawnProcess(
      'sh',
      [
        '-c',
        'nohup "$0" "$@" > "$LOG" 2>&1 < /dev/null & echo $!; read _; exit 0',
        process.execPath,
        QMD_BIN,
        'mcp',
        '--http',
        '--port',
        '0',
        '--no-auth',
      ],
      { env: { ...env, LOG: log } },
    );
    const pid = Number(await script.waitFor(() => /^(\d+)\n/.exec(script.stdout())?.[1], 'the server’s pid'));
    try {
      const control = daemonControlPath(ws.index, env);
      const listening = await until(async () => {
        const status = await askStatus(control);
        return 'unreachable' in status ? undefined : status;
      }, 'the server to answer on its control socket');
      expect(listening.pid).toBe(pid);
      expect(readFileSync(`/proc/${pid}/stat`, 'utf8')).toContain(` ${script.child.pid} `);
      // Now the script ends.
      script.child.stdin?.end();
      expect((await script.closed).code).toBe(0);
      // The old parent watch polled every 100 ms and ended the server within a poll or two of
      // the shell's exit: ten polls' worth of the server's own uptime later, it still serves.
      const from = listening.uptimeMs;
      const later = await until(async () => {
        const status = await askStatus(control);
        if ('unreachable' in status) throw new Error(`the server stopped answering: ${readFileSync(log, 'utf8')}`);
        return status.uptimeMs >= from + 1000 ? status : undefined;
      }, 'a second of the server’s uptime');
      expect(later.pid).toBe(pid);
      expect(processExists(pid)).toBe(true);
      expect(readFileSync(log, 'utf8')).not.toContain('Shutting down');

      const stopped = await runQmd(['mcp', 'stop'], env);
      expect(stopped.code, stopped.stderr).toBe(0);
      expect(stopped.stdout).toBe(`Stopped the HTTP server (pid ${pid}): it ran its teardown and exited\n`);
      expect(gone(pid)).toBe(true);
      expect(readFileSync(log, 'utf8')).toContain('Shutting down (qmd mcp stop)...');
      expect(existsSync(`${ws.index}.mcp.pid`)).toBe(false);
    } finally {
      if (!gone(pid)) process.kill(pid, 'SIGKILL');
    }
  });
});

/** The one error line (a `--no-auth` warning comes before it). */
const qmdLine = (stderr: string) => stderr.split('\n').find((line) => line.startsWith('qmd:'));

/** Exited: no such process, or a zombie its new parent (init, here maybe not a reaping one) has not reaped. */
function gone(pid: number): boolean {
  if (!processExists(pid)) return true;
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8')
      .replace(/^.*\) /, '')
      .startsWith('Z');
  } catch {
    return true;
  }
}

/** `check()`'s first value other than undefined, asked every 20 ms, bounded at 30 s. */
async function until<T>(check: () => Promise<T | undefined>, what: string): Promise<T> {
  const deadline = performance.now() + 30_000;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (performance.now() > deadline) throw new Error(`gave up waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
