/**
 * `qmd mcp --http` for its user only, against the built binary: a bearer
 * token made on first start into a 0600 file beside the index, required on `/mcp`, `/query`
 * and `/search` but not `/health`; `--token`; `--no-auth` with its warning; REST refusals in
 * the documented `{ "error": … }` shape; another local user (a throwaway account this test
 * creates) gets 401; and 64 2025 sessions that each hold a GET event stream do not lock a new
 * client out.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, readFileSync, statSync } from 'node:fs';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { indexedWorkspace, qmdEnv, runQmd, textOf } from '../support/qmd.js';
import { waitForExit } from '../support/spawn.js';
import { initializeBody, MCP_POST_HEADERS, rawRequest, startHttpServer } from './fixtures/http-server.js';

const ws = indexedWorkspace();
const tokenFile = `${ws.index}.mcp-token`;

function bearer(token: string): Record<string, string> {
  return { authorization: `Bearer ${token}` };
}

function queryBody(): string {
  return JSON.stringify({ query: 'sourdough' });
}

describe('the bearer token', () => {
  it('is made on first start (0600, beside the index), required on /mcp, /query, /search; /health stays open', async () => {
    const server = await startHttpServer(qmdEnv(ws.index), [], { auth: true });
    try {
      expect(server.p.stderr()).toContain(`HTTP access: bearer token in ${tokenFile} (new)`);
      const stat = statSync(tokenFile);
      expect(stat.mode & 0o777).toBe(0o600);
      const token = readFileSync(tokenFile, 'utf8').trim();
      expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(server.p.stderr()).not.toContain(token);
      const host = { host: `127.0.0.1:${server.port}` };

      expect((await rawRequest(server.port, { headers: host })).status).toBe(200);

      const mcp = await rawRequest(server.port, {
        method: 'POST',
        path: '/mcp',
        headers: { ...MCP_POST_HEADERS, ...host },
        body: initializeBody(),
      });
      expect(mcp.status).toBe(401);
      expect(mcp.headers['www-authenticate']).toBe('Bearer realm="qmd"');
      expect(JSON.parse(mcp.body)).toMatchObject({
        jsonrpc: '2.0',
        error: { message: expect.stringMatching(/^Unauthorized/) },
      });
      for (const path of ['/query', '/search']) {
        for (const headers of [{}, bearer('not-the-token-at-all'), { authorization: token }]) {
          const rest = await rawRequest(server.port, {
            method: 'POST',
            path,
            headers: { 'content-type': 'application/json', ...host, ...headers },
            body: queryBody(),
          });
          expect(rest.status, `${path} ${JSON.stringify(headers)}`).toBe(401);
          // The REST shape, not JSON-RPC.
          expect(Object.keys(JSON.parse(rest.body))).toEqual(['error']);
        }
        const ok = await rawRequest(server.port, {
          method: 'POST',
          path,
          headers: { 'content-type': 'application/json', ...host, ...bearer(token) },
          body: queryBody(),
        });
        expect(ok.status, ok.body).toBe(200);
        expect(JSON.parse(ok.body).results[0].file).toBe('notes/deep/cooking.md');
      }

      // The SDK's clients, both eras, with the header: served.
      for (const client of [
        new Client({ name: 'auth-2025', version: '1.0.0' }),
        new Client({ name: 'auth-2026', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } }),
      ]) {
        const transport = new StreamableHTTPClientTransport(server.url, {
          requestInit: { headers: bearer(token) },
        });
        transport.onerror = () => {};
        await client.connect(transport);
        expect(textOf(await client.callTool({ name: 'query', arguments: { query: 'sourdough' } }))).toContain(
          'cooking.md',
        );
        await client.close();
      }
      // Without it, the SDK client cannot even connect.
      const refused = new Client({ name: 'auth-none', version: '1.0.0' });
      const bare = new StreamableHTTPClientTransport(server.url);
      bare.onerror = () => {};
      await expect(refused.connect(bare)).rejects.toThrow();

      server.p.child.kill('SIGTERM');
      expect(await waitForExit(server.p)).toEqual({ code: 0, signal: null });
    } finally {
      server.p.kill();
    }

    // A second start keeps the token.
    const again = await startHttpServer(qmdEnv(ws.index), [], { auth: true });
    try {
      expect(again.p.stderr()).toContain(`HTTP access: bearer token in ${tokenFile}\n`);
      const token = readFileSync(tokenFile, 'utf8').trim();
      const ok = await rawRequest(again.port, {
        method: 'POST',
        path: '/query',
        headers: { 'content-type': 'application/json', host: `127.0.0.1:${again.port}`, ...bearer(token) },
        body: queryBody(),
      });
      expect(ok.status).toBe(200);
    } finally {
      again.p.kill();
    }
  });

  it('a token file others can read is refused: no server, exit 1, one line saying how to fix it', async () => {
    expect(existsSync(tokenFile)).toBe(true);
    chmodSync(tokenFile, 0o644);
    try {
      const run = await runQmd(['mcp', '--http', '--port', '0'], qmdEnv(ws.index));
      expect(run.code).toBe(1);
      expect(run.stderr).toContain(
        `the HTTP token file ${tokenFile} is readable by others (mode 644): chmod 600 ${tokenFile}`,
      );
      expect(run.stderr).not.toContain('Listening on');
    } finally {
      chmodSync(tokenFile, 0o600);
    }
  });

  it('--token: that token and no other; --no-auth: anyone local, with a warning', async () => {
    const given = 'a-token-given-on-the-command-line';
    const server = await startHttpServer(qmdEnv(ws.index), ['--token', given]);
    try {
      expect(server.p.stderr()).toContain('HTTP access: bearer token from --token');
      const post = (headers: Record<string, string>) =>
        rawRequest(server.port, {
          method: 'POST',
          path: '/query',
          headers: { 'content-type': 'application/json', host: `127.0.0.1:${server.port}`, ...headers },
          body: queryBody(),
        });
      expect((await post(bearer(given))).status).toBe(200);
      expect((await post(bearer(readFileSync(tokenFile, 'utf8').trim()))).status).toBe(401);
    } finally {
      server.p.kill();
    }
    const open = await startHttpServer(qmdEnv(ws.index), ['--no-auth']);
    try {
      expect(open.p.stderr()).toContain(
        'QMD Warning: --no-auth: any local user can reach this server and read every indexed note',
      );
      const ok = await rawRequest(open.port, {
        method: 'POST',
        path: '/query',
        headers: { 'content-type': 'application/json', host: `127.0.0.1:${open.port}` },
        body: queryBody(),
      });
      expect(ok.status).toBe(200);
    } finally {
      open.p.kill();
    }
  });

  it('REST refusals keep the { "error": … } shape: 403 for a foreign Host, 405', async () => {
    const server = await startHttpServer(qmdEnv(ws.index), [], { auth: true });
    try {
      const forbidden = await rawRequest(server.port, {
        method: 'POST',
        path: '/query',
        headers: { 'content-type': 'application/json', host: 'evil.example' },
        body: queryBody(),
      });
      expect(forbidden.status).toBe(403);
      expect(JSON.parse(forbidden.body)).toEqual({ error: 'Forbidden: Invalid Host header: evil.example' });
      const token = readFileSync(tokenFile, 'utf8').trim();
      const wrongMethod = await rawRequest(server.port, {
        method: 'GET',
        path: '/search',
        headers: { host: `127.0.0.1:${server.port}`, ...bearer(token) },
      });
      expect(wrongMethod.status).toBe(405);
      expect(Object.keys(JSON.parse(wrongMethod.body))).toEqual(['error']);
    } finally {
      server.p.kill();
    }
  });
});

/**
 * Another account on this machine, made for the test and removed after it: the threat is a
 * local user reaching 127.0.0.1. Needs root and useradd; skipped, saying so, without them.
 */
const canMakeUsers =
  process.getuid?.() === 0 &&
  spawnSync('useradd', ['--help']).status === 0 &&
  spawnSync('runuser', ['--help']).status === 0 &&
  spawnSync('curl', ['--version']).status === 0;
const otherUser = `qmdt${randomBytes(3).toString('hex')}`;

describe.skipIf(!canMakeUsers)('another local user (a throwaway account; needs root, useradd, runuser, curl)', () => {
  beforeAll(() => {
    const made = spawnSync('useradd', ['--no-create-home', '--shell', '/usr/sbin/nologin', otherUser], {
      encoding: 'utf8',
    });
    expect(made.status, made.stderr).toBe(0);
  });
  afterAll(() => {
    spawnSync('userdel', [otherUser]);
  });

  /** `curl` as the other user: the HTTP status, and the body. */
  function curlAs(args: string[]): { status: string; body: string } {
    const run = spawnSync(
      'runuser',
      ['-u', otherUser, '--', 'curl', '-s', '-o', '/dev/stdout', '-w', '\n%{http_code}', ...args],
      { encoding: 'utf8' },
    );
    const lines = run.stdout.trimEnd().split('\n');
    return { status: lines.pop() ?? '', body: lines.join('\n') };
  }

  it('gets 401 from /mcp and /query, cannot read the token file, and /health still answers', async () => {
    const server = await startHttpServer(qmdEnv(ws.index), [], { auth: true });
    try {
      const base = `http://127.0.0.1:${server.port}`;
      const query = curlAs(['-H', 'content-type: application/json', '-d', queryBody(), `${base}/query`]);
      expect(query.status).toBe('401');
      expect(query.body).not.toContain('cooking');
      const mcp = curlAs([
        '-H',
        'content-type: application/json',
        '-H',
        'accept: application/json, text/event-stream',
        '-d',
        initializeBody(),
        `${base}/mcp`,
      ]);
      expect(mcp.status).toBe('401');
      expect(curlAs([`${base}/health`]).status).toBe('200');
      const peek = spawnSync('runuser', ['-u', otherUser, '--', 'cat', tokenFile], { encoding: 'utf8' });
      expect(peek.status).not.toBe(0);
      expect(peek.stdout).toBe('');
      // The owner, with the token, is served the same request.
      const token = readFileSync(tokenFile, 'utf8').trim();
      const own = spawnSync(
        'curl',
        [
          '-s',
          '-H',
          `authorization: Bearer ${token}`,
          '-H',
          'content-type: application/json',
          '-d',
          queryBody(),
          `${base}/query`,
        ],
        { encoding: 'utf8' },
      );
      expect(own.stdout).toContain('cooking.md');
    } finally {
      server.p.kill();
    }
  });
});

describe('held event streams', () => {
  it('64 2025 sessions each holding GET /mcp: a new 2025 client is still served, the oldest is evicted', async () => {
    const server = await startHttpServer(qmdEnv(ws.index, { QMD_HTTP_MAX_SESSIONS: '64' }));
    const streams: Array<{ close(): void; ended: Promise<void> }> = [];
    try {
      const host = `127.0.0.1:${server.port}`;
      const ids: string[] = [];
      for (let i = 0; i < 64; i++) {
        const init = await rawRequest(server.port, {
          method: 'POST',
          path: '/mcp',
          headers: { ...MCP_POST_HEADERS, host },
          body: initializeBody(),
        });
        expect(init.status).toBe(200);
        const id = String(init.headers['mcp-session-id']);
        ids.push(id);
        streams.push(await holdStream(server.port, host, id));
      }
      // Every session is holding its stream: before the fix each counted as busy, and the
      // next initialize got 503 "too many sessions are busy" for as long as they stayed open.
      const transport = new StreamableHTTPClientTransport(server.url);
      transport.onerror = () => {};
      const client = new Client({ name: 'the-65th', version: '1.0.0' });
      await client.connect(transport);
      expect(textOf(await client.callTool({ name: 'query', arguments: { query: 'sourdough' } }))).toContain(
        'cooking.md',
      );
      // The least recently used one went, and its stream was closed with it.
      await streams[0]?.ended;
      expect(server.p.stderr()).toContain(
        `session ${ids[0]?.slice(0, 8)} closed (evicted: 64 sessions is the limit, its event stream closed)`,
      );
      await client.close();
    } finally {
      for (const s of streams) s.close();
      server.p.kill();
    }
  });
});

/** Opens a session's GET event stream and keeps it open; `ended` settles when the server ends it. */
async function holdStream(port: number, host: string, sessionId: string) {
  const { request } = await import('node:http');
  return new Promise<{ close(): void; ended: Promise<void> }>((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method: 'GET',
        path: '/mcp',
        agent: false,
        headers: {
          host,
          accept: 'text/event-stream',
          'mcp-session-id': sessionId,
          'mcp-protocol-version': '2025-06-18',
        },
      },
      (res) => {
        if (res.statusCode !== 200) {
          reject(new Error(`GET /mcp answered ${res.statusCode}`));
          return;
        }
        res.resume();
        const ended = new Promise<void>((done) => res.once('close', () => done()));
        resolve({ close: () => req.destroy(), ended });
      },
    );
    req.on('error', () => {});
    req.end();
  });
}
