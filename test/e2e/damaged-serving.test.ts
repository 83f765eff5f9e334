/**
 * A damaged index over MCP, in every mode of `qmd mcp` (stdio, `--shared` through its relay,
 * `--http`, `--daemon`) × a small index and a large one (past the 16 MiB that quick_check reads
 * through), against the built binary. Whatever the mode and the size, the client hears
 * INDEX_CORRUPT's words, the server says its one line and leaves with exit 1; nothing but
 * JSON-RPC reaches a stdio client's stdout. Where it is found (docs/design.md §6):
 *
 * - small, one page of the notes' text damaged: quick_check, at open for the long-lived
 *   servers (`--shared`'s, `--http`, the daemon: they refuse to start), after the handshake
 *   over stdio (its `initialize` is answered, then it leaves);
 * - large, page 2 zeroed (the `collections` table's root): every server reads the collections
 *   as it opens (its instructions list them), so all refuse to start. Before, stdio answered
 *   `initialize` with -32603 "Internal server error" and exited 0;
 * - large, every page of the notes' text damaged: nothing at open sees it; the `get` that
 *   reads a note meets it, is answered with it, and the server leaves.
 *
 * The large index is grown in SQL (`growIndex`), not indexed through the CLI.
 */
import { copyFileSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { processExists } from '../../src/lifecycle/parent.js';
import { daemonLogPath } from '../../src/serve/daemon/pidfile.js';
import { damagePage, growIndex, pagesOf } from '../support/damage.js';
import { QMD_BIN, qmdEnv, runQmd, tempWorkspace, textOf } from '../support/qmd.js';
import { spawnProcess, waitForExit } from '../support/spawn.js';
import { connectClient, startHttpServer } from './fixtures/http-server.js';
import { eventually, serverLog, sharedServerPids } from './fixtures/shared.js';

const ws = tempWorkspace({});
let small = '';
let large = '';

function env(index: string): NodeJS.ProcessEnv {
  // A runtime folder per index: each damaged copy gets its own shared server.
  const runtime = join(ws.dir, `run-${index.replace(/\W+/g, '-').slice(-40)}`);
  mkdirSync(runtime, { recursive: true, mode: 0o700 });
  return qmdEnv(index, { XDG_RUNTIME_DIR: runtime, QMD_SHARED_IDLE_MS: '300' });
}

async function indexNotes(name: string, count: number): Promise<string> {
  const notes = join(ws.dir, `${name}-notes`);
  mkdirSync(notes, { recursive: true });
  for (let i = 0; i < count; i++) writeFileSync(join(notes, `n${i}.md`), `# Note ${i}\n\ncheckpoint page ${i}\n`);
  const index = join(ws.dir, `${name}.sqlite`);
  const added = await runQmd(['collection', 'add', notes, '--name', 'notes'], env(index));
  expect(added.code, added.stderr).toBe(0);
  return index;
}

const DAMAGE = {
  'small: one page of the notes’ text': (healthy: () => string) => () => {
    const file = copy(healthy(), 'small-text');
    const pages = pagesOf(file, 'content');
    damagePage(file, pages[Math.floor(pages.length / 2)]!, 'random');
    return file;
  },
  'large: page 2 zeroed (the collections’ root)': (healthy: () => string) => () => {
    const file = copy(healthy(), 'large-page2');
    expect(pagesOf(file, 'collections')[0]).toBe(2);
    damagePage(file, 2);
    return file;
  },
  'large: every page of the notes’ text': (healthy: () => string) => () => {
    const file = copy(healthy(), 'large-text');
    for (const page of pagesOf(file, 'content')) damagePage(file, page, 'random');
    return file;
  },
};
type Damage = keyof typeof DAMAGE;
const KINDS: [Damage, () => string][] = [
  ['small: one page of the notes’ text', DAMAGE['small: one page of the notes’ text'](() => small)],
  ['large: page 2 zeroed (the collections’ root)', DAMAGE['large: page 2 zeroed (the collections’ root)'](() => large)],
  ['large: every page of the notes’ text', DAMAGE['large: every page of the notes’ text'](() => large)],
];
/** Where the damage is met: at the start (no client is ever served), or by the `get`. */
const atStart = (kind: Damage) => kind.startsWith('large: page 2');
const byTheGet = (kind: Damage) => kind === 'large: every page of the notes’ text';

let copies = 0;
function copy(healthy: string, label: string): string {
  const file = join(ws.dir, `${label}-${++copies}.sqlite`);
  copyFileSync(healthy, file);
  return file;
}

const DAMAGED =
  /^qmd: The index \S+ is damaged \(.+\); move it away and add the collections again \(qmd collection add DIR\)$/;
const qmdLine = (text: string) => text.split('\n').find((line) => line.startsWith('qmd:')) ?? '';

const message = (body: object) => `${JSON.stringify({ jsonrpc: '2.0', ...body })}\n`;
const INITIALIZE = message({
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'damaged', version: '1' } },
});
const INITIALIZED = message({ method: 'notifications/initialized' });
const GET = message({ id: 2, method: 'tools/call', params: { name: 'get', arguments: { file: 'notes/n1.md' } } });

interface Reply {
  id?: number;
  result?: { isError?: boolean; content?: { text?: string }[] };
  error?: { code: number; message: string; data?: unknown };
}

/**
 * A client over a pipe (stdio, or a relay): `initialize`; if answered, `initialized` and a `get`.
 * Stdin stays open: a server that learns its index is damaged must leave by itself.
 */
async function pipeClient(args: string[], index: string) {
  const p = spawnProcess(process.execPath, [QMD_BIN, 'mcp', ...args], { env: env(index) });
  const replies = () =>
    p
      .stdout()
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as Reply);
  try {
    p.child.stdin?.write(INITIALIZE);
    const init = await p
      .waitFor(() => replies().find((r) => r.id === 1), 'the initialize reply')
      .catch(() => undefined);
    let get: Reply | undefined;
    if (init?.result !== undefined) {
      p.child.stdin?.write(INITIALIZED + GET);
      get = await p.waitFor(() => replies().find((r) => r.id === 2), 'the get reply').catch(() => undefined);
    }
    const exit = await waitForExit(p);
    await p.closed;
    return { init, get, code: exit.code, line: qmdLine(p.stderr()), stderr: p.stderr() };
  } finally {
    p.kill();
  }
}

const replyText = (reply: Reply | undefined) =>
  reply?.error?.message ?? reply?.result?.content?.map((block) => block.text ?? '').join('\n') ?? '';

afterAll(() => ws.cleanup());

beforeAll(async () => {
  small = await indexNotes('small', 40);
  large = await indexNotes('large', 3);
  // Past QUICK_CHECK_SMALL_BYTES (16 MiB): no server reads it through as it starts.
  growIndex(large, { collection: 'notes', count: 180, kib: 100 });
  expect(statSync(large).size).toBeGreaterThan(16 * 1024 * 1024);
}, 300_000);

describe.each(KINDS)('a damaged index (%s): every mode says INDEX_CORRUPT and exits 1', (kind, damaged) => {
  it('stdio', async () => {
    const file = damaged();
    const seen = await pipeClient([], file);
    expect(seen.code, seen.stderr).toBe(1);
    expect(seen.line, seen.stderr).toMatch(DAMAGED);
    expect(seen.line).toContain(file);
    if (atStart(kind)) {
      expect(seen.init, 'no reply: the start was refused').toBeUndefined();
      return;
    }
    expect(seen.init?.result, 'initialize is answered: the check comes after it').toBeDefined();
    expect(seen.stderr).toContain('Shutting down (the index is damaged)...');
    if (byTheGet(kind)) {
      expect(seen.get?.result?.isError, JSON.stringify(seen.get)).toBe(true);
      expect(replyText(seen.get)).toBe(seen.line.slice('qmd: '.length));
    } else if (seen.get !== undefined) {
      // After the handshake the check runs; a get read before the server left meets its verdict.
      expect(replyText(seen.get)).toContain('is damaged');
    }
  });

  it('--shared (the relay, and the shared server behind it)', async () => {
    const file = damaged();
    const seen = await pipeClient(['--shared'], file);
    expect(seen.code, seen.stderr).toBe(1);
    expect(seen.line, seen.stderr).toMatch(/^qmd: .*The index \S+ is damaged \(/);
    if (byTheGet(kind)) {
      expect(seen.init?.result).toBeDefined();
      // The tool's answer, or the relay's for it (the server's notice came first): the same words.
      expect(replyText(seen.get), JSON.stringify(seen.get)).toContain(`The index ${file} is damaged (`);
      if (seen.get?.error !== undefined) expect(seen.get.error.data).toEqual({ code: 'INDEX_CORRUPT' });
      await eventually(() => sharedServerPids(file).length === 0, 'the shared server gone');
      expect(serverLog(file, env(file))).toMatch(/^qmd: The index \S+ is damaged \(/m);
      expect(serverLog(file, env(file))).toMatch(/Shutdown complete in .*the index is damaged: .*exit 1/);
    } else {
      // The shared server refused to start: its reason, with its code, as the answer.
      expect(seen.init?.error?.message).toMatch(/the shared server could not start: The index \S+ is damaged \(/);
      expect(seen.init?.error?.data).toEqual({ code: 'INDEX_CORRUPT' });
    }
  });

  it('--http', async () => {
    const file = damaged();
    if (!byTheGet(kind)) {
      const p = spawnProcess(process.execPath, [QMD_BIN, 'mcp', '--http', '--port', '0', '--no-auth'], {
        env: env(file),
      });
      try {
        const exit = await waitForExit(p);
        await p.closed;
        expect(exit.code, p.stderr()).toBe(1);
        expect(qmdLine(p.stderr())).toMatch(DAMAGED);
        expect(p.stderr()).not.toContain('Listening on');
      } finally {
        p.kill();
      }
      return;
    }
    const server = await startHttpServer(env(file));
    try {
      const { client } = await connectClient(server.url, 'damaged-http');
      const result = (await client.callTool({ name: 'get', arguments: { file: 'notes/n1.md' } })) as {
        isError?: boolean;
      };
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(/^The index \S+ is damaged \(/);
      const exit = await waitForExit(server.p);
      await server.p.closed;
      expect(exit.code, server.p.stderr()).toBe(1);
      expect(qmdLine(server.p.stderr())).toBe(`qmd: ${textOf(result)}`);
      await client.close().catch(() => {});
    } finally {
      server.p.kill();
    }
  });

  it('--daemon', async () => {
    const file = damaged();
    const started = await runQmd(['mcp', '--http', '--daemon', '--port', '0', '--no-auth'], env(file));
    if (!byTheGet(kind)) {
      expect(started.code, started.stderr).toBe(1);
      expect(started.stdout).toBe('');
      // The daemon's own line, as the parent read it from the daemon's log.
      expect(qmdLine(started.stderr)).toMatch(/^qmd: the daemon exited with code 1: The index \S+ is damaged \(/);
      return;
    }
    expect(started.code, started.stderr).toBe(0);
    const [, url, pid] = /Serving (\S+) \(pid (\d+)\)/.exec(started.stdout) ?? [];
    try {
      const { client } = await connectClient(new URL(url ?? ''), 'damaged-daemon');
      const result = (await client.callTool({ name: 'get', arguments: { file: 'notes/n1.md' } })) as {
        isError?: boolean;
      };
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(/^The index \S+ is damaged \(/);
      await eventually(() => !processExists(Number(pid)), 'the daemon gone');
      const log = readFileSync(daemonLogPath(file), 'utf8');
      expect(log).toContain(`qmd: ${textOf(result)}`);
      expect(log).toMatch(/Shutdown complete in .*the index is damaged: .*exit 1/);
      await client.close().catch(() => {});
    } finally {
      if (pid !== undefined && existsSync(`/proc/${pid}`)) process.kill(Number(pid), 'SIGKILL');
    }
  });
});

describe('the deferred check (stdio, a small index) waits for the handshake', () => {
  it('a client that only lists the tools gets them, then the server finds the damage by itself and leaves with exit 1', async () => {
    const file = KINDS[0]![1]();
    const p = spawnProcess(process.execPath, [QMD_BIN, 'mcp'], { env: env(file) });
    try {
      const replies = () =>
        p
          .stdout()
          .split('\n')
          .filter((line) => line !== '')
          .map((line) => JSON.parse(line) as Reply & { result?: { tools?: { name: string }[] } });
      p.child.stdin?.write(INITIALIZE);
      await p.waitFor(() => replies().find((r) => r.id === 1), 'the initialize reply');
      p.child.stdin?.write(INITIALIZED + message({ id: 2, method: 'tools/list' }));
      const list = await p.waitFor(() => replies().find((r) => r.id === 2), 'the tools/list reply');
      // When the check runs is test/serve/served-reader.test.ts's (a fake clock); here, that a
      // client that lists its tools and reads nothing still has the damage found, and says so.
      expect(list.result?.tools?.map((tool) => tool.name).sort()).toEqual(['get', 'multi_get', 'query', 'status']);
      // No read follows; stdin stays open: the check runs once the handshake is quiet.
      const exit = await waitForExit(p);
      expect(exit.code, p.stderr()).toBe(1);
      expect(qmdLine(p.stderr())).toMatch(DAMAGED);
      expect(p.stderr()).toContain('Shutting down (the index is damaged)...');
    } finally {
      p.kill();
    }
  });
});
