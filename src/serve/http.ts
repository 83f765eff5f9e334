import { mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname } from 'node:path';
import type { CliContext } from '../cli/context.js';
import { packageVersion } from '../cli/version.js';
import { QmdError } from '../errors.js';
import type { Lifecycle } from '../lifecycle/host.js';
import { watchHttpListener } from '../lifecycle/http.js';
import type { WatchStatus } from '../mcp/deps.js';
import { createHttpApp, MCP_PATH } from '../mcp/http/app.js';
import { type BearerAuth, createBearerAuth } from '../mcp/http/auth.js';
import { createOriginGuard } from '../mcp/http/guard.js';
import { createLegacyLeg } from '../mcp/http/legacy.js';
import { createModernLeg } from '../mcp/http/modern.js';
import { createRestHandler } from '../mcp/http/rest.js';
import { keepHeapFlat } from './heap.js';
import { bindFailure } from './http-claim.js';
import { fileTokenAuth, isUsableToken, loadOrCreateToken, readTokenFile, tokenPath } from './http-token.js';
import { serveMcp } from './serve-mcp.js';

export interface HttpServeOptions {
  host: string;
  /** 0 picks a free port; the one bound is printed (`Listening on http://HOST:PORT/mcp`). */
  port: number;
  /**
   * Who may use `/mcp`, `/query` and `/search`: a bearer token from a file (`{ file }`,
   * `--token-file`; `{}` is the default file beside the index, made on first start), from
   * `QMD_HTTP_TOKEN` (`{ variable }`), or anyone local (`'none'`, `--no-auth`). Never from the
   * command line: other users read it there (`ps`).
   */
  auth?: { file?: string } | { variable: string } | 'none';
  /**
   * The index's one HTTP server, the daemon or a foreground one: `onListening` claims the
   * pidfile and opens the control socket (`qmd status` asks it; `qmd mcp stop` asks it to call
   * `lifecycle.shutdown()`), `onDone` gives both up.
   */
  claim?: {
    onListening(url: string, port: number, lifecycle: Lifecycle, watch: () => WatchStatus): void | Promise<void>;
    onDone(): void;
  };
}

/**
 * `qmd mcp --http`: one store (and so one warm model) and one lifecycle gate for every client.
 * 2025 clients get a session each (one `McpServer`, reaped when idle: `src/mcp/http/legacy.ts`);
 * 2026-07-28 clients are sessionless, one `McpServer` per exchange (`src/mcp/http/modern.ts`).
 *
 * Stdin is not a client here (`stdin: null`): a backgrounded server has stdin at EOF from the
 * start. Nor is its parent (`parent: null`): over HTTP the clients are the sockets, and a
 * shell that starts `nohup qmd mcp --http &` and exits has not asked it to stop (over stdio the
 * parent is the client, and the watch stays). Signals stop it, `qmd mcp stop` asks
 * its control socket (`shutdown()`), and the listener dying sends `http.closed`. The same
 * machine drives the teardown:
 * - `closeTransport`: stop accepting (the listener closes; requests on kept-alive sockets get
 *   503), close every session's event stream and the sessions with nothing in flight;
 * - `draining`: each POST exchange is one gate unit until its response is closed, so the
 *   drain waits for replies to be delivered, not only for handlers to return; the handler
 *   inside runs through the gate's uncounted view, so one request counts once;
 * - `disposeStore`: answer what the drain left with an error, close the sessions and the
 *   modern leg (aborting them), cut the remaining connections, then `store.close()`.
 */
export async function serveHttp(ctx: CliContext, options: HttpServeOptions): Promise<Lifecycle> {
  const httpConfig = ctx.config.http;
  let url = '';
  let port = 0;
  // Set by `open`, which has run once serveMcp returns.
  let watch!: () => WatchStatus;
  const lifecycle = await serveMcp(ctx, {
    role: ctx.config.daemonChild ? 'daemon' : 'http',
    sources: {
      stdin: null,
      // Nothing is written to stdout in HTTP mode, so its EPIPE cannot mean a client left.
      stdout: null,
      // Not a client: see above.
      parent: null,
    },
    async open({ createServer: createMcpServer, lifecycle, log, store, failpoints, watch: watching }) {
      watch = watching;
      const auth = bearerAuth(options.auth ?? {}, ctx.indexPath, log);
      // stdout is not the protocol here, but a library's write to it must not crash us either.
      process.stdout.on('error', () => {});
      const handlers = lifecycle.gate.uncounted();
      // Sessions come and go; RSS must not grow with them (heap.ts).
      const collector = keepHeapFlat({ busy: () => app.inflight > 0, log });
      const legacy = createLegacyLeg({
        createServer: () => createMcpServer(handlers),
        idleMs: httpConfig.sessionIdleMs,
        maxSessions: httpConfig.maxSessions,
        log,
        onSessionClosed: () => collector.poke(),
      });
      const modern = createModernLeg({
        createServer: () => createMcpServer(handlers),
        maxBodyBytes: httpConfig.maxBodyBytes,
        log,
      });
      const app = createHttpApp({
        gate: lifecycle.gate,
        legacy,
        modern,
        guard: createOriginGuard(options.host),
        auth,
        rest: createRestHandler({ store, failpoints, log, watch: watching }),
        maxBodyBytes: httpConfig.maxBodyBytes,
        version: packageVersion(),
        log,
        // A reply delivered while stopping leaves an idle kept-alive socket: close it now.
        onExchangeEnded: () => listener.closeIdleConnections(),
      });
      const listener = createServer((req, res) => {
        // Quiet once the last exchange of a burst has ended: collect then (heap.ts).
        res.once('close', () => collector.poke());
        app.handle(req, res);
      });
      listener.on('checkContinue', app.checkContinue);
      try {
        port = await listen(listener, options.port, options.host);
      } catch (error) {
        await legacy.closeAll();
        throw await bindFailure(
          error as NodeJS.ErrnoException,
          { host: options.host, port: options.port, index: ctx.indexPath },
          ctx.env,
        );
      }
      const detachListener = watchHttpListener(listener, lifecycle.trigger, (error, fatal) =>
        log.warn(`http listener: ${error.message}${fatal ? '' : ' (still serving)'}`),
      );
      url = `http://${options.host.includes(':') ? `[${options.host}]` : options.host}:${port}${MCP_PATH}`;
      log.line(`Listening on ${url}`);
      return {
        async close() {
          collector.stop();
          detachListener();
          const stopped = app.stopAccepting();
          listener.close();
          await stopped;
          listener.closeIdleConnections();
        },
        async release() {
          // What the drain left (its deadline passed, or escalation cut it short) is cut now:
          // its clients get an error reply rather than silence.
          await app.abandonInflight('Connection closed: the server shut down before this request finished');
          await Promise.all([legacy.closeAll(), modern.close()]);
          listener.closeAllConnections();
        },
      };
    },
  });

  if (options.claim) {
    const claim = options.claim;
    void lifecycle.done.then(() => claim.onDone());
    try {
      await claim.onListening(url, port, lifecycle, watch);
    } catch (error) {
      ctx.log.line(`qmd: ${(error as Error).message}`);
      process.exitCode = 1;
      void lifecycle.shutdown('another server holds this index');
    }
  }
  return lifecycle;
}

/**
 * The bearer check for this server, and one stderr line saying where its token is (never the
 * token itself: the log may be read by others, e.g. a daemon's). A token in a file is read
 * again when the file changes (`fileTokenAuth`): rotating it needs no restart.
 */
function bearerAuth(
  auth: NonNullable<HttpServeOptions['auth']>,
  indexPath: string,
  log: CliContext['log'],
): BearerAuth | null {
  if (auth === 'none') {
    log.warn('--no-auth: any local user can reach this server and read every indexed note');
    return null;
  }
  if ('variable' in auth) {
    if (!isUsableToken(auth.variable)) {
      throw new QmdError('BAD_ARGUMENT', 'QMD_HTTP_TOKEN needs at least 16 visible characters and no spaces');
    }
    log.line('HTTP access: bearer token from QMD_HTTP_TOKEN (fixed until restart; a token file can be rotated)');
    return createBearerAuth(auth.variable);
  }
  if (auth.file !== undefined) {
    if (readTokenFile(auth.file) === undefined) {
      throw new QmdError(
        'BAD_ARGUMENT',
        `the token file ${auth.file} (--token-file) does not exist: write a token of 16 or more visible characters to it, mode 600, or leave --token-file out to use ${tokenPath(indexPath)}`,
      );
    }
    log.line(`HTTP access: bearer token in ${auth.file}`);
    return fileTokenAuth(auth.file, log);
  }
  const file = tokenPath(indexPath);
  // With no index yet (openServing), its folder may be missing too: the default one on a fresh
  // machine (a mistyped path was refused before this). The token file is the one file this
  // server then writes.
  try {
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  } catch {
    // loadOrCreateToken says why it cannot write there, in its own words.
  }
  const { created } = loadOrCreateToken(file);
  log.line(`HTTP access: bearer token in ${file}${created ? ' (new)' : ''}`);
  return fileTokenAuth(file, log);
}

/** Binds and resolves the port; a bind failure is the user's to fix (`bindFailure` says how). */
function listen(server: Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException): void => {
      server.off('listening', onListening);
      reject(error);
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
