import { createServer, type Server, type Socket } from 'node:net';
import type { CliContext } from '../cli/context.js';
import { createSharedLifecycle, type SharedLifecycle } from '../lifecycle/shared-host.js';
import type { Log } from '../log.js';
import { serveStdioConnection } from '../mcp/stdio/connection.js';
import { compareVersions, greetingLine, relayNoticeLine } from '../relay/greeting.js';
import { clearHealth, startFailure, writeStartFailure } from '../relay/health.js';
import { hostFacts, secureDir, sharedPaths } from '../relay/paths.js';
import { recordProcess } from '../relay/process-record.js';
import { listenPrivately } from './control/listen.js';
import { routeFirstLine } from './control/server.js';
import { sharedControl } from './control/shared.js';
import {
  claimPidfile,
  markListening,
  type PidRecord,
  readPidfile,
  releasePidfile,
  selfRecord,
} from './daemon/pidfile.js';
import { lifecycleOptions } from './lifecycle-options.js';
import { leaveDamaged, leaveOnFatalErrors, openServing, type Serving } from './serve-mcp.js';
import { sharedPlace } from './shared-place.js';

/** How often the server checks that its socket path is still its own (`shared-place.ts`). */
const PLACE_CHECK_MS = 10_000;

/** The shared server's record beside its socket: who claimed the index. `qmd status` asks the socket instead. */
export interface SharedRecord extends PidRecord {
  socket: string;
}

/**
 * `qmd mcp --shared-server`, started detached by the first relay of an index: one store (one
 * warm model, loaded at most once) for every relay that connects, each connection a session
 * with its own `McpServer` and gate, hosted as a child of the server's machine
 * (`src/lifecycle/shared-host.ts`). It leaves on SIGTERM/SIGINT/SIGHUP, when `qmd mcp stop
 * --shared` asks on its socket (a control request, `src/serve/control/`), or after
 * `QMD_SHARED_IDLE_MS` with no session: stop accepting, let every session run its own
 * teardown, then dispose the store, once.
 *
 * One per index: the record beside the socket is claimed first (written whole or not at all;
 * its holder alive if its socket answers, `holderAlive`), so a second server started at the same moment leaves at once;
 * the claim holder replaces a socket file a killed server left behind.
 */
export async function serveSharedServer(ctx: CliContext): Promise<SharedLifecycle | null> {
  const { log } = ctx;
  const facts = hostFacts(ctx.env);
  const paths = sharedPaths(ctx.indexPath, facts);
  const refused = secureDir(paths.dir);
  if (refused !== null) throw new Error(`refusing to serve: ${refused}`);
  const self = selfRecord();
  const record: SharedRecord = {
    ...self,
    host: '',
    port: 0,
    url: `unix:${paths.socket}`,
    index: ctx.indexPath,
    version: ctx.config.shared.version,
    startedAt: new Date().toISOString(),
    socket: paths.socket,
    control: paths.socket,
  };
  const claim = await claimPidfile(paths.record, record);
  if (!claim.claimed) {
    log.line(`another shared server (pid ${claim.holder.pid}) serves ${ctx.indexPath}; leaving`);
    return null;
  }
  const { failpoints, shared } = ctx.config;
  let modelLoaded = false;
  const storeLog = watchModelLoads(log, () => {
    modelLoaded = true;
  });
  let serving: Serving;
  try {
    serving = openServing(ctx, { storeLog });
  } catch (error) {
    // Never started: no record may say otherwise, and the relays waiting on us learn why.
    releasePidfile(paths.record, self.instance);
    writeStartFailure(paths, startFailure(error));
    throw error;
  }
  const { store, createServer: createMcpServer, watching } = serving;
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
  // One watcher for every client (relays never watch), owned by the server's teardown (§2.2).
  lifecycle.ownWatcher(watching);
  const version = shared.version;
  const sockets = new Set<Socket>();

  /**
   * Stop taking connections, give the socket path and the record to the server that takes this
   * one's place, answer `qmd status` and `qmd mcp stop` on its own socket
   * (`shared-place.ts`), and leave once the last session here has ended. The sessions live now
   * are served as ever: their clients notice nothing.
   */
  let retiredWhy: string | undefined;
  const stepAside = (why: string, line: string): void => {
    if (lifecycle.retired) return;
    retiredWhy = why;
    log.line(`${line}: no new sessions; leaving when the last of ${lifecycle.sessions()} ends`);
    place.retire(why);
    lifecycle.retire(why);
  };
  /** A relay of a newer qmd asked (`retire`). */
  const retire = (newer: string): { refused: string } | { sessions: number } => {
    const order = compareVersions(newer, version);
    if (order === undefined || order <= 0)
      return { refused: `this server is qmd ${version}, and ${newer} is not newer: it stays` };
    stepAside(`replaced by qmd ${newer}`, `qmd ${newer} replaces this server (qmd ${version})`);
    return { sessions: lifecycle.sessions() };
  };
  /** `qmd mcp stop --shared [--all]`; with `all`, each relay is told to end with the server. */
  const stop = ({ all }: { all: boolean }): void => {
    if (all) {
      const notice = relayNoticeLine('the shared server was stopped with its clients');
      for (const socket of sockets) if (!socket.destroyed) socket.write(notice);
    }
    void lifecycle.shutdown(all ? 'qmd mcp stop --all' : 'qmd mcp stop');
  };
  const control = sharedControl({
    index: ctx.indexPath,
    version,
    startedAt: record.startedAt,
    model: () => {
      try {
        return store.embeddingModel()?.spec ?? null;
      } catch {
        return null; // closing: the index is no longer read
      }
    },
    modelLoaded: () => modelLoaded,
    retiring: () => retiredWhy,
    watch: () => watching.report(),
    lifecycle,
    stop,
    retire,
  });
  const place = sharedPlace({ paths, facts, record });
  const acceptSession = (socket: Socket): void => {
    // Retiring: its own socket still answers control requests, but takes no new session.
    if (place.retiring) {
      socket.destroy();
      return;
    }
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    const onEnd = (): void => opened?.trigger({ type: 'connection.ended' });
    const onClose = (): void => opened?.trigger({ type: 'connection.closed' });
    const opened = lifecycle.openSession({
      closeServer: () => connection.close(),
      releaseSession: async () => {
        await connection.release();
        await endSocket(socket);
      },
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
    // Each request read is one unit of the session's drain until its reply is written.
    const connection = serveStdioConnection({
      createServer: () => createMcpServer(opened.gate.uncounted()),
      stdin: socket,
      stdout: socket,
      log,
      gate: opened.gate,
      name: opened.id,
      onClosed: (cause) =>
        opened.trigger(cause === 'stdout' ? { type: 'connection.closed' } : { type: 'transport.closed' }),
    });
    log.line(`${opened.id} opened; ${lifecycle.sessions()} session(s)`);
  };
  // A connection whose first line is a control request (`qmd status`, `qmd mcp stop --shared`)
  // is answered there and is no session; any other is an MCP session, from its first byte.
  // Half-open: a relay that half-closes (its client's EOF) still reads the replies it is owed;
  // Node's default would end our side at its 'end', and the session would abort its handlers.
  const route = routeFirstLine(control, acceptSession);
  const listener = createServer({ allowHalfOpen: true }, (socket) => {
    // Before anything is read: a relay trusts a connection only once it is greeted (greeting.ts),
    // and sends its first line after that; a control client skips the greeting.
    socket.write(
      greetingLine({ pid: process.pid, index: ctx.indexPath, version, model: ctx.config.embed.model ?? null }),
    );
    clearHealth(paths, 'hung');
    route(socket);
  });

  // Its own socket first, created 0600 (umask), never readable by anyone else even for an
  // instant; then the index's path, a link to it (the claim is ours: a file there is a killed
  // server's).
  try {
    await listenPrivately(listener, place.listenOn);
    place.hold();
  } catch (error) {
    listener.close();
    await watching.close();
    await store.close();
    releasePidfile(paths.record, self.instance);
    throw error;
  }
  clearHealth(paths, 'failed');
  clearHealth(paths, 'hung');
  markListening(paths.record, record);
  place.watch(
    shared.placeCheckMs ?? PLACE_CHECK_MS,
    () => stepAside('replaced by another shared server', `another shared server took ${paths.socket}`),
    () => {
      // Removed under us (a cleaner of /tmp): link it again while the claim is still ours; with
      // the claim gone too, another server may be claiming now: leave the place to it.
      const claim = readPidfile(paths.record);
      if (claim === null || claim === 'corrupt' || claim.instance !== self.instance || !place.relink()) {
        stepAside('its place was taken or removed', `${paths.socket} is gone, and the place is no longer its own`);
        return;
      }
      log.line(`${paths.socket} was removed; linked there again`);
    },
  );
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
  const recorded = recordProcess(facts, { role: 'shared', index: ctx.indexPath, ppid: process.ppid, version });
  watching.start();
  void lifecycle.done.then(() => {
    // What is still its own: a retired server gave the path and the record away.
    const retired = lifecycle.retired;
    place.leave();
    recorded.remove();
    if (!retired) clearHealth(paths, 'hung');
  });
  // Damage found while serving: every relay fails its client with the line and exits 1 (a
  // notice with the code), and a relay that comes meanwhile reads it beside the socket.
  serving.onDamaged(
    leaveDamaged(lifecycle, log, (error) => {
      writeStartFailure(paths, startFailure(error));
      const notice = relayNoticeLine(error.message, error.code);
      for (const socket of sockets) if (!socket.destroyed) socket.write(notice);
    }),
  );
  leaveOnFatalErrors(lifecycle, log);
  return lifecycle;
}

function closeListener(server: Server): Promise<void> {
  return new Promise((resolve) => {
    // Resolves once no new connection can arrive; open ones are the sessions' to end.
    server.close(() => {});
    server.unref();
    resolve();
  });
}

/**
 * Half-closes and waits for the socket to close. Replies the drain left unwritten (its deadline
 * passed, or it was cut short) are dropped at once: a relay that stopped reading would otherwise
 * hold this step until its bound and fail it (`releaseSession failed: timed out after 2000 ms`).
 */
function endSocket(socket: Socket): Promise<void> {
  if (socket.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    socket.once('close', () => resolve());
    if (socket.writableLength > 0) {
      socket.destroy();
      return;
    }
    socket.end();
    // The relay may not close its side (it is draining): do not wait for it.
    socket.destroySoon();
  });
}

/** The store's log, noting each "embedding model loaded" line for `qmd status`. */
function watchModelLoads(log: Log, onLoad: () => void): Log {
  return {
    line: (text) => {
      if (text.startsWith('embedding model loaded')) onLoad();
      log.line(text);
    },
    warn: (text) => log.warn(text),
  };
}
