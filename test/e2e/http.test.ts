/**
 * `qmd mcp --http`, spawned for real and driven with the SDK's Streamable HTTP
 * client: one warm server, a session (an McpServer) per client, DNS-rebinding protection, a
 * body cap, and the same lifecycle machine on SIGTERM — in-flight replies are delivered, then
 * a clean exit. Every wait is for an observable event with a generous bound.
 */
import { existsSync } from 'node:fs';
import { Agent, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createInflightGate } from '../../src/lifecycle/gate.js';
import { createHttpApp } from '../../src/mcp/http/app.js';
import { createOriginGuard } from '../../src/mcp/http/guard.js';
import { createLegacyLeg } from '../../src/mcp/http/legacy.js';
import { createModernLeg } from '../../src/mcp/http/modern.js';
import { within } from '../support/bounded.js';
import { indexedWorkspace, qmdEnv, textOf } from '../support/qmd.js';
import { recordingLog } from '../support/recording-log.js';
import { waitForExit } from '../support/spawn.js';
import {
  connectClient,
  type HttpServer,
  health,
  initializeBody,
  MCP_POST_HEADERS,
  rawRequest,
  requestOn,
  startHttpServer,
} from './fixtures/http-server.js';

const ws = indexedWorkspace();

describe('one shared HTTP server', () => {
  let server: HttpServer;
  beforeAll(async () => {
    server = await startHttpServer(qmdEnv(ws.index));
    // A backgrounded server has stdin at EOF from the start: in HTTP mode that is not a client leaving.
    server.p.child.stdin?.end();
  });
  afterAll(async () => {
    try {
      server.p.child.kill('SIGTERM');
      expect(await waitForExit(server.p)).toEqual({ code: 0, signal: null });
    } finally {
      server.p.kill();
    }
  });

  it('binds loopback and answers /health with its version, sessions and in-flight count', async () => {
    expect(server.url.hostname).toBe('127.0.0.1');
    expect(server.url.pathname).toBe('/mcp');
    const h = await health(server.port);
    expect(h).toMatchObject({ status: 'ok', pid: server.p.child.pid, inflight: 0 });
    expect(h.uptime).toBeGreaterThanOrEqual(0);
    expect(h.version).toMatch(/^\d+\.\d+\.\d+/);
  });

  it('serves two concurrent clients, each in its own session', async () => {
    const [a, b] = await Promise.all([connectClient(server.url, 'client-a'), connectClient(server.url, 'client-b')]);
    try {
      expect(a.sessionId).not.toBe('');
      expect(a.sessionId).not.toBe(b.sessionId);
      expect((await health(server.port)).sessions).toBeGreaterThanOrEqual(2);
      const [fromA, fromB] = await Promise.all([
        a.client.callTool({ name: 'query', arguments: { query: 'sourdough starter' } }),
        b.client.callTool({ name: 'get', arguments: { file: 'notes/sqlite.md' } }),
      ]);
      expect(textOf(fromA)).toContain('cooking.md');
      expect(textOf(fromB)).toContain('WAL mode lets readers and a writer share the index.');
    } finally {
      await Promise.all([a.client.close(), b.client.close()]);
    }
  });

  it('refuses a foreign Host or Origin with 403 (DNS-rebinding protection)', async () => {
    const foreignHost = await rawRequest(server.port, {
      method: 'POST',
      path: '/mcp',
      headers: { ...MCP_POST_HEADERS, host: `evil.example:${server.port}` },
      body: initializeBody(),
    });
    expect(foreignHost.status).toBe(403);
    expect(JSON.parse(foreignHost.body)).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32003, message: `Forbidden: Host not allowed: evil.example:${server.port}` },
    });

    const foreignOrigin = await rawRequest(server.port, {
      method: 'POST',
      path: '/mcp',
      headers: { ...MCP_POST_HEADERS, origin: 'https://evil.example' },
      body: initializeBody(),
    });
    expect(foreignOrigin.status).toBe(403);
    // qmd 2.8's words and code, which its clients and tests look for.
    expect(JSON.parse(foreignOrigin.body)).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32003, message: 'Forbidden: Origin not allowed: https://evil.example' },
    });

    // The same names on this machine are fine.
    const local = await rawRequest(server.port, {
      headers: { host: `localhost:${server.port}`, origin: `http://localhost:${server.port}` },
    });
    expect(local.status).toBe(200);
  });

  it('refuses an oversized body with 413, declared or streamed', async () => {
    const big = Buffer.alloc(2 * 1024 * 1024, 0x20);
    const declared = await fetch(server.url, { method: 'POST', headers: MCP_POST_HEADERS, body: big });
    expect(declared.status).toBe(413);
    expect(await declared.text()).toContain('Payload Too Large');

    const chunks = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < 32; i++) controller.enqueue(new Uint8Array(64 * 1024).fill(0x20));
        controller.close();
      },
    });
    const streamed = await fetch(server.url, {
      method: 'POST',
      headers: MCP_POST_HEADERS,
      body: chunks,
      duplex: 'half',
    } as RequestInit);
    expect(streamed.status).toBe(413);
  });

  it('keeps serving after bad requests', async () => {
    const post = (body: string, headers: Record<string, string> = {}) =>
      rawRequest(server.port, { method: 'POST', path: '/mcp', headers: { ...MCP_POST_HEADERS, ...headers }, body });
    expect((await post('{not json')).status).toBe(400);
    expect((await post(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }))).status).toBe(400);
    expect(
      (await post(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }), { 'mcp-session-id': 'no-such' }))
        .status,
    ).toBe(404);
    expect((await rawRequest(server.port, { path: '/elsewhere' })).status).toBe(404);
    expect((await rawRequest(server.port, { method: 'PUT', path: '/mcp' })).status).toBe(405);

    const { client } = await connectClient(server.url, 'after-bad-requests');
    try {
      const found = await client.callTool({ name: 'query', arguments: { query: 'orphans' } });
      expect(textOf(found)).toContain('lifecycle.md');
    } finally {
      await client.close();
    }
    expect(server.p.stderr()).not.toContain('Shutting down');
  });
});

describe('SIGTERM on an HTTP server', () => {
  it('idle sessions are reaped, a cancelled request ends, a reply in flight is delivered, then a clean exit', async () => {
    // A query holds until SIGUSR2 (or its own signal): in flight for exactly as long as the test says.
    const server = await startHttpServer(
      qmdEnv(ws.index, { QMD_FAILPOINTS: 'tool.query=until(SIGUSR2)', QMD_HTTP_SESSION_IDLE_MS: '1000' }),
    );
    const queriesHeld = (n: number) =>
      server.p.waitFor(
        () => server.p.stderr().split('QMD Debug: failpoint tool.query hit (until)').length > n || undefined,
        `query ${n} in its handler`,
      );
    try {
      // A session that never comes back (no event stream, no DELETE) is closed once idle.
      const init = await rawRequest(server.port, {
        method: 'POST',
        path: '/mcp',
        headers: MCP_POST_HEADERS,
        body: initializeBody(),
      });
      const idle = String(init.headers['mcp-session-id']);
      await server.p.waitForStderr(`http: session ${idle.slice(0, 8)} closed (idle for`);
      const afterReaping = await rawRequest(server.port, {
        method: 'POST',
        path: '/mcp',
        headers: { ...MCP_POST_HEADERS, 'mcp-session-id': idle },
        body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
      });
      expect(afterReaping.status).toBe(404);

      const { client } = await connectClient(server.url, 'in-flight');
      const inflight = async (): Promise<number> => (await health(server.port)).inflight;

      // A cancelled request stops counting: the SDK never answers it, so its stream is ended
      // for it (otherwise the drain below would wait for it until its deadline).
      const cancelling = new AbortController();
      const cancelled = client
        .callTool({ name: 'query', arguments: { query: 'bread' } }, { signal: cancelling.signal })
        .catch((e: Error) => e);
      await queriesHeld(1);
      expect(await inflight()).toBe(1);
      cancelling.abort();
      expect(await cancelled).toBeInstanceOf(Error);
      await within(
        (async () => {
          while ((await inflight()) > 0) {}
        })(),
        'the cancelled request to stop counting',
      );

      const reply = client.callTool({ name: 'query', arguments: { query: 'sourdough' } });
      // In flight = the server holds the request (its exchange counts until the reply is sent).
      await queriesHeld(2);
      expect(await inflight()).toBe(1);

      server.p.child.kill('SIGTERM');
      await server.p.waitForStderr('Shutting down (SIGTERM)...');
      // Teardown has begun with the query still in its handler; only now may it finish.
      server.p.child.kill('SIGUSR2');
      // The reply itself, not a shutdown error: the drain waited for it to be delivered.
      const result = await within(reply, 'the in-flight reply');
      expect(result.isError).toBeFalsy();
      expect(textOf(result)).toContain('cooking.md');
      const exit = await waitForExit(server.p);
      expect(exit).toEqual({ code: 0, signal: null });
      const stderr = server.p.stderr();
      expect(stderr).toContain('Shutting down (SIGTERM)...');
      expect(stderr).toMatch(/Shutdown complete in [\d.]+ ms: SIGTERM: drained, all steps ok, exit 0/);
      expect(stderr).not.toContain('held by');
      expect(existsSync(`${ws.index}-wal`)).toBe(false);
      await client.close();
    } finally {
      server.p.kill();
    }
  });
});

describe('the HTTP pieces, in process', () => {
  // The listener adapter (src/lifecycle/http.ts) is tested in test/lifecycle/http.test.ts.

  it('the guard accepts this machine’s names and refuses others', () => {
    const guard = createOriginGuard('127.0.0.1');
    expect(guard.check({ host: '127.0.0.1:8181' })).toBeNull();
    expect(guard.check({ host: 'localhost:8181', origin: 'http://localhost:3000' })).toBeNull();
    expect(guard.check({ host: '[::1]:8181' })).toBeNull();
    expect(guard.check({ host: 'evil.example:8181' })).toMatch(/Host not allowed/);
    expect(guard.check({ host: '127.0.0.1.evil.example' })).toMatch(/Host not allowed/);
    expect(guard.check({})).toMatch(/Missing Host/);
    expect(guard.check({ host: 'localhost', origin: 'null' })).toMatch(/Origin not allowed/);
    expect(guard.check({ host: 'localhost', origin: 'https://localhost.evil.example' })).toMatch(/Origin not allowed/);
  });
});

describe('the HTTP app, in process (real node:http, real SDK transport, no store)', () => {
  async function startApp(options: { maxSessions?: number } = {}) {
    const log = recordingLog();
    const { lines } = log;
    const legacy = createLegacyLeg({
      createServer: () => new McpServer({ name: 'in-process', version: '0.0.0' }),
      idleMs: 60_000,
      maxSessions: options.maxSessions ?? 8,
      log,
    });
    const modern = createModernLeg({
      createServer: () => new McpServer({ name: 'in-process', version: '0.0.0' }),
      maxBodyBytes: 64 * 1024,
      log,
    });
    const listener = createServer();
    const app = createHttpApp({
      gate: createInflightGate(),
      legacy,
      modern,
      guard: createOriginGuard('127.0.0.1'),
      auth: null,
      maxBodyBytes: 64 * 1024,
      version: '0.0.0',
      log,
      onExchangeEnded: () => listener.closeIdleConnections(),
    });
    listener.on('request', app.handle);
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    const port = (listener.address() as AddressInfo).port;
    const initialize = async () => {
      const res = await rawRequest(port, {
        method: 'POST',
        path: '/mcp',
        headers: MCP_POST_HEADERS,
        body: initializeBody(),
      });
      expect(res.status).toBe(200);
      return String(res.headers['mcp-session-id']);
    };
    const close = async () => {
      await legacy.closeAll();
      listener.closeAllConnections();
      await new Promise((resolve) => listener.close(resolve));
    };
    return { app, legacy, port, lines, initialize, close };
  }

  it('once stopping, a request on a kept-alive connection gets 503 and the connection closes', async () => {
    const s = await startApp();
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const get = () => requestOn(agent, s.port, { path: '/health' });
    try {
      expect(await get()).toEqual({ status: 200, connection: 'keep-alive' });
      await s.app.stopAccepting();
      expect(await get()).toEqual({ status: 503, connection: 'close' });
    } finally {
      agent.destroy();
      await s.close();
    }
  });

  it('at the session limit, a new client evicts the least recently used idle session', async () => {
    const s = await startApp({ maxSessions: 2 });
    try {
      const first = await s.initialize();
      const second = await s.initialize();
      const third = await s.initialize();
      expect(s.legacy.size).toBe(2);
      expect(s.legacy.get(first)).toBeUndefined();
      expect(s.legacy.get(second)).toBeDefined();
      expect(s.legacy.get(third)).toBeDefined();
      expect(s.lines.join('\n')).toContain(`session ${first.slice(0, 8)} closed (evicted: 2 sessions is the limit)`);
    } finally {
      await s.close();
    }
  });
});
