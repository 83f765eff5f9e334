import type { IncomingMessage, ServerResponse } from 'node:http';
import { toWebRequest } from '@modelcontextprotocol/node';
import { isInitializeRequest, isLegacyRequest } from '@modelcontextprotocol/server';
import { JSONRPC_FORBIDDEN, JSONRPC_PARSE_ERROR, JSONRPC_SESSION_NOT_FOUND } from '../../jsonrpc.js';
import type { InflightGate } from '../../lifecycle/gate.js';
import type { Log } from '../../log.js';
import { BEARER_CHALLENGE, type BearerAuth } from './auth.js';
import { readJsonBody } from './body.js';
import { createExchanges } from './exchanges.js';
import type { OriginGuard } from './guard.js';
import type { LegacyLeg, LegacySession } from './legacy.js';
import type { ModernLeg } from './modern.js';
import { replyError, replyJson } from './reply.js';
import { REST_PATHS, type RestHandler } from './rest.js';

export interface HttpAppOptions {
  /** The lifecycle's gate: every POST exchange is one in-flight unit until its reply is sent. */
  gate: InflightGate;
  /** 2025-era clients: one session each. */
  legacy: LegacyLeg;
  /** 2026-07-28 clients: sessionless, one exchange per request. */
  modern: ModernLeg;
  guard: OriginGuard;
  /** Bearer-token access to `/mcp` and the REST paths; `null` serves any local client (`--no-auth`). */
  auth: BearerAuth | null;
  /** `POST /query` and `POST /search`; without it those paths are 404. */
  rest?: RestHandler;
  maxBodyBytes: number;
  version: string;
  log: Log;
  /** Called each time an exchange ends while stopping (the server closes idle keep-alive sockets). */
  onExchangeEnded?: () => void;
}

export interface HttpApp {
  /** The `request` listener of the `node:http` server. Never rejects. */
  handle(req: IncomingMessage, res: ServerResponse): void;
  /** The `checkContinue` listener: a request that sent `Expect: 100-continue`. */
  checkContinue(req: IncomingMessage, res: ServerResponse): void;
  /** From now on every request is answered 503; sessions begin to close. */
  stopAccepting(): Promise<void>;
  /**
   * After the drain: answers every request still in flight with a JSON-RPC error, so its
   * client learns now that no reply is coming (closing a session discards pending replies,
   * and the SDK client would otherwise wait for its request timeout, 60 s by default).
   */
  abandonInflight(reason: string): Promise<void>;
  /** MCP requests (POST/DELETE) and REST searches being answered now. */
  readonly inflight: number;
}

export const MCP_PATH = '/mcp';
export const HEALTH_PATH = '/health';

/**
 * Routes `qmd mcp --http`: `/health`, `POST /query` and `/search` (REST, `rest.ts`), and
 * `/mcp` for both protocol eras. A POST with an
 * `Mcp-Session-Id`, or one the SDK classifies as 2025-era (`isLegacyRequest`), goes to the
 * sessions (one `McpServer` per client; only an `initialize` may create one); any other POST
 * is a sessionless 2026-07-28 exchange for the modern leg. GET and DELETE exist only within a
 * 2025 session: without one they are 405, as the 2026-07-28 spec has it. Order matters: the
 * Host/Origin check comes before anything else, and a stopping server answers 503 before
 * reading a body.
 *
 * Draining counts POST and DELETE exchanges in the gate from the first byte of the request
 * until the response is closed: "in flight" ends when the client has its reply. That is the
 * one unit the drain waits for; the tool handler inside an exchange runs through the gate's
 * uncounted view (`src/serve/http.ts`), so one request counts once. The GET event stream is not
 * counted: it is open for as long as the session lives and is closed at `closingTransport`.
 */
export function createHttpApp(options: HttpAppOptions): HttpApp {
  const { gate, legacy, guard, log } = options;
  let stopping = false;
  let inflight = 0;

  const exchanges = createExchanges({
    legacy,
    log,
    // A reply delivered while stopping leaves an idle kept-alive socket behind.
    onEnded: () => {
      if (stopping) options.onExchangeEnded?.();
    },
  });
  const exchange = exchanges.run;

  const counted = async (run: (signal: AbortSignal) => Promise<void>, signal?: AbortSignal): Promise<void> => {
    inflight++;
    try {
      await gate.run(run, signal ? { signal } : undefined);
    } finally {
      inflight--;
    }
  };

  const modernExchange = async (req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> => {
    const closed = new Promise<void>((resolve) => res.once('close', resolve));
    await options.modern.handle(req, res, body);
    await closed;
    if (stopping) options.onExchangeEnded?.();
  };

  const sessionOf = (req: IncomingMessage, res: ServerResponse): LegacySession | undefined => {
    const id = req.headers['mcp-session-id'];
    if (typeof id !== 'string' || id === '') {
      // Only a 2025 session has a GET stream or a DELETE; sessionless 2026-07-28 has neither.
      replyError(res, 405, 'Method Not Allowed: GET and DELETE need an Mcp-Session-Id (2025-era sessions only)', {
        headers: { Allow: 'POST' },
      });
      return undefined;
    }
    const session = legacy.get(id);
    if (!session) replyError(res, 404, 'Session not found', { code: JSONRPC_SESSION_NOT_FOUND });
    return session;
  };

  const post = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const body = await readJsonBody(req, options.maxBodyBytes);
    if (body.kind === 'tooLarge') {
      log.warn(`http: refused a request body over ${body.limit} bytes (413)`);
      // Not `Connection: close`: closing a socket with unread bytes in it makes the kernel send
      // RST, and a client still uploading may lose the 413 with it. Node reads and discards
      // the rest of the body (`req._dump()`) and keeps the connection usable.
      replyError(res, 413, `Payload Too Large: the limit is ${body.limit} bytes`);
      return;
    }
    if (body.kind === 'invalid') {
      replyError(res, 400, body.message, { code: JSONRPC_PARSE_ERROR });
      return;
    }
    if (stopping) {
      replyError(res, 503, 'Service Unavailable: the server is shutting down', { close: true });
      return;
    }
    let session: LegacySession | undefined;
    if (req.headers['mcp-session-id'] !== undefined) {
      session = legacy.get(String(req.headers['mcp-session-id']));
      if (!session) replyError(res, 404, 'Session not found', { code: JSONRPC_SESSION_NOT_FOUND });
    } else if (!(await isLegacyRequest(await toWebRequest(req, body.value), body.value))) {
      await counted(() => modernExchange(req, res, body.value));
      return;
    } else if (isInitializeRequest(body.value)) {
      if (!(await legacy.makeRoom())) {
        replyError(res, 503, 'Service Unavailable: too many sessions are busy', { headers: { 'Retry-After': '1' } });
        return;
      }
      session = await legacy.create();
    } else {
      replyError(res, 400, 'Bad Request: no session; send initialize first');
    }
    if (!session) return;
    await counted(() => exchange(session, req, res, body.value));
    exchanges.endCancelled(session, body.value);
  };

  /**
   * A REST search: the same body cap and stop check as an MCP POST, then one gate unit until
   * the reply is delivered (the drain waits for it). Its signal fires on escalation, or when
   * the client hangs up first: nobody is left to read the answer.
   */
  const restPost = async (rest: RestHandler, req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const body = await readJsonBody(req, options.maxBodyBytes);
    if (body.kind === 'tooLarge') {
      log.warn(`http: refused a request body over ${body.limit} bytes (413)`);
      replyJson(res, 413, { error: `Payload Too Large: the limit is ${body.limit} bytes` });
      return;
    }
    if (body.kind === 'invalid') {
      replyJson(res, 400, { error: body.message });
      return;
    }
    if (stopping) {
      replyJson(res, 503, { error: 'Service Unavailable: the server is shutting down' }, { close: true });
      return;
    }
    const hangUp = new AbortController();
    const closed = new Promise<void>((resolve) =>
      res.once('close', () => {
        if (!res.writableFinished) hangUp.abort(new Error('the client disconnected'));
        resolve();
      }),
    );
    await counted(async (signal) => {
      await rest.handle(res, body.value, signal);
      await closed;
    }, hangUp.signal);
    if (stopping) options.onExchangeEnded?.();
  };

  const route = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    // The REST paths answer `{ "error": … }` whoever refuses them (README); the rest JSON-RPC.
    const refuse = (
      status: number,
      message: string,
      extra: { headers?: Record<string, string>; close?: boolean; code?: number },
    ) =>
      options.rest && REST_PATHS.has(path)
        ? replyJson(res, status, { error: message }, extra)
        : replyError(res, status, message, extra);
    const refused = guard.check(req.headers);
    if (refused !== null) {
      log.warn(`http: refused ${req.method} ${req.url} (403): ${refused}`);
      refuse(403, `Forbidden: ${refused}`, { close: true, code: JSONRPC_FORBIDDEN });
      return;
    }
    if (stopping) {
      refuse(503, 'Service Unavailable: the server is shutting down', { close: true });
      return;
    }
    if (path === HEALTH_PATH && (req.method === 'GET' || req.method === 'HEAD')) {
      replyJson(res, 200, {
        // `status` and `uptime` (seconds) as the peer answers them; the rest is ours.
        status: 'ok',
        uptime: Math.round(process.uptime()),
        version: options.version,
        pid: process.pid,
        sessions: legacy.size,
        inflight,
      });
      return;
    }
    const unauthorized = path === HEALTH_PATH ? null : (options.auth?.check(req.headers.authorization) ?? null);
    if (unauthorized !== null && (path === MCP_PATH || REST_PATHS.has(path))) {
      // Not logged per request: a client without the token would fill the log.
      refuse(401, unauthorized, { headers: { 'WWW-Authenticate': BEARER_CHALLENGE } });
      return;
    }
    if (options.rest && REST_PATHS.has(path)) {
      if (req.method === 'POST') return restPost(options.rest, req, res);
      res.setHeader('Allow', 'POST');
      replyJson(res, 405, { error: `Method Not Allowed: ${path} takes POST with a JSON body` });
      return;
    }
    if (path !== MCP_PATH) {
      replyError(res, 404, `Not Found: MCP is served at ${MCP_PATH}`);
      return;
    }
    switch (req.method) {
      case 'POST':
        return post(req, res);
      case 'DELETE': {
        const session = sessionOf(req, res);
        if (session) await counted(() => exchange(session, req, res));
        return;
      }
      case 'GET': {
        const session = sessionOf(req, res);
        if (session) await exchange(session, req, res);
        return;
      }
      default:
        replyError(res, 405, 'Method Not Allowed', { headers: { Allow: 'GET, POST, DELETE' } });
    }
  };

  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    route(req, res).catch((error: unknown) => {
      log.warn(`http: ${req.method} ${req.url} failed: ${(error as Error)?.message ?? String(error)}`);
      replyError(res, 500, 'Internal error');
    });
  };

  return {
    handle,
    checkContinue(req, res) {
      // `Expect: 100-continue` (curl sends it for large bodies): refuse an oversized body
      // before the client sends it. The body never comes, so this connection cannot be reused.
      if (guard.check(req.headers) === null && Number(req.headers['content-length']) > options.maxBodyBytes) {
        log.warn(`http: refused a request body over ${options.maxBodyBytes} bytes (413, before 100-continue)`);
        replyError(res, 413, `Payload Too Large: the limit is ${options.maxBodyBytes} bytes`, { close: true });
        return;
      }
      res.writeContinue();
      handle(req, res);
    },
    async stopAccepting() {
      stopping = true;
      await legacy.beginShutdown();
    },
    async abandonInflight(reason) {
      options.rest?.abandon(reason);
      await exchanges.abandon(reason);
    },
    get inflight() {
      return inflight;
    },
  };
}
