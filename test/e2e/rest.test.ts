/**
 * `POST /query` and `POST /search` on `qmd mcp --http`: spawned and driven with
 * plain HTTP as a script would, behind the same guards as `/mcp`, inside the same lifecycle
 * (a search in flight at SIGTERM gets its answer, then a clean exit). The last part runs the
 * app in process with a real store, for what needs a hand on the gate: a stopping server, a
 * client that hangs up, escalation, and what the drain left.
 */
import { existsSync } from 'node:fs';
import { Agent, createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/core/index.js';
import { parseFailpoints } from '../../src/failpoints.js';
import { silentLog } from '../../src/log.js';
import { createHttpApp } from '../../src/mcp/http/app.js';
import { createOriginGuard } from '../../src/mcp/http/guard.js';
import { createLegacyLeg } from '../../src/mcp/http/legacy.js';
import { createModernLeg } from '../../src/mcp/http/modern.js';
import { createRestHandler } from '../../src/mcp/http/rest.js';
import { probedGate } from '../support/gate-probe.js';
import { qmdEnv, runQmd, tempWorkspace } from '../support/qmd.js';
import { waitForExit } from '../support/spawn.js';
import { type HttpServer, health, rawRequest, requestOn, startHttpServer } from './fixtures/http-server.js';

const ws = tempWorkspace();
beforeAll(async () => {
  const added = await runQmd(['collection', 'add', ws.notesDir, '--name', 'notes'], qmdEnv(ws.index));
  expect(added.code, added.stderr).toBe(0);
  const context = await runQmd(['context', 'add', 'notes/deep', 'Recipes.'], qmdEnv(ws.index));
  expect(context.code, context.stderr).toBe(0);
});
afterAll(() => ws.cleanup());

const JSON_HEADERS = { 'content-type': 'application/json' };

function post(port: number, path: string, body: unknown, headers: Record<string, string> = {}, agent?: Agent) {
  return rawRequest(port, {
    method: 'POST',
    path,
    headers: { ...JSON_HEADERS, ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    ...(agent && { agent }),
  });
}

describe('REST search on a shared HTTP server', () => {
  let server: HttpServer;
  beforeAll(async () => {
    server = await startHttpServer(qmdEnv(ws.index));
  });
  afterAll(async () => {
    try {
      server.p.child.kill('SIGTERM');
      expect(await waitForExit(server.p)).toEqual({ code: 0, signal: null });
    } finally {
      server.p.kill();
    }
  });

  it('POST /query with qmd 2.8’s searches answers the query tool’s structuredContent, with URIs', async () => {
    const res = await post(server.port, '/query', { searches: [{ type: 'lex', query: 'sourdough' }], limit: 5 });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/json');
    const body = JSON.parse(res.body);
    expect(body).toMatchObject({
      mode: 'bm25',
      searches: [{ type: 'lex', query: 'sourdough', ran: 'bm25', candidates: 1 }],
      reranked: false,
      results: [
        {
          // qmd 2.8's REST `file` is the document's URI (#576 there).
          file: 'qmd://notes/deep/cooking.md',
          uri: 'qmd://notes/deep/cooking.md',
          docid: expect.stringMatching(/^#[0-9a-f]+$/),
          title: 'Bread',
          score: 1,
          // qmd 2.8's form: the best match's line, the lines it spans, each numbered.
          snippet: '3: @@ -1,3 @@\n1: # Bread\n2: \n3: Flour, water, salt and time. **Sourdough** needs a starter.',
          line: 3,
          context: 'Recipes.',
        },
      ],
    });
  });

  it('POST /search is the same search, as in qmd 2.8', async () => {
    const request = { searches: [{ type: 'lex', query: 'sourdough' }], limit: 5 };
    const [query, search] = await Promise.all([
      post(server.port, '/query', request),
      post(server.port, '/search', request),
    ]);
    expect(search.status).toBe(200);
    expect(JSON.parse(search.body)).toEqual(JSON.parse(query.body));
  });

  it('takes a plain query; vec sub-searches on an index with no vectors run as BM25 and say so; rerank; intent', async () => {
    const plain = JSON.parse((await post(server.port, '/query', { query: 'orphans' })).body);
    expect(plain.results.map((r: { file: string }) => r.file)).toEqual(['qmd://notes/lifecycle.md']);
    const vec = JSON.parse(
      (
        await post(server.port, '/query', {
          searches: [{ type: 'vec', query: 'WAL readers' }],
          rerank: true,
          intent: 'db',
        })
      ).body,
    );
    expect(vec).toMatchObject({
      mode: 'bm25',
      note:
        'nothing is embedded yet: BM25 only (run qmd embed); intent unused: it shapes vec searches and the ' +
        'reranker, and neither ran',
      searches: [{ type: 'vec', ran: 'bm25' }],
      reranked: false,
      rerankNote: 'not reranked: no reranking model is configured',
    });
    expect(vec.results[0].file).toBe('qmd://notes/sqlite.md');
  });

  it('takes folder: only notes under it; one that leaves the collection is a 400 that says why', async () => {
    const all = JSON.parse((await post(server.port, '/query', { query: 'WAL sourdough' })).body);
    expect(all.results.map((r: { file: string }) => r.file).sort()).toEqual([
      'qmd://notes/deep/cooking.md',
      'qmd://notes/sqlite.md',
    ]);
    const deep = JSON.parse((await post(server.port, '/query', { query: 'WAL sourdough', folder: 'deep' })).body);
    expect(deep.results.map((r: { file: string }) => r.file)).toEqual(['qmd://notes/deep/cooking.md']);
    const refused = await post(server.port, '/query', { query: 'WAL', folder: 'deep/../../etc' });
    expect(refused.status).toBe(400);
    expect(JSON.parse(refused.body)).toEqual({
      error:
        'folder "deep/../../etc" climbs out of the collection (..): give a folder relative to the collection root, like 2024/q1',
    });
  });

  it.each([
    ['not JSON', '{nope', /^Parse error: /],
    ['no query and no searches', {}, /^Invalid request: query: give query \(plain text\) or searches/],
    [
      'both',
      { query: 'x', searches: [{ type: 'lex', query: 'x' }] },
      /^Invalid request: searches: give query or searches, not both$/,
    ],
    [
      'an unknown argument',
      { query: 'x', lineNumbers: true },
      /^Invalid request: unknown argument lineNumbers: query takes /,
    ],
    ['a bad sub-search type', { searches: [{ type: 'sql', query: 'x' }] }, /^Invalid request: searches\.0\.type: /],
    ['a body that is not an object', [1, 2], /^Invalid request: /],
    ['an unknown collection', { query: 'x', collections: ['nope'] }, /^Unknown collection "nope"; known: notes$/],
  ])('answers %s with 400 and one line, and keeps serving', async (_label, body, message) => {
    const res = await post(server.port, '/query', body);
    expect(res.status).toBe(400);
    const { error } = JSON.parse(res.body) as { error: string };
    expect(error).toMatch(message);
    expect(error).not.toContain('\n');
    expect((await health(server.port)).inflight).toBe(0);
  });

  it('GET is 405, and the guards of /mcp apply: foreign Host or Origin 403, a big body 413', async () => {
    const get = await rawRequest(server.port, { path: '/query' });
    expect(get.status).toBe(405);
    expect(get.headers.allow).toBe('POST');
    const foreignHost = await post(server.port, '/query', { query: 'x' }, { host: `evil.example:${server.port}` });
    expect(foreignHost.status).toBe(403);
    const foreignOrigin = await post(server.port, '/search', { query: 'x' }, { origin: 'https://evil.example' });
    expect(foreignOrigin.status).toBe(403);
    // qmd 2.8's words, which its clients and tests look for.
    expect(JSON.parse(foreignOrigin.body)).toEqual({ error: 'Forbidden: Origin not allowed: https://evil.example' });
    // Kept alive, the server answers 413 and reads the rest of the body away; asked to close
    // (the default), it would close under us while we still write: a race on a slow machine.
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const big = await post(server.port, '/query', { query: 'x'.repeat(2 * 1024 * 1024) }, {}, agent);
    agent.destroy();
    expect(big.status).toBe(413);
    expect(big.headers.connection).toBe('keep-alive');
    expect(JSON.parse(big.body)).toEqual({ error: 'Payload Too Large: the limit is 1048576 bytes' });
    expect(server.p.stderr()).not.toContain('Shutting down');
  });
});

describe('SIGTERM with a REST search in flight', () => {
  it('the search gets its answer, then the server exits cleanly', async () => {
    const server = await startHttpServer(qmdEnv(ws.index, { QMD_FAILPOINTS: 'tool.query=delay(1500)' }));
    try {
      const answer = post(server.port, '/query', { searches: [{ type: 'lex', query: 'sourdough' }] });
      while ((await health(server.port)).inflight < 1) {}
      server.p.child.kill('SIGTERM');
      await server.p.waitForStderr('Shutting down (SIGTERM)...');
      const res = await answer;
      expect(res.status).toBe(200);
      expect(JSON.parse(res.body).results[0].file).toBe('qmd://notes/deep/cooking.md');
      expect(await waitForExit(server.p)).toEqual({ code: 0, signal: null });
      expect(server.p.stderr()).toMatch(/Shutdown complete in [\d.]+ ms: SIGTERM: drained, all steps ok, exit 0/);
      expect(existsSync(`${ws.index}-wal`)).toBe(false);
    } finally {
      server.p.kill();
    }
  });
});

describe('the REST leg in process (real node:http, real store, real gate)', () => {
  async function startApp(failpoints: string) {
    const store = openStore(ws.index, { readonly: true });
    const { gate, nextStart, nextSettle } = probedGate();
    const mcp = () => new McpServer({ name: 'in-process', version: '0.0.0' });
    const legacy = createLegacyLeg({ createServer: mcp, idleMs: 60_000, maxSessions: 8, log: silentLog });
    const listener = createServer();
    const app = createHttpApp({
      gate,
      legacy,
      modern: createModernLeg({ createServer: mcp, maxBodyBytes: 64 * 1024, log: silentLog }),
      guard: createOriginGuard('127.0.0.1'),
      auth: null,
      rest: createRestHandler({ store, failpoints: parseFailpoints(failpoints), log: silentLog }),
      maxBodyBytes: 64 * 1024,
      version: '0.0.0',
      log: silentLog,
    });
    listener.on('request', app.handle);
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    const port = (listener.address() as AddressInfo).port;
    return {
      app,
      gate,
      store,
      port,
      nextStart,
      nextSettle,
      async close() {
        await legacy.closeAll();
        listener.closeAllConnections();
        await new Promise((resolve) => listener.close(resolve));
        await store.close();
      },
    };
  }

  it('once stopping, a search on a kept-alive connection gets 503 and the connection closes', async () => {
    const s = await startApp('');
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const search = () =>
      requestOn(agent, s.port, {
        path: '/search',
        method: 'POST',
        headers: JSON_HEADERS,
        body: JSON.stringify({ query: 'sourdough' }),
      });
    try {
      expect(await search()).toEqual({ status: 200, connection: 'keep-alive' });
      await s.app.stopAccepting();
      expect(await search()).toEqual({ status: 503, connection: 'close' });
    } finally {
      agent.destroy();
      await s.close();
    }
  });

  it('a client that hangs up stops its search: the unit settles long before its delay', async () => {
    const s = await startApp('tool.query=delay(600000)');
    try {
      const started = s.nextStart();
      const req = httpRequest({
        host: '127.0.0.1',
        port: s.port,
        path: '/query',
        method: 'POST',
        headers: JSON_HEADERS,
      });
      req.on('error', () => {});
      req.end(JSON.stringify({ query: 'sourdough' }));
      await started;
      const settled = s.nextSettle();
      req.destroy();
      await settled;
      expect(s.gate.size).toBe(0);
    } finally {
      await s.close();
    }
  });

  it('escalation aborts a search in flight: 503, "shutting down"', async () => {
    const s = await startApp('tool.query=delay(600000)');
    try {
      const started = s.nextStart();
      const answer = post(s.port, '/query', { query: 'sourdough' });
      await started;
      s.gate.abortAll();
      const res = await answer;
      expect(res.status).toBe(503);
      expect(JSON.parse(res.body)).toEqual({ error: 'aborted: the server is shutting down' });
    } finally {
      await s.close();
    }
  });

  it('what the drain left is answered 503 with the reason', async () => {
    const s = await startApp('tool.query=delay(600000)');
    try {
      const started = s.nextStart();
      const answer = post(s.port, '/query', { query: 'sourdough' });
      await started;
      await s.app.abandonInflight('Connection closed: the server shut down before this request finished');
      const res = await answer;
      expect(res.status).toBe(503);
      expect(JSON.parse(res.body)).toEqual({
        error: 'Connection closed: the server shut down before this request finished',
      });
      s.gate.abortAll(); // the delay ends; nothing is written twice
    } finally {
      await s.close();
    }
  });

  it('a search that meets a closed index (teardown got there first) is 503, one line', async () => {
    const s = await startApp('');
    try {
      await s.store.close();
      const res = await post(s.port, '/query', { query: 'sourdough' });
      expect(res.status).toBe(503);
      expect(JSON.parse(res.body)).toEqual({ error: 'The index is closed' });
    } finally {
      await s.close();
    }
  });
});
