/**
 * Both protocol eras against the built binary, with SDK v2's real client: the 2026-07-28
 * revision (`server/discover`, a per-request envelope, sessionless over HTTP) beside the 2025
 * handshake that older clients negotiate, over stdio and HTTP; and one request counted once
 * by the HTTP drain. Every wait is for an observable event with a generous bound.
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import { ChildTransport } from '../support/child-transport.js';
import { indexedWorkspace, qmdEnv, spawnMcp, textOf } from '../support/qmd.js';
import { waitForExit } from '../support/spawn.js';
import { health, MCP_POST_HEADERS, rawRequest, startHttpServer } from './fixtures/http-server.js';

const MODERN = '2026-07-28';
const ws = indexedWorkspace();

function modernClient(): Client {
  return new Client({ name: 'e2e-2026', version: '1.0.0' }, { versionNegotiation: { mode: { pin: MODERN } } });
}

describe('stdio', () => {
  it('a 2026-07-28 client: discover, query, then EOF ends the server through the machine', async () => {
    const server = spawnMcp(qmdEnv(ws.index));
    try {
      const transport = new ChildTransport(server.child);
      const client = modernClient();
      await client.connect(transport);
      expect(client.getNegotiatedProtocolVersion()).toBe(MODERN);
      // The opening message was server/discover, not initialize.
      expect(JSON.parse(transport.sent[0] ?? '{}')).toMatchObject({ method: 'server/discover' });
      const result = await client.callTool({ name: 'query', arguments: { query: 'sourdough' } });
      expect(textOf(result)).toContain('cooking.md');
      await transport.close();
      expect(await waitForExit(server)).toEqual({ code: 0, signal: null });
      expect(server.stderr()).toContain('Shutting down (stdin closed)...');
      expect(server.stderr()).toMatch(/Shutdown complete in [\d.]+ ms: stdin closed: drained, all steps ok, exit 0/);
    } finally {
      server.kill();
    }
  });

  it('a 2025 client on the same binary still gets the initialize handshake', async () => {
    const server = spawnMcp(qmdEnv(ws.index));
    try {
      const transport = new ChildTransport(server.child);
      const client = new Client({ name: 'e2e-2025', version: '1.0.0' });
      await client.connect(transport);
      expect(JSON.parse(transport.sent[0] ?? '{}')).toMatchObject({ method: 'initialize' });
      expect(client.getNegotiatedProtocolVersion()).not.toBe(MODERN);
      expect(textOf(await client.callTool({ name: 'query', arguments: { query: 'sourdough' } }))).toContain(
        'cooking.md',
      );
      await transport.close();
      expect(await waitForExit(server)).toEqual({ code: 0, signal: null });
    } finally {
      server.kill();
    }
  });
});

describe('HTTP', () => {
  it('sessionless 2026-07-28 beside 2025 sessions: discover, tools, 405 for GET, then SIGTERM exits 0', async () => {
    const server = await startHttpServer(qmdEnv(ws.index));
    try {
      const envelope = (version: string) => ({
        'io.modelcontextprotocol/protocolVersion': version,
        'io.modelcontextprotocol/clientCapabilities': {},
      });
      const post = (headers: Record<string, string>, version = MODERN) =>
        rawRequest(server.port, {
          method: 'POST',
          path: '/mcp',
          headers: { ...MCP_POST_HEADERS, host: `127.0.0.1:${server.port}`, ...headers },
          body: JSON.stringify({
            jsonrpc: '2.0',
            id: 1,
            method: 'server/discover',
            params: { _meta: envelope(version) },
          }),
        });
      const discover = await post({ 'mcp-protocol-version': MODERN, 'mcp-method': 'server/discover' });
      expect(discover.status, discover.body).toBe(200);
      expect(discover.headers['mcp-session-id']).toBeUndefined();
      expect(discover.body).toContain(MODERN);
      // The spec's own error codes: headers that disagree with the body (-32020), and a
      // revision this server does not speak (-32022).
      const mismatch = await post({ 'mcp-protocol-version': MODERN });
      expect(mismatch.status).toBe(400);
      expect(JSON.parse(mismatch.body)).toMatchObject({ error: { code: -32020 } });
      const unsupported = await post(
        { 'mcp-protocol-version': '2099-01-01', 'mcp-method': 'server/discover' },
        '2099-01-01',
      );
      expect(JSON.parse(unsupported.body)).toMatchObject({ error: { code: -32022 } });

      const modern = modernClient();
      await modern.connect(new StreamableHTTPClientTransport(server.url));
      expect(modern.getNegotiatedProtocolVersion()).toBe(MODERN);
      expect(textOf(await modern.callTool({ name: 'query', arguments: { query: 'sourdough' } }))).toContain(
        'cooking.md',
      );
      // A 2025 client gets its session on the same endpoint.
      const legacyTransport = new StreamableHTTPClientTransport(server.url);
      legacyTransport.onerror = () => {};
      const legacy = new Client({ name: 'e2e-2025', version: '1.0.0' });
      await legacy.connect(legacyTransport);
      expect(legacyTransport.sessionId).toMatch(/^[0-9a-f-]{36}$/);
      expect(textOf(await legacy.callTool({ name: 'query', arguments: { query: 'orphans' } }))).toContain(
        'lifecycle.md',
      );
      expect((await health(server.port)).sessions).toBe(1);

      // No session, no event stream: 2026-07-28 answers GET with 405.
      const get = await rawRequest(server.port, {
        method: 'GET',
        path: '/mcp',
        headers: { host: `127.0.0.1:${server.port}` },
      });
      expect(get.status).toBe(405);

      server.p.child.kill('SIGTERM');
      expect(await waitForExit(server.p)).toEqual({ code: 0, signal: null });
      expect(server.p.stderr()).toContain('Shutting down (SIGTERM)...');
    } finally {
      server.p.kill();
    }
  });

  it.each([
    ['2025 session', () => new Client({ name: 'e2e-2025', version: '1.0.0' })],
    ['2026-07-28', modernClient],
  ])('one request in flight counts once in the drain (%s)', async (_era, makeClient) => {
    const server = await startHttpServer(
      qmdEnv(ws.index, { QMD_FAILPOINTS: 'tool.query=hang', QMD_DRAIN_TIMEOUT_MS: '300', QMD_EXIT_WATCHDOG_MS: '300' }),
    );
    try {
      const transport = new StreamableHTTPClientTransport(server.url);
      transport.onerror = () => {};
      const client = makeClient();
      await client.connect(transport);
      void client.callTool({ name: 'query', arguments: { query: 'bread' } }).catch(() => {});
      // /health reports the exchanges the drain would wait for.
      while ((await health(server.port)).inflight < 1) {}
      expect((await health(server.port)).inflight).toBe(1);
      server.p.child.kill('SIGTERM');
      await waitForExit(server.p);
      expect(server.p.stderr()).toContain('QMD Warning: drain deadline of 300 ms passed with 1 handler(s) in flight');
    } finally {
      server.p.kill();
    }
  });
});
