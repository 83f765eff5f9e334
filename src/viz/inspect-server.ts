import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { type WebSocket, WebSocketServer } from 'ws';
import type { Log } from '../log.js';
import { bridgePage, STATELY_INSPECTOR_URL, VIEWER_PATH } from './inspect-bridge.js';
import { describeMessage, type InspectionMessage, SessionNames } from './inspect-summary.js';

export interface InspectorServerOptions {
  /** Default 8080, as `@statelyai/inspect/server`; 0 picks a free port. */
  port?: number;
  /** Default 127.0.0.1: the relay shows what qmd is doing, so it stays on this machine unless asked. */
  host?: string;
  /** Where each qmd process's events are printed, one line each. */
  log: Log;
  /** The inspector UI the bridge page embeds (default Stately's hosted one). */
  inspectorUrl?: string;
  /** Messages kept for a browser that connects late (default 1000, plus every actor registration). */
  replay?: number;
}

export interface InspectorServer {
  /** What qmd processes connect to: `QMD_INSPECT=<url>`. */
  readonly url: string;
  /** Open this in a browser to see the machines in Stately's inspector. */
  readonly viewerUrl: string;
  /** Disconnects everyone and stops listening. */
  close(): Promise<void>;
}

/**
 * `qmd lifecycle inspect`: a local relay between qmd processes and Stately's inspector.
 *
 * - qmd processes run with `QMD_INSPECT=ws://HOST:PORT` connect to any path but `/viewer` and
 *   send Stately inspection messages (see `inspect-observer.ts`); each one is printed to `log`
 *   as a line tagged with the sender's pid and relayed to every open viewer.
 * - `GET /` serves a bridge page (`inspect-bridge.ts`) that embeds Stately's inspector and feeds
 *   it from the `/viewer` socket; a viewer that connects late first gets every actor
 *   registration (they carry the machine definitions) and the last `replay` messages.
 * - Requests whose Host is not this server's loopback name, and browser connections from another
 *   origin, are refused (DNS rebinding), unless it was bound to a non-loopback host on purpose.
 */
export async function serveInspector(options: InspectorServerOptions): Promise<InspectorServer> {
  const host = options.host ?? '127.0.0.1';
  const log = options.log;
  const replayLimit = options.replay ?? 1000;
  const page = bridgePage(options.inspectorUrl ?? STATELY_INSPECTOR_URL);
  const registrations = new Map<string, string>();
  const recent: string[] = [];
  const viewers = new Set<WebSocket>();
  let port = 0;
  let producers = 0;

  const http = createServer((req, res) => {
    if (!hostAllowed(req.headers.host, host, port)) {
      res.writeHead(403, { 'content-type': 'text/plain' }).end('forbidden\n');
      return;
    }
    const path = new URL(req.url ?? '/', 'http://relay').pathname;
    if (req.method === 'GET' && path === '/') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }).end(page);
      return;
    }
    res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
  });
  const wss = new WebSocketServer({ noServer: true });

  http.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    if (!hostAllowed(req.headers.host, host, port) || !originAllowed(req.headers.origin, req.headers.host)) {
      socket.end('HTTP/1.1 403 Forbidden\r\nConnection: close\r\n\r\n');
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      if (new URL(req.url ?? '/', 'http://relay').pathname === VIEWER_PATH) addViewer(ws);
      else addProducer(ws, req);
    });
  });

  const addViewer = (ws: WebSocket): void => {
    viewers.add(ws);
    ws.on('error', () => {});
    ws.on('close', () => viewers.delete(ws));
    for (const data of [...registrations.values(), ...recent]) ws.send(data);
    log.line('inspector: a browser is watching');
  };

  const addProducer = (ws: WebSocket, req: IncomingMessage): void => {
    const n = ++producers;
    const pid = req.headers['x-qmd-pid'];
    const tag = typeof pid === 'string' ? `[pid ${pid}]` : `[client ${n}]`;
    const names = new SessionNames();
    log.line(`${tag} connected`);
    ws.on('error', () => {});
    ws.on('close', () => log.line(`${tag} disconnected`));
    ws.on('message', (raw, isBinary) => {
      if (isBinary) return;
      const data = raw.toString();
      let message: InspectionMessage;
      try {
        message = JSON.parse(data) as InspectionMessage;
      } catch {
        log.line(`${tag} sent something that is not JSON; ignored`);
        return;
      }
      remember(message, data);
      for (const viewer of viewers) if (viewer.readyState === viewer.OPEN) viewer.send(data);
      const line = describeMessage(message, names);
      if (line !== null) log.line(`${tag} ${line}`);
    });
  };

  const remember = (message: InspectionMessage, data: string): void => {
    if (message.type === '@xstate.actor' && typeof message.sessionId === 'string') {
      registrations.set(message.sessionId, data);
      // Bounded too: a relay left running for days sees many sessions come and go.
      if (registrations.size > replayLimit) registrations.delete(registrations.keys().next().value as string);
      return;
    }
    recent.push(data);
    if (recent.length > replayLimit) recent.shift();
  };

  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(options.port ?? 8080, host, () => {
      http.off('error', reject);
      resolve();
    });
  });
  port = (http.address() as AddressInfo).port;
  const authority = `${host.includes(':') ? `[${host}]` : host}:${port}`;

  return {
    url: `ws://${authority}`,
    viewerUrl: `http://${authority}/`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const client of wss.clients) client.terminate();
        wss.close();
        http.close(() => resolve());
        http.closeAllConnections();
      }),
  };
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1', '[::1]']);

/** A Host header naming this server by a loopback name (or anything, if bound beyond loopback on purpose). */
function hostAllowed(header: string | undefined, boundHost: string, port: number): boolean {
  if (!LOOPBACK.has(boundHost)) return true;
  if (header === undefined) return false;
  const match = header.match(/^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/);
  if (!match) return false;
  return LOOPBACK.has((match[1] ?? '').toLowerCase()) && Number(match[2] ?? 80) === port;
}

/** qmd processes send no Origin; a browser must come from the bridge page this server served. */
function originAllowed(origin: string | undefined, hostHeader: string | undefined): boolean {
  if (origin === undefined) return true;
  return origin === `http://${hostHeader}` || origin === `https://${hostHeader}`;
}
