/**
 * `qmd mcp config --client NAME`, against the built binary (issue 32): each printed
 * configuration is read as its client reads it (`test/support/mcp-clients.ts`), and the server
 * it names is started exactly as written (the command, its arguments, the environment it adds)
 * from an environment whose PATH holds no Node at all, as a GUI client's may not, then
 * initialized by the SDK's real Client and asked a query. `--shared` and `--index` are carried;
 * `--http` connects to a running `qmd mcp --http` with the headers the configuration carries.
 * The real clients (Claude Code, Gemini CLI, Codex, opencode) were checked once by hand:
 * bench/experiments/mcp-config/real-clients.mjs.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLIENTS } from '../../src/cli/mcp-config/clients.js';
import { ChildTransport } from '../support/child-transport.js';
import { READERS } from '../support/mcp-clients.js';
import { indexedWorkspace, QMD_BIN, qmdEnv, runQmd } from '../support/qmd.js';
import { spawnProcess, waitForExit } from '../support/spawn.js';
import { type HttpServer, startHttpServer } from './fixtures/http-server.js';
import { eventually, sharedServerPids } from './fixtures/shared.js';

const ws = indexedWorkspace();
const runtime = mkdtempSync(join(tmpdir(), 'qmd-run-'));
/** Where the configurations are asked for: the workspace's index named by QMD_INDEX only. */
const env = qmdEnv(ws.index, { XDG_RUNTIME_DIR: runtime, QMD_SHARED_IDLE_MS: '2000' });
/** What a client adds the configuration's environment to: no Node on PATH, no QMD_INDEX. */
const clientEnv = { HOME: ws.dir, PATH: '/nonexistent', XDG_RUNTIME_DIR: runtime };
let http: HttpServer;

beforeAll(async () => {
  http = await startHttpServer(env, [], { auth: true });
});

afterAll(async () => {
  http.p.child.kill('SIGTERM');
  await waitForExit(http.p);
  // The shared server the configurations started: asked to stop on its socket, as a user would.
  const stopped = await runQmd(['mcp', 'stop', '--shared'], env);
  expect(stopped.code, stopped.stderr).toBe(0);
  await eventually(() => sharedServerPids(ws.index).length === 0, 'the shared server gone');
  rmSync(runtime, { recursive: true, force: true });
});

async function configFor(client: string, args: string[]): Promise<{ text: string; stderr: string }> {
  const run = await runQmd(['mcp', 'config', '--client', client, ...args], env);
  expect(run.code, run.stderr).toBe(0);
  return { text: run.stdout, stderr: run.stderr };
}

async function expectServes(client: Client): Promise<void> {
  const found = await client.callTool({ name: 'query', arguments: { query: 'sourdough starter' } });
  expect(found.isError, JSON.stringify(found)).toBeFalsy();
  expect((found.structuredContent as { results: Array<{ file: string }> }).results[0]?.file).toBe(
    'notes/deep/cooking.md',
  );
}

describe.each(CLIENTS.map((c) => ({ id: c.id, title: c.title })))('qmd mcp config --client $id', ({ id, title }) => {
  it.each([
    { variant: 'stdio', args: [] as string[] },
    { variant: '--shared', args: ['--shared'] },
  ])('$variant: starts, from a PATH with no Node, the server of this index, which answers', async ({ args }) => {
    const { text, stderr } = await configFor(id, args);
    expect(stderr).toContain(`qmd: ${title} reads this from `);
    const launch = READERS[id]?.(text, 'qmd');
    if (launch?.transport !== 'stdio') throw new Error(`not a stdio configuration:\n${text}`);
    expect(launch.command).toBe(process.execPath);
    expect(launch.args).toContain(ws.index);
    expect(launch.args.at(-1)).toBe(args.length > 0 ? '--shared' : 'mcp');

    const server = spawnProcess(launch.command, launch.args, { env: { ...clientEnv, ...launch.env } });
    try {
      const transport = new ChildTransport(server.child);
      const client = new Client({ name: `config-${id}`, version: '1.0.0' });
      await client.connect(transport);
      await expectServes(client);
      await transport.close();
      expect(await waitForExit(server), server.stderr()).toEqual({ code: 0, signal: null });
    } finally {
      server.kill();
    }
  });

  if (id === 'claude-desktop') {
    it('--http: refused with one line (it starts stdio servers only)', async () => {
      const run = await runQmd(['mcp', 'config', '--client', id, '--http'], env);
      expect(run.code).toBe(1);
      expect(run.stdout).toBe('');
      expect(run.stderr).toMatch(/^qmd: Claude Desktop starts its servers over stdio only[^\n]*\n$/);
    });
    return;
  }

  it('--http: reaches the running qmd mcp --http with the token from its file', async () => {
    const { text, stderr } = await configFor(id, ['--http', '--port', String(http.port)]);
    const launch = READERS[id]?.(text, 'qmd');
    if (launch?.transport !== 'http') throw new Error(`not an HTTP configuration:\n${text}`);
    expect(launch.url).toBe(http.url.href);
    const token = readFileSync(`${ws.index}.mcp-token`, 'utf8').trim();
    expect(launch.headers).toEqual({ Authorization: `Bearer ${token}` });
    expect(stderr).not.toContain(token);
    expect(stderr).toContain(
      `start that server first: qmd --index ${ws.index} mcp --http --daemon --port ${http.port}`,
    );

    const transport = new StreamableHTTPClientTransport(new URL(launch.url), {
      requestInit: { headers: launch.headers },
    });
    transport.onerror = () => {};
    const client = new Client({ name: `config-${id}`, version: '1.0.0' });
    await client.connect(transport);
    try {
      await expectServes(client);
    } finally {
      await client.close();
    }
  });
});

describe('what qmd mcp config carries and refuses', () => {
  it('--index, --embed-model (a local file made absolute) and XDG_CACHE_HOME; --name names the entry', async () => {
    const run = await runQmd(
      [
        '--index',
        ws.index,
        '--embed-model',
        'models/tiny.gguf',
        'mcp',
        'config',
        '--client',
        'cursor',
        '--name',
        'notes',
      ],
      { ...env, QMD_INDEX: '' },
    );
    expect(run.code, run.stderr).toBe(0);
    const launch = READERS.cursor?.(run.stdout, 'notes');
    expect(launch).toMatchObject({
      transport: 'stdio',
      args: [
        expect.stringMatching(/\/dist\/qmd\.mjs$/),
        '--index',
        ws.index,
        '--embed-model',
        join(process.cwd(), 'models/tiny.gguf'),
        'mcp',
      ],
      env: { XDG_CACHE_HOME: env.XDG_CACHE_HOME },
    });
  });

  it('QMD_SHARED=1 is carried as --shared; --no-auth leaves the header out', async () => {
    const shared = await runQmd(['mcp', 'config', '--client', 'vscode'], { ...env, QMD_SHARED: '1' });
    expect(READERS.vscode?.(shared.stdout, 'qmd')).toMatchObject({ args: expect.arrayContaining(['--shared']) });
    const open = await runQmd(['mcp', 'config', '--client', 'vscode', '--http', '--no-auth'], env);
    expect(READERS.vscode?.(open.stdout, 'qmd')).toEqual({
      transport: 'http',
      url: 'http://127.0.0.1:8181/mcp',
      headers: {},
    });
  });

  it('--no-watch (or QMD_WATCH=0) is carried only when asked: a server keeps the index fresh by default', async () => {
    const argsOf = (client: string, stdout: string): string[] => {
      const launch = READERS[client]?.(stdout, 'qmd');
      return launch !== undefined && 'args' in launch ? launch.args : [];
    };
    const plain = await runQmd(['mcp', 'config', '--client', 'vscode'], env);
    expect(argsOf('vscode', plain.stdout).at(-1)).toBe('mcp');
    const flag = await runQmd(['mcp', 'config', '--client', 'vscode', '--no-watch'], env);
    expect(argsOf('vscode', flag.stdout).at(-1)).toBe('--no-watch');
    const variable = await runQmd(['mcp', 'config', '--client', 'claude-code', '--shared'], { ...env, QMD_WATCH: '0' });
    expect(argsOf('claude-code', variable.stdout).slice(-2)).toEqual(['--shared', '--no-watch']);
    const http = await runQmd(['mcp', 'config', '--client', 'cursor', '--http', '--no-watch'], env);
    expect(http.stderr).toMatch(/start that server first: qmd .* mcp --http --daemon --no-watch\n/);
  });

  it.each([
    [['--client', 'emacs'], 2, /argument 'emacs' is invalid\. unknown client; one of: claude-desktop, claude-code/],
    [[], 2, /required option '--client <name>' not specified/],
    [['--client', 'cursor', '--http', '--shared'], 1, /^qmd: --shared is for stdio clients/],
    [
      ['--client', 'cursor', '--http', '--token', 'abcdefghijklmnopqrstuvwxyz'],
      1,
      /^qmd: qmd mcp config reads the token from its file/,
    ],
  ])('refuses %j with exit %i and one line', async (args, code, line) => {
    const run = await runQmd(['mcp', 'config', ...args], env);
    expect(run.code).toBe(code);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(line);
  });

  it('a mistyped index (its folder missing too) is refused, as qmd mcp would refuse it', async () => {
    const typo = join(ws.dir, 'no-such-folder', 'index.sqlite');
    const run = await runQmd(['--index', typo, 'mcp', 'config', '--client', 'cursor'], env);
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(
      `qmd: No index at ${typo}: make one with qmd collection add DIR, or point --index or QMD_INDEX at yours\n`,
    );
  });
});

describe('the README’s line for a client that has no configuration yet', () => {
  it('runs as printed in a shell, in a home where ~/.cursor does not exist, and writes a configuration Cursor reads', async () => {
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    const line = /`(mkdir -p ~\/\.cursor && qmd mcp config --client cursor > ~\/\.cursor\/mcp\.json)`/.exec(
      readme,
    )?.[1];
    expect(line, 'the README line').toBeDefined();
    const home = mkdtempSync(join(tmpdir(), 'qmd-readme-home-'));
    // `qmd` on PATH as `npm i -g` puts it: a command by that name that runs this build.
    const bin = join(home, 'bin');
    mkdirSync(bin);
    writeFileSync(join(bin, 'qmd'), `#!/bin/sh\nexec "${process.execPath}" "${QMD_BIN}" "$@"\n`, { mode: 0o755 });
    try {
      const shell = spawnProcess('/bin/sh', ['-c', line as string], {
        env: { ...env, HOME: home, PATH: `${bin}:/usr/bin:/bin` },
      });
      shell.child.stdin?.end();
      expect(await shell.closed, shell.stderr()).toEqual({ code: 0, signal: null });
      const written = readFileSync(join(home, '.cursor', 'mcp.json'), 'utf8');
      const launch = READERS.cursor?.(written, 'qmd');
      expect(launch).toMatchObject({ transport: 'stdio', command: process.execPath });
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
});
