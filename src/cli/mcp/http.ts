import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { QmdError } from '../../errors.js';
import { createLifecycle, type Lifecycle } from '../../lifecycle/host.js';
import { watchHttpListener } from '../../lifecycle/http.js';
import { createHttpApp, MCP_PATH } from '../../mcp/http/app.js';
import { createOriginGuard } from '../../mcp/http/guard.js';
import { createSessionRegistry } from '../../mcp/http/sessions.js';
import { createMcpServer } from '../../mcp/server.js';
import { openStore } from '../../store/index.js';
import type { CliContext } from '../context.js';
import { embedStoreOptions } from '../embed-model.js';
import { STARTUP_PPID } from '../startup.js';
import { packageVersion } from '../version.js';
import { envLifecycleOptions, readMcpEnv } from './config.js';
import { readHttpEnv } from './http-config.js';
import { claimStdout } from './stdout-guard.js';

export interface HttpServeOptions {
  host: string;
  /** 0 picks a free port; the one bound is printed (`Listening on http://HOST:PORT/mcp`). */
  port: number;
  /** Set when this process is the detached daemon: no parent watch; `onListening` writes the pidfile. */
  daemon?: { onListening(url: string, port: number): void | Promise<void>; onDone(): void };
}

/**
 * `qmd mcp --http`: the composition root of the shared server. One store (and so one warm
 * model) and one lifecycle gate for every client; one `McpServer` per MCP session, reaped
 * when idle (why sessions and not stateless: the top of `src/mcp/http/sessions.ts`).
 *
 * In HTTP mode stdin is not a client (`stdin: null`): a backgrounded server has stdin at EOF
 * from the start. Signals stop it, `qmd mcp stop` sends SIGTERM, and the listener dying sends
 * `http.stop`. The same machine drives the teardown:
 * - `closeTransport`: stop accepting (the listener closes; requests on kept-alive sockets get
 *   503), close every session's event stream and the sessions with nothing in flight;
 * - `draining`: POST exchanges are gate units until their response is closed, so the drain
 *   waits for replies to be delivered, not only for handlers to return;
 * - `disposeStore`: close what the drain left (aborting it), cut the remaining connections,
 *   then `store.close()`.
 */
export async function serveHttp(ctx: CliContext, options: HttpServeOptions): Promise<Lifecycle> {
  const { log } = ctx;
  // stdout is not the protocol here, but nothing a library prints belongs on it either.
  claimStdout(log);
  process.stdout.on('error', () => {});
  const config = readMcpEnv(ctx.env);
  const httpConfig = readHttpEnv(ctx.env);
  const { failpoints } = config;
  const version = packageVersion();
  // One store for every session: the model, loaded lazily on the first vector query, stays warm.
  const store = openStore(ctx.indexPath, { readonly: true, log, failpoints, ...embedStoreOptions(ctx) });

  const fromEnv = await envLifecycleOptions(config, log);

  let detachListener = (): void => {};
  const lifecycle = createLifecycle({
    stdin: null,
    // Nothing is written to stdout in HTTP mode, so its EPIPE cannot mean a client left.
    stdout: null,
    // A daemon's parent leaves on purpose, right after start-up.
    parent: options.daemon ? null : { ppid: () => process.ppid, original: STARTUP_PPID },
    closeTransport: async (signal) => {
      await failpoints.hit('teardown.closeTransport', signal);
      detachListener();
      const stopped = app.stopAccepting();
      listener.close();
      await stopped;
      listener.closeIdleConnections();
    },
    disposeStore: async (signal) => {
      await failpoints.hit('teardown.disposeStore', signal);
      // What the drain left (its deadline passed, or escalation cut it short) is cut now:
      // its clients get an error reply rather than silence.
      await app.abandonInflight('Connection closed: the server shut down before this request finished');
      await sessions.closeAll();
      listener.closeAllConnections();
      await store.close();
    },
    log,
    ...fromEnv,
  });

  const sessions = createSessionRegistry({
    createServer: () => createMcpServer({ store, gate: lifecycle.gate, failpoints, log, version }),
    idleMs: httpConfig.sessionIdleMs,
    maxSessions: httpConfig.maxSessions,
    log,
  });
  const app = createHttpApp({
    gate: lifecycle.gate,
    sessions,
    guard: createOriginGuard(options.host),
    maxBodyBytes: httpConfig.maxBodyBytes,
    version,
    log,
    // A reply delivered while stopping leaves an idle kept-alive socket: close it now.
    onExchangeEnded: () => listener.closeIdleConnections(),
  });
  const listener = createServer(app.handle);
  listener.on('checkContinue', app.checkContinue);

  let port: number;
  try {
    port = await listen(listener, options.port, options.host);
  } catch (error) {
    await sessions.closeAll();
    await store.close();
    throw error;
  }
  // Started in the same tick as 'listening': no request can be dispatched before it.
  detachListener = watchHttpListener(listener, lifecycle.trigger, (error, fatal) =>
    log.warn(`http listener: ${error.message}${fatal ? '' : ' (still serving)'}`),
  );
  lifecycle.start();
  const url = `http://${options.host.includes(':') ? `[${options.host}]` : options.host}:${port}${MCP_PATH}`;
  log.line(`Listening on ${url}`);

  const fatal = (kind: string) => (error: unknown) => {
    log.warn(`${kind}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    process.exitCode = 1;
    void lifecycle.shutdown(kind);
  };
  process.on('uncaughtException', fatal('uncaught exception'));
  process.on('unhandledRejection', fatal('unhandled rejection'));

  if (options.daemon) {
    const daemon = options.daemon;
    void lifecycle.done.then(() => daemon.onDone());
    try {
      await daemon.onListening(url, port);
    } catch (error) {
      log.warn(`daemon: ${(error as Error).message}`);
      process.exitCode = 1;
      void lifecycle.shutdown('daemon could not start');
    }
  }
  if (failpoints.has('server.leak')) void failpoints.hit('server.leak');
  return lifecycle;
}

/** Binds and resolves the port; a bind failure is the user's to fix (another port or host). */
function listen(server: Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException): void => {
      server.off('listening', onListening);
      reject(new QmdError('BAD_ARGUMENT', `cannot listen on ${host}:${port}: ${error.code ?? error.message}`));
    };
    const onListening = (): void => {
      server.off('error', onError);
      resolve((server.address() as AddressInfo).port);
    };
    server.once('error', onError);
    server.once('listening', onListening);
    server.listen(port, host);
  });
}
