/**
 * `qmd mcp --http` for its user only, against the built binary: a bearer
 * token made on first start into a 0600 file beside the index, required on `/mcp`, `/query`
 * and `/search` but not `/health`; never on a command line (`--token` is refused; `--token-file`
 * and `QMD_HTTP_TOKEN` instead); a token rewritten, replaced or deleted on disk takes effect at
 * the next request, with no restart; `--no-auth` with its warning; REST refusals in the
 * documented `{ "error": … }` shape; another local user (a throwaway account this test creates)
 * gets 401, cannot read the index or the token file, and finds the token in no process's
 * command line (`ps`), whether it came from the file, `--token-file`, the variable, or a
 * daemon; and 64 2025 sessions that each hold a GET event stream do not lock a new client out.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reachableByOthers, ThrowawayUser } from '../support/other-user.js';
import { indexedWorkspace, QMD_BIN, qmdEnv, runQmd, textOf } from '../support/qmd.js';
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
        expect(JSON.parse(ok.body).results[0].file).toBe('qmd://notes/deep/cooking.md');
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

  it('--token is refused with one line saying why and what to use; nothing listens, stdout is empty', async () => {
    const secret = 'a-token-given-on-the-command-line';
    const run = await runQmd(['mcp', '--http', '--port', '0', '--token', secret], qmdEnv(ws.index));
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    const lines = run.stderr.trim().split('\n');
    expect(lines).toEqual([
      `qmd: --token is refused: every local user can read a command line (ps); put the token in a file only you can read and pass --token-file FILE, or set QMD_HTTP_TOKEN (by default the token is in ${tokenFile})`,
    ]);
    // Not echoed back either.
    expect(run.stderr).not.toContain(secret);
    // The daemon too: refused before any child is started.
    const daemon = await runQmd(['mcp', '--http', '--daemon', '--port', '0', '--token', secret], qmdEnv(ws.index));
    expect(daemon.code).toBe(1);
    expect(daemon.stderr).toContain('qmd: --token is refused');
  });

  it('--token-file: the token in that file and no other; QMD_HTTP_TOKEN: that token; --no-auth: anyone local, with a warning', async () => {
    const given = join(ws.dir, 'given-token');
    writeFileSync(given, 'a-token-kept-in-a-file-of-mine\n', { mode: 0o600 });
    const post = (port: number, headers: Record<string, string>) =>
      rawRequest(port, {
        method: 'POST',
        path: '/query',
        headers: { 'content-type': 'application/json', host: `127.0.0.1:${port}`, ...headers },
        body: queryBody(),
      });
    const server = await startHttpServer(qmdEnv(ws.index), ['--token-file', given]);
    try {
      expect(server.p.stderr()).toContain(`HTTP access: bearer token in ${given}`);
      expect((await post(server.port, bearer('a-token-kept-in-a-file-of-mine'))).status).toBe(200);
      expect((await post(server.port, bearer(readFileSync(tokenFile, 'utf8').trim()))).status).toBe(401);
    } finally {
      server.p.kill();
    }
    const missing = await runQmd(['mcp', '--http', '--port', '0', '--token-file', `${given}-typo`], qmdEnv(ws.index));
    expect(missing.code).toBe(1);
    expect(missing.stderr.trim()).toBe(
      `qmd: the token file ${given}-typo (--token-file) does not exist: write a token of 16 or more visible characters to it, mode 600, or leave --token-file out to use ${tokenFile}`,
    );
    const variable = 'a-token-from-the-environment';
    const fromEnv = await startHttpServer(qmdEnv(ws.index, { QMD_HTTP_TOKEN: variable }), [], { auth: true });
    try {
      expect(fromEnv.p.stderr()).toContain('HTTP access: bearer token from QMD_HTTP_TOKEN');
      expect(fromEnv.p.stderr()).not.toContain(variable);
      expect((await post(fromEnv.port, bearer(variable))).status).toBe(200);
      expect((await post(fromEnv.port, bearer(readFileSync(tokenFile, 'utf8').trim()))).status).toBe(401);
    } finally {
      fromEnv.p.kill();
    }
    // qmd mcp config writes the token the server would use, from the same sources.
    for (const [args, extra, token] of [
      [['--token-file', given], {}, 'a-token-kept-in-a-file-of-mine'],
      [[], { QMD_HTTP_TOKEN: variable }, variable],
    ] as const) {
      const config = await runQmd(['mcp', 'config', '--client', 'cursor', '--http', ...args], qmdEnv(ws.index, extra));
      expect(config.code, config.stderr).toBe(0);
      expect(config.stdout).toContain(`"Authorization": "Bearer ${token}"`);
    }
    const open = await startHttpServer(qmdEnv(ws.index), ['--no-auth']);
    try {
      expect(open.p.stderr()).toContain(
        'QMD Warning: --no-auth: any local user can reach this server and read every indexed note',
      );
      expect((await post(open.port, {})).status).toBe(200);
    } finally {
      open.p.kill();
    }
  });

  it('rotation: a token rewritten, replaced or deleted on disk takes effect at the next request, no restart', async () => {
    const server = await startHttpServer(qmdEnv(ws.index), [], { auth: true });
    const status = async (token: string) =>
      (
        await rawRequest(server.port, {
          method: 'POST',
          path: '/query',
          headers: { 'content-type': 'application/json', host: `127.0.0.1:${server.port}`, ...bearer(token) },
          body: queryBody(),
        })
      ).status;
    const fresh = () => randomBytes(32).toString('base64url');
    try {
      const first = readFileSync(tokenFile, 'utf8').trim();
      expect(await status(first)).toBe(200);
      // Rewritten in place (same inode, same size).
      const second = fresh();
      writeFileSync(tokenFile, `${second}\n`);
      expect(await status(second)).toBe(200);
      expect(await status(first)).toBe(401);
      // A new file renamed over it, as rotation tools do.
      const third = fresh();
      writeFileSync(`${tokenFile}.next`, `${third}\n`, { mode: 0o600 });
      renameSync(`${tokenFile}.next`, tokenFile);
      expect(await status(third)).toBe(200);
      expect(await status(second)).toBe(401);
      expect(server.p.stderr()).toContain(`HTTP access: the token file ${tokenFile} changed; its new token is in use`);
      // Deleted: the old token stops working at once, and the log says why.
      rmSync(tokenFile);
      expect(await status(third)).toBe(401);
      await server.p.waitForStderr(
        `QMD Warning: the HTTP token file ${tokenFile} is gone: every request is refused until it is fixed`,
      );
      // Readable by others: refused too.
      const fourth = fresh();
      writeFileSync(tokenFile, `${fourth}\n`, { mode: 0o644 });
      chmodSync(tokenFile, 0o644);
      expect(await status(fourth)).toBe(401);
      await server.p.waitForStderr(`the HTTP token file ${tokenFile} is readable by others (mode 644)`);
      chmodSync(tokenFile, 0o600);
      expect(await status(fourth)).toBe(200);
      expect(server.p.stderr()).not.toMatch(new RegExp(`${first}|${second}|${third}|${fourth}`));
    } finally {
      server.p.kill();
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
      expect(JSON.parse(forbidden.body)).toEqual({ error: 'Forbidden: Host not allowed: evil.example' });
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
 * local user reaching 127.0.0.1, reading files, or reading command lines. Needs root, useradd
 * and curl; skipped, saying why, without them (`test/support/other-user.ts`).
 */
const reach = reachableByOthers();
const hasCurl = spawnSync('curl', ['--version']).status === 0;
const otherUserSkip = 'skip' in reach ? reach.skip : hasCurl ? undefined : 'needs curl';

describe.skipIf(otherUserSkip !== undefined)(
  `another local user (a throwaway account${otherUserSkip ? `: skipped, ${otherUserSkip}` : ''})`,
  () => {
    let other: ThrowawayUser;
    beforeAll(() => {
      other = ThrowawayUser.create('qmdt');
    });
    afterAll(() => {
      other.remove();
    });

    /** `curl` as the other user: the HTTP status, and the body. */
    function curlAs(args: string[]): { status: string; body: string } {
      const run = other.run('curl', ['-s', '-o', '/dev/stdout', '-w', '\n%{http_code}', ...args]);
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
        const peek = other.run('cat', [tokenFile]);
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

    it('cannot read the index: made 0600 (its -wal and -shm too) with umask 022, in a folder open to everyone', async () => {
      if ('skip' in reach) return;
      // A folder the user chose and left open (0755): only the files' own modes keep others out.
      const open = mkdtempSync(join(reach.scratch, 'open-'));
      chmodSync(open, 0o755);
      const notes = join(open, 'notes');
      mkdirSync(notes, { mode: 0o755 });
      writeFileSync(join(notes, 'secret.md'), '# Secret\n\nthe vault code is sourdough 4821\n', { mode: 0o644 });
      const index = join(open, 'index', 'index.sqlite');
      // As a person with the usual umask 022 would run it.
      const add = spawnSync(
        'sh',
        ['-c', 'umask 022; exec "$0" "$@"', process.execPath, QMD_BIN, 'collection', 'add', notes, '--name', 'notes'],
        { env: qmdEnv(index), encoding: 'utf8' },
      );
      expect(add.status, add.stderr).toBe(0);
      expect(statSync(dirname(index)).mode & 0o777).toBe(0o700);
      expect(statSync(index).mode & 0o777).toBe(0o600);
      // A server holds it open: the -wal and -shm SQLite made beside it follow the index's mode.
      const server = await startHttpServer(qmdEnv(index), [], { auth: true });
      try {
        const beside = [`${index}-wal`, `${index}-shm`].filter((f) => existsSync(f));
        expect(beside.length).toBeGreaterThan(0);
        for (const file of [index, ...beside, `${index}.mcp-token`]) {
          expect(statSync(file).mode & 0o777, file).toBe(0o600);
          // Even with the folder opened up, the file itself is closed.
          chmodSync(dirname(index), 0o755);
          const read = other.run('cat', [file]);
          expect(read.status, file).not.toBe(0);
          expect(read.stderr, file).toContain('Permission denied');
          expect(read.stdout).not.toContain('sourdough');
        }
      } finally {
        server.p.kill();
      }
    });

    it('finds the token in no command line (ps) nor environment, from any source, daemon included', async () => {
      const given = join(ws.dir, 'ps-token');
      const fromFile = randomBytes(32).toString('base64url');
      writeFileSync(given, `${fromFile}\n`, { mode: 0o600 });
      const fromEnv = randomBytes(32).toString('base64url');
      const psAs = () => {
        const ps = other.run('ps', ['-eo', 'pid,args']);
        expect(ps.status, ps.stderr).toBe(0);
        return ps.stdout;
      };
      const servers: Array<{ how: string; args: string[]; env: Record<string, string>; token: () => string }> = [
        { how: 'the token file', args: [], env: {}, token: () => readFileSync(tokenFile, 'utf8').trim() },
        { how: '--token-file', args: ['--token-file', given], env: {}, token: () => fromFile },
        { how: 'QMD_HTTP_TOKEN', args: [], env: { QMD_HTTP_TOKEN: fromEnv }, token: () => fromEnv },
      ];
      for (const { how, args, env, token } of servers) {
        const server = await startHttpServer(qmdEnv(ws.index, env), args, { auth: true });
        try {
          const seen = psAs();
          // ps works for that user and sees this very server.
          expect(seen, how).toContain(`${server.p.child.pid} `);
          expect(seen, how).not.toContain(token());
          const environ = other.run('cat', [`/proc/${server.p.child.pid}/environ`]);
          expect(environ.status, how).not.toBe(0);
          expect(environ.stdout).not.toContain(token());
        } finally {
          server.p.kill();
        }
      }
      // A daemon: its parent starts it with the same command line, so nothing secret rides on it.
      const env = qmdEnv(ws.index, { QMD_HTTP_TOKEN: fromEnv });
      const started = await runQmd(['mcp', '--http', '--daemon', '--port', '0'], env);
      expect(started.code, started.stderr).toBe(0);
      const pid = Number(/\(pid (\d+)\)/.exec(started.stdout)?.[1]);
      try {
        const seen = psAs();
        expect(seen).toContain(`${pid} `);
        expect(seen).not.toContain(fromEnv);
      } finally {
        const stopped = await runQmd(['mcp', 'stop'], env);
        expect(stopped.code, stopped.stderr).toBe(0);
      }
    });
  },
);

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
