/**
 * `qmd mcp` on a fresh machine (issue 32): a client configured before anything is indexed,
 * with no index and not even its folder (`$XDG_CACHE_HOME/qmd`). Over stdio, `--shared` and
 * `--http` the server starts and serves; `status` says `No index yet at PATH: qmd collection
 * add DIR`, the other tools return that line as their error; nothing is created (but the HTTP
 * token file, which a client needs to connect, and while it serves the HTTP server's claim); and the first `qmd collection add`, run beside
 * the running server, is what its next calls read, with no restart. A mistyped index path, whose
 * folder does not exist either, still fails at once with its line.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { afterAll, describe, expect, it } from 'vitest';
import { ChildTransport } from '../support/child-transport.js';
import { QMD_BIN, qmdEnv, runQmd, spawnMcp, textOf } from '../support/qmd.js';
import { spawnProcess, waitForExit } from '../support/spawn.js';
import { connectClient, startHttpServer } from './fixtures/http-server.js';
import { eventually, serverLog, sharedServerPids } from './fixtures/shared.js';

const NOTES: Record<string, string> = {
  'bread.md': '# Bread\n\nSourdough needs a starter, flour, water and salt.\n',
  'wal.md': '# WAL\n\nReaders and a writer share the index in WAL mode.\n',
};

const homes: string[] = [];
afterAll(() => {
  for (const home of homes) rmSync(home, { recursive: true, force: true });
});

/** A machine where qmd never ran: notes, a private runtime dir, no cache dir, no QMD_INDEX. */
function freshMachine() {
  const home = mkdtempSync(join(tmpdir(), 'qmd-fresh-'));
  homes.push(home);
  const notes = join(home, 'notes');
  mkdirSync(notes);
  for (const [file, text] of Object.entries(NOTES)) {
    mkdirSync(dirname(join(notes, file)), { recursive: true });
    writeFileSync(join(notes, file), text);
  }
  const runtime = join(home, 'run');
  mkdirSync(runtime, { mode: 0o700 });
  const { QMD_INDEX: _none, ...env } = qmdEnv('', {
    XDG_CACHE_HOME: join(home, 'cache'),
    XDG_RUNTIME_DIR: runtime,
    QMD_SHARED_IDLE_MS: '1000',
  });
  return { home, notes, env, cache: join(home, 'cache'), index: join(home, 'cache', 'qmd', 'indexes', 'index.sqlite') };
}

/** Every file under `dir`, relative to it, but the compile caches (code, not data). */
function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => !entry.isDirectory())
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)))
    .filter((file) => !file.startsWith(join('qmd', 'compile-cache')))
    .sort();
}

interface Served {
  client: Client;
  /** What the server (or, with --shared, the shared server) wrote on stderr so far. */
  log(): string;
  /** Closes the client as a client does; resolves with how the process it started exited. */
  leave(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** When the test failed before `leave`: the process it started is killed, so none outlives the test. */
  kill(): void;
}

type Machine = ReturnType<typeof freshMachine>;

const MODES: ReadonlyArray<{ mode: string; serve(m: Machine): Promise<Served>; created: string[] }> = [
  {
    mode: 'stdio',
    created: [],
    async serve(m) {
      const p = spawnMcp(m.env, [], { keepStdout: false });
      const transport = new ChildTransport(p.child);
      const client = new Client({ name: 'first-run', version: '1.0.0' });
      await client.connect(transport).catch((error: Error) => {
        p.kill();
        throw new Error(`${error.message}; stderr: ${p.stderr()}`);
      });
      return {
        client,
        log: p.stderr,
        leave: () => transport.close().then(() => waitForExit(p)),
        kill: () => p.kill(),
      };
    },
  },
  {
    mode: '--shared',
    created: [],
    async serve(m) {
      const p = spawnMcp(m.env, ['--shared'], { keepStdout: false });
      const transport = new ChildTransport(p.child);
      const client = new Client({ name: 'first-run', version: '1.0.0' });
      await client.connect(transport).catch((error: Error) => {
        p.kill();
        throw new Error(`${error.message}; stderr: ${p.stderr()}`);
      });
      return {
        client,
        log: () => serverLog(m.index, m.env),
        leave: () => transport.close().then(() => waitForExit(p)),
        kill: () => p.kill(),
      };
    },
  },
  {
    mode: '--http',
    // The token, and while it serves the index's one-HTTP-server claim (removed at its exit).
    created: [join('qmd', 'indexes', 'index.sqlite.mcp-token'), join('qmd', 'indexes', 'index.sqlite.mcp.pid')],
    async serve(m) {
      const server = await startHttpServer(m.env, [], { auth: true });
      const token = readFileSync(`${m.index}.mcp-token`, 'utf8').trim();
      const { client } = await connectClient(server.url, 'first-run', token);
      return {
        client,
        log: server.p.stderr,
        async leave() {
          await client.close();
          server.p.child.kill('SIGTERM');
          return waitForExit(server.p);
        },
        kill: () => server.p.child.kill('SIGKILL'),
      };
    },
  },
];

describe.each(MODES)('qmd mcp $mode with no index yet', ({ mode, serve, created }) => {
  it('serves; says "No index yet at PATH: qmd collection add DIR"; creates nothing; reads the first collection add without a restart', async () => {
    const m = freshMachine();
    const served = await serve(m);
    let left = false;
    const noIndexYet = `No index yet at ${m.index}: qmd collection add DIR`;
    try {
      const { client } = served;
      expect(client.getInstructions()).toContain('no collection is indexed yet (`qmd collection add DIR`)');

      const status = await client.callTool({ name: 'status', arguments: {} });
      expect(status.isError, textOf(status)).toBeFalsy();
      // Its first line; where llama.cpp would run and the models follow (issue 33).
      expect(textOf(status).split('\n')[0]).toBe(noIndexYet);
      expect(status.structuredContent).toMatchObject({ index: m.index, documents: 0, collections: [] });
      for (const [name, args] of [
        ['query', { query: 'sourdough' }],
        ['get', { file: 'notes/bread.md' }],
        ['multi_get', { pattern: '**/*.md' }],
      ] as const) {
        const refused = await client.callTool({ name, arguments: args });
        expect(refused.isError, name).toBe(true);
        expect(textOf(refused), name).toBe(noIndexYet);
      }
      expect(served.log()).toContain(`No index yet at ${m.index}: serving`);
      expect(filesUnder(m.cache), 'what the server wrote').toEqual(created);

      // The user indexes a folder beside the running server, as the line says.
      const added = await runQmd(['collection', 'add', m.notes, '--name', 'notes'], m.env);
      expect(added.code, added.stderr).toBe(0);

      const found = await client.callTool({ name: 'query', arguments: { query: 'sourdough starter' } });
      expect(found.isError, textOf(found)).toBeFalsy();
      expect((found.structuredContent as { results: Array<{ file: string }> }).results[0]?.file).toBe('notes/bread.md');
      const read = await client.callTool({ name: 'get', arguments: { file: 'notes/wal.md' } });
      expect(textOf(read)).toContain('1: # WAL');
      const both = await client.callTool({ name: 'multi_get', arguments: { pattern: 'notes/*.md' } });
      expect((both.structuredContent as { documents: unknown[] }).documents).toHaveLength(2);
      const after = await client.callTool({ name: 'status', arguments: {} });
      expect(after.structuredContent).toMatchObject({ documents: 2, collections: [{ name: 'notes', documents: 2 }] });

      const exit = await served.leave();
      left = true;
      expect(exit, served.log()).toEqual({ code: 0, signal: null });
    } finally {
      if (!left) served.kill();
      if (mode === '--shared') {
        const stopped = await runQmd(['mcp', 'stop', '--shared', '--all'], m.env);
        expect(stopped.code, stopped.stderr).toBe(0);
        await eventually(() => sharedServerPids(m.index).length === 0, 'the shared server gone');
      }
    }
  });
});

describe('an index named but not there yet', () => {
  it('in a folder that exists: served the same way, and the folder stays empty', async () => {
    const m = freshMachine();
    const folder = join(m.home, 'indexes');
    mkdirSync(folder);
    const index = join(folder, 'mine.sqlite');
    const p = spawnMcp({ ...m.env, QMD_INDEX: index }, [], { keepStdout: false });
    const transport = new ChildTransport(p.child);
    try {
      const client = new Client({ name: 'first-run', version: '1.0.0' });
      await client.connect(transport);
      const status = await client.callTool({ name: 'status', arguments: {} });
      expect(textOf(status).split('\n')[0]).toBe(`No index yet at ${index}: qmd collection add DIR`);
      expect(readdirSync(folder)).toEqual([]);
      await transport.close();
      expect(await waitForExit(p)).toEqual({ code: 0, signal: null });
      expect(readdirSync(folder)).toEqual([]);
    } finally {
      p.kill();
    }
  });
});

describe('the peer’s INDEX_PATH, its folder not made yet', () => {
  it('is served as the default is (the peer makes its folders), and the first collection add makes them', async () => {
    const m = freshMachine();
    const index = join(m.home, 'peer', 'deep', 'index.sqlite');
    const env = { ...m.env, INDEX_PATH: index };
    const p = spawnMcp(env, [], { keepStdout: false });
    const transport = new ChildTransport(p.child);
    try {
      const client = new Client({ name: 'first-run', version: '1.0.0' });
      await client.connect(transport);
      expect(textOf(await client.callTool({ name: 'status', arguments: {} })).split('\n')[0]).toBe(
        `No index yet at ${index}: qmd collection add DIR`,
      );
      expect(existsSync(join(m.home, 'peer'))).toBe(false);
      const added = await runQmd(['collection', 'add', m.notes, '--name', 'notes'], env);
      expect(added.code, added.stderr).toBe(0);
      const found = await client.callTool({ name: 'query', arguments: { query: 'sourdough' } });
      expect(textOf(found)).toContain('notes/bread.md');
      await transport.close();
      expect(await waitForExit(p)).toEqual({ code: 0, signal: null });
    } finally {
      p.kill();
    }
  });
});

describe('a mistyped index path (its folder does not exist either)', () => {
  const cases: ReadonlyArray<{ how: string; args: string[]; env?: (typo: string) => Record<string, string> }> = [
    { how: 'stdio, --index', args: ['mcp'] },
    { how: 'stdio, QMD_INDEX', args: ['mcp'], env: (typo) => ({ QMD_INDEX: typo }) },
    { how: '--http, --index', args: ['mcp', '--http', '--port', '0'] },
    {
      how: '--http --daemon, QMD_INDEX',
      args: ['mcp', '--http', '--daemon', '--port', '0'],
      env: (typo) => ({ QMD_INDEX: typo }),
    },
  ];

  it.each(cases)('$how: exit 1 with its one line at once, nothing made', async ({ args, env }) => {
    const m = freshMachine();
    const typo = join(m.home, 'no-such-folder', 'index.sqlite');
    const argv = env === undefined ? ['--index', typo, ...args] : args;
    const p = spawnProcess(process.execPath, [QMD_BIN, ...argv], { env: { ...m.env, ...env?.(typo) } });
    const exit = await waitForExit(p);
    await p.closed;
    expect(exit).toEqual({ code: 1, signal: null });
    expect(p.stderr()).toBe(
      `qmd: No index at ${typo}: make one with qmd collection add DIR, or point --index or QMD_INDEX at yours\n`,
    );
    expect(p.stdout()).toBe('');
    expect(existsSync(dirname(typo))).toBe(false);
  });

  it('--shared: the client is refused with that line and the relay exits 1; nothing made', async () => {
    const m = freshMachine();
    const typo = join(m.home, 'no-such-folder', 'index.sqlite');
    const p = spawnProcess(process.execPath, [QMD_BIN, '--index', typo, 'mcp', '--shared'], { env: m.env });
    try {
      const client = new Client({ name: 'first-run', version: '1.0.0' });
      await expect(client.connect(new ChildTransport(p.child))).rejects.toThrow(`No index at ${typo}`);
      expect(await waitForExit(p)).toEqual({ code: 1, signal: null });
      expect(existsSync(dirname(typo))).toBe(false);
    } finally {
      p.kill();
    }
  });
});
