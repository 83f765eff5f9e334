import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { get } from 'node:http';
import { dirname } from 'node:path';
import { DAEMON_CHILD_ENV } from '../../cli/config.js';
import type { CliContext } from '../../cli/context.js';
import { QmdError } from '../../errors.js';
import { childExecArgv } from '../../node-flags.js';
import { openPrivateFile } from '../../private-file.js';
import { daemonControlPath, hostFacts } from '../../relay/paths.js';
import { askStatus } from '../control/client.js';
import type { ServerStatus } from '../control/protocol.js';
import { daemonLogPath, pidfilePath, readPidfile, removePidfile } from './pidfile.js';

/** Start-up opens the index and binds; it needs no model. Generous for a loaded machine. */
const READY_WITHIN_MS = 30_000;
const POLL_MS = 50;

/**
 * `qmd mcp --http --daemon`: starts the server detached (its own session, so the terminal's
 * SIGHUP and Ctrl-C do not reach it), stdin from /dev/null, stdout and stderr appended to
 * `<index>.mcp.log`; waits until the child's control socket answers with the child's pid and
 * `/health` answers; prints the URL and the pid; returns. This process holds nothing native and
 * leaves by draining its loop: the child is unref'd and its stdio are files.
 */
export async function startDaemon(ctx: CliContext): Promise<void> {
  const pidfile = pidfilePath(ctx.indexPath);
  const control = daemonControlPath(ctx.indexPath, hostFacts(ctx.env));
  const running = await askStatus(control);
  if (!('unreachable' in running))
    throw new QmdError(
      'INDEX_LOCKED',
      `${running.kind === 'http' ? 'qmd mcp --http' : 'a daemon'} already serves ${running.url} (pid ${running.pid}); stop it with: qmd mcp stop`,
    );
  const existing = readPidfile(pidfile);
  if (existing !== null) {
    // A note, not an error: no `qmd:` prefix, which says something failed; nothing did.
    ctx.log.line(`Removed a stale pidfile ${pidfile} (its server is gone)`);
    removePidfile(pidfile);
  }

  const logPath = daemonLogPath(ctx.indexPath);
  mkdirSync(dirname(logPath), { recursive: true, mode: 0o700 });
  const logStart = safeSize(logPath);
  // Never through a link planted beside the index; a log left 0644 becomes 0600.
  const fd = openPrivateFile(logPath, 'append');
  const child = spawn(process.execPath, [...childExecArgv(process.execArgv), ...process.argv.slice(1)], {
    detached: true,
    stdio: ['ignore', fd, fd],
    env: { ...ctx.env, [DAEMON_CHILD_ENV]: '1' },
  });
  closeSync(fd);
  child.unref();
  const exited = new Promise<string>((resolve) => {
    child.once('exit', (code, signal) => resolve(signal ? `was killed by ${signal}` : `exited with code ${code}`));
    child.once('error', (error) => resolve(`could not start: ${error.message}`));
  });

  // The poll stops when the child exits: left running, it held this process to its deadline
  // (a daemon refused at start took 30 s to say so).
  const polling = new AbortController();
  void exited.then(() => polling.abort());
  const record = await Promise.race([waitForControl(control, child.pid ?? -1, polling.signal), exited]);
  if (typeof record === 'string' || record === null) {
    const why = typeof record === 'string' ? record : `did not start within ${READY_WITHIN_MS / 1000} s`;
    const said = tail(logPath, logStart);
    // Its own one line when it gave one (a damaged index, say): the words every command uses.
    const reason = said.split('\n').find((line) => line.startsWith('qmd: '));
    if (reason !== undefined)
      throw new QmdError('BAD_ARGUMENT', `the daemon ${why}: ${reason.slice('qmd: '.length)} (its log: ${logPath})`);
    throw new QmdError('BAD_ARGUMENT', `the daemon ${why}; its log (${logPath}) says:\n${said}`);
  }
  const health = await getStatus(new URL('/health', record.url ?? ''));
  if (health !== 200)
    throw new QmdError('BAD_ARGUMENT', `the daemon (pid ${record.pid}) answers /health with ${health}`);
  ctx.out(`Serving ${record.url} (pid ${record.pid})`);
  ctx.out(`Log: ${logPath}; stop it with: qmd mcp stop`);
}

/** Polls the control socket until the child answers on it (it listens once its HTTP port is bound). */
async function waitForControl(control: string, pid: number, signal: AbortSignal): Promise<ServerStatus | null> {
  const deadline = performance.now() + READY_WITHIN_MS;
  while (performance.now() < deadline && !signal.aborted) {
    const status = await askStatus(control);
    if (!('unreachable' in status) && status.pid === pid) return status;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
  return null;
}

/** A plain GET on a fresh connection (no keep-alive socket left to hold this process open). */
function getStatus(url: URL): Promise<number | string> {
  return new Promise((resolve) => {
    const req = get(url, { agent: false, timeout: 10_000 }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 'no status');
    });
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', (error) => resolve(error.message));
  });
}

function safeSize(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

function tail(path: string, from: number): string {
  try {
    const text = readFileSync(path).subarray(from).toString('utf8').trim();
    return text.split('\n').slice(-20).join('\n') || '(nothing)';
  } catch {
    return '(no log)';
  }
}
