import { existsSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { createSharedLifecycle, type SharedLifecycle } from '../../lifecycle/shared-host.js';
import type { Log } from '../../log.js';
import { createMcpServer } from '../../mcp/server.js';
import { serveStdioConnection } from '../../mcp/stdio/connection.js';
import { secureDir, sharedPaths } from '../../relay/paths.js';
import { openStore } from '../../store/index.js';
import type { CliContext } from '../context.js';
import { claimPidfile, type PidRecord, releasePidfile } from '../daemon/pidfile.js';
import { readIdentity } from '../daemon/proc.js';
import { embedStoreOptions } from '../embed-model.js';
import { packageVersion } from '../version.js';
import { lifecycleOptions } from './lifecycle-options.js';
import { leaveOnFatalErrors } from './serve.js';

/** The shared server's record beside its socket: who it is, and what `qmd status` shows. */
export interface SharedRecord extends PidRecord {
  socket: string;
  sessions: number;
  served: number;
  modelLoaded: boolean;
}

/**
 * `qmd mcp --shared-server`, started detached by the first relay of an index: one store (one
 * warm model, loaded at most once) for every relay that connects, each connection a session
 * with its own `McpServer` and gate, hosted as a child of the server's machine
 * (`src/lifecycle/shared-host.ts`). It leaves on SIGTERM/SIGINT/SIGHUP (`qmd mcp stop --shared`
 * sends SIGTERM) or after `QMD_SHARED_IDLE_MS` with no session: stop accepting, let every
 * session run its own teardown, then dispose the store, once.
 *
 * One per index: the record beside the socket is claimed first (written whole or not at all,
 * its holder's identity checked), so a second server started at the same moment leaves at once;
 * the claim holder replaces a socket file a killed server left behind.
 */
export async function serveSharedServer(ctx: CliContext): Promise<SharedLifecycle | null> {
  const { log } = ctx;
  const paths = sharedPaths(ctx.indexPath, ctx.env);
  const refused = secureDir(paths.dir);
  if (refused !== null) throw new Error(`refusing to serve: ${refused}`);
  const self = readIdentity(process.pid);
  if (self === null) throw new Error('cannot read this process in /proc; refusing to write an unverifiable record');
  const record: SharedRecord = {
    ...self,
    host: '',
    port: 0,
    url: `unix:${paths.socket}`,
    index: ctx.indexPath,
    version: packageVersion(),
    startedAt: new Date().toISOString(),
    socket: paths.socket,
    sessions: 0,
    served: 0,
    modelLoaded: false,
  };
  const claim = claimPidfile(paths.record, record);
  if (!claim.claimed) {
    log.line(`another shared server (pid ${claim.holder.pid}) serves ${ctx.indexPath}; leaving`);
    return null;
  }
  const update = (change: Partial<SharedRecord>): void => {
    Object.assign(record, change);
    try {
      writeFileSync(`${paths.record}.tmp`, `${JSON.stringify(record, null, 2)}\n`, { mode: 0o600 });
      renameSync(`${paths.record}.tmp`, paths.record);
    } catch (error) {
      log.warn(`cannot update ${paths.record}: ${(error as Error).message}`);
    }
  };

  const { failpoints, shared } = ctx.config;
  const storeLog = watchModelLoads(log, () => update({ modelLoaded: true }));
  // quick_check, as `qmd mcp` does (serve.ts): a damaged index refuses to start.
  const store = openStore(ctx.indexPath, {
    readonly: true,
    quickCheck: true,
    log: storeLog,
    failpoints,
    ...embedStoreOptions(ctx),
  });
  const fromEnv = await lifecycleOptions(ctx.config.lifecycle, log);
  const lifecycle = createSharedLifecycle({
    log,
    ...(shared.idleMs !== undefined && { idleTimeoutMs: shared.idleMs }),
    ...(fromEnv.drainTimeoutMs !== undefined && { sessionDrainTimeoutMs: fromEnv.drainTimeoutMs }),
    ...(fromEnv.stepTimeoutMs !== undefined && {
      stepTimeoutMs: fromEnv.stepTimeoutMs,
      sessionStepTimeoutMs: fromEnv.stepTimeoutMs,
    }),
    ...(fromEnv.watchdogMs !== undefined && { watchdogMs: fromEnv.watchdogMs }),
    ...(shared.traceFile !== undefined && { traceFile: shared.traceFile }),
    inspect: fromEnv.inspect ?? [],
  });
  const version = packageVersion();
  const sockets = new Set<Socket>();

  const listener = createServer((socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    const onEnd = (): void => opened?.trigger({ type: 'connection.ended' });
    const onClose = (): void => opened?.trigger({ type: 'connection.closed' });
    const opened = lifecycle.openSession({
      closeServer: () => connection.close(),
      releaseSession: () => endSocket(socket),
      detach: () => {
        socket.off('end', onEnd);
      },
    });
    if (opened === null) {
      socket.destroy();
      return;
    }
    socket.on('end', onEnd);
    socket.on('close', onClose);
    const connection = serveStdioConnection({
      createServer: () => createMcpServer({ store, gate: opened.gate, failpoints, log, version }),
      stdin: socket,
      stdout: socket,
      log,
      onClosed: (cause) =>
        opened.trigger(
          cause === 'stdin'
            ? { type: 'connection.ended' }
            : cause === 'stdout'
              ? { type: 'connection.closed' }
              : { type: 'transport.closed' },
        ),
    });
    log.line(`${opened.id} opened; ${lifecycle.sessions()} session(s)`);
    update({ sessions: lifecycle.sessions(), served: record.served + 1 });
    socket.once('close', () => update({ sessions: lifecycle.sessions() }));
  });

  // The claim is ours: a socket file here is a killed server's. Created 0600 (umask), never
  // readable by anyone else even for an instant.
  if (existsSync(paths.socket)) unlinkSync(paths.socket);
  await listen(listener, paths.socket);
  lifecycle.start({
    closeListener: async (signal) => {
      await failpoints.hit('teardown.closeTransport', signal);
      await closeListener(listener);
    },
    disposeStore: async (signal) => {
      await failpoints.hit('teardown.disposeStore', signal);
      for (const socket of sockets) socket.destroy();
      await store.close();
    },
  });
  log.line(`Serving ${ctx.indexPath} on ${paths.socket} (pid ${process.pid})`);
  void lifecycle.done.then(() => {
    try {
      unlinkSync(paths.socket);
    } catch {
      // Already gone.
    }
    releasePidfile(paths.record, self.pid, self.startTicks);
  });
  leaveOnFatalErrors(lifecycle, log);
  return lifecycle;
}

function listen(server: Server, path: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const previous = process.umask(0o177);
    server.once('error', reject);
    server.listen(path, () => {
      server.off('error', reject);
      resolve();
    });
    process.umask(previous);
  });
}

function closeListener(server: Server): Promise<void> {
  return new Promise((resolve) => {
    // Resolves once no new connection can arrive; open ones are the sessions' to end.
    server.close(() => {});
    server.unref();
    resolve();
  });
}

/** Half-closes and waits for the socket to close (bounded by the session's step timeout). */
function endSocket(socket: Socket): Promise<void> {
  if (socket.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    socket.once('close', () => resolve());
    socket.end();
    // The relay may not close its side (it is draining): do not wait for it.
    socket.destroySoon();
  });
}

/** The store's log, noting each "embedding model loaded" line for the record `qmd status` reads. */
function watchModelLoads(log: Log, onLoad: () => void): Log {
  return {
    line: (text) => {
      if (text.startsWith('embedding model loaded')) onLoad();
      log.line(text);
    },
    warn: (text) => log.warn(text),
  };
}
