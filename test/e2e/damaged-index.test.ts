/**
 * One answer for a damaged index (issue 34), against the built binary: every command that
 * reads × every kind of damage. Each row is one behaviour: every command exits 1 with the same
 * one line on stderr (INDEX_CORRUPT's words, naming the file), nothing on stdout, and `qmd mcp
 * --shared` hands the same words to its client as a JSON-RPC error whose `data.code` is
 * INDEX_CORRUPT. Before, a damaged page that a search did not read let `search`, `query` and
 * `get` answer, exit 0, nothing on stderr.
 *
 * How it is found (docs/design.md §6, "a damaged index"): an index of at most 16 MiB is read
 * through by quick_check when any command opens it (`qmd mcp` over stdio: right after the
 * handshake, so its `initialize` is answered and then it leaves); a larger one is not (that
 * would be seconds at every search), and its damage is met by the statement that reads it,
 * SQLITE_CORRUPT or SQLITE_NOTADB mapped to the same error. The large rows use damage every
 * command meets. Every `qmd mcp` mode × a small and a large index: damaged-serving.test.ts.
 * The table is printed and written to $TMPDIR/qmd-damaged-index.md.
 */
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  copyFileSync,
  mkdirSync,
  openSync,
  statSync,
  truncateSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Sqlite } from '../../src/store/sqlite.js';
import { QMD_BIN, qmdEnv, runQmd, tempWorkspace, textOf } from '../support/qmd.js';
import { sdkSession } from '../support/sdk-session.js';
import { spawnProcess, waitForExit } from '../support/spawn.js';

const READERS = [
  'status',
  'search',
  'query',
  'vsearch',
  'get',
  'multi-get',
  'collection list',
  'context list',
  'mcp (stdio)',
  'mcp --http',
  'mcp --shared',
] as const;
type Reader = (typeof READERS)[number];

const ARGS: Record<Exclude<Reader, `mcp${string}`>, string[]> = {
  status: ['status'],
  search: ['search', 'checkpoint'],
  query: ['query', 'checkpoint'],
  vsearch: ['vsearch', 'checkpoint'],
  get: ['get', 'notes/n1.md'],
  'multi-get': ['multi-get', 'notes/n1*.md'],
  'collection list': ['collection', 'list'],
  'context list': ['context', 'list'],
};

interface Cell {
  code: number | null;
  stdout: string;
  /** The first `qmd:` line on stderr, or the JSON-RPC error a relay's client got. */
  said: string;
  data?: unknown;
}

const ws = tempWorkspace({});
const runtime = join(ws.dir, 'runtime');
const table = new Map<string, Map<Reader, Cell>>();

function env(index: string): NodeJS.ProcessEnv {
  return qmdEnv(index, { XDG_RUNTIME_DIR: runtime, QMD_SHARED_IDLE_MS: '300' });
}

/** `count` notes of `words` words each, indexed by the binary as `notes`. */
async function makeIndex(name: string, count: number, words: number): Promise<string> {
  const notes = join(ws.dir, `${name}-notes`);
  mkdirSync(notes, { recursive: true });
  const vocab = 'wal checkpoint page index note sqlite vector cell journal lock btree header'.split(' ');
  for (let i = 0; i < count; i++) {
    const body = Array.from({ length: words }, (_, w) => vocab[(i * 7 + w * 13) % vocab.length]).join(' ');
    writeFileSync(join(notes, `n${i}.md`), `# Note ${i}\n\n${body}\n`);
  }
  const index = join(ws.dir, `${name}.sqlite`);
  const added = await runQmd(['collection', 'add', notes, '--name', 'notes'], env(index));
  expect(added.code, added.stderr).toBe(0);
  return index;
}

const pageAt = (size: number, fraction: number) => Math.floor((size * fraction) / 4096) * 4096;
const overwrite = (file: string, bytes: Buffer, at: number) => {
  const fd = openSync(file, 'r+');
  writeSync(fd, bytes, 0, bytes.length, at);
  closeSync(fd);
};

/** Kinds of damage, each applied to a fresh copy of a healthy index. */
const DAMAGE: Record<string, (file: string) => void> = {
  '8 KiB of random bytes mid-file': (f) => overwrite(f, randomBytes(8192), Math.floor(statSync(f).size / 2)),
  'one page of random bytes mid-file': (f) => overwrite(f, randomBytes(4096), pageAt(statSync(f).size, 0.5)),
  'the last page zeroed': (f) => overwrite(f, Buffer.alloc(4096), statSync(f).size - 4096),
  'every page but the first random': (f) => {
    const size = statSync(f).size;
    overwrite(f, randomBytes(size - 4096), 4096);
  },
  'the header overwritten (not a database)': (f) => overwrite(f, Buffer.alloc(100), 0),
  'truncated to half': (f) => truncateSync(f, pageAt(statSync(f).size, 0.5)),
};

const INITIALIZE = `${JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'damaged', version: '1' } },
})}\n`;

const firstQmdLine = (stderr: string) => stderr.split('\n').find((line) => line.startsWith('qmd:')) ?? stderr.trim();

const isJsonRpc = (line: string): boolean => {
  try {
    return (JSON.parse(line) as { jsonrpc?: unknown }).jsonrpc === '2.0';
  } catch {
    return false;
  }
};

const INITIALIZED_AND_GET = `${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n${JSON.stringify(
  { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'get', arguments: { file: 'notes/n1.md' } } },
)}\n`;

/**
 * A client's view of `qmd mcp [args]`: it writes `initialize`, then reads the reply or the exit.
 * Answered (stdio checks a small index after the handshake: docs/design.md §6), it completes
 * the handshake and asks for a note, and waits, stdin open, for the server to leave by itself:
 * the cell is then its one line. Only what is not JSON-RPC counts as written to stdout.
 */
async function mcp(index: string, args: string[]): Promise<Cell> {
  const p = spawnProcess(process.execPath, [QMD_BIN, 'mcp', ...args], { env: env(index) });
  const notProtocol = () =>
    p
      .stdout()
      .split('\n')
      .filter((line) => line !== '' && !isJsonRpc(line))
      .join('\n');
  try {
    p.child.stdin?.write(INITIALIZE);
    const replied = await p
      .waitFor(() => (p.stdout().includes('\n') ? true : undefined), 'a reply or the exit')
      .catch(() => false);
    if (!replied) {
      p.child.stdin?.end();
      const exit = await p.closed;
      return { code: exit.code, stdout: p.stdout(), said: firstQmdLine(p.stderr()) };
    }
    const reply = JSON.parse(p.stdout().split('\n')[0] ?? '{}') as {
      error?: { message: string; data?: unknown };
    };
    if (reply.error !== undefined) {
      p.child.stdin?.end();
      const exit = await p.closed;
      return { code: exit.code, stdout: notProtocol(), said: reply.error.message, data: reply.error.data };
    }
    p.child.stdin?.write(INITIALIZED_AND_GET);
    const exit = await waitForExit(p);
    await p.closed;
    return { code: exit.code, stdout: notProtocol(), said: firstQmdLine(p.stderr()) };
  } finally {
    p.kill();
  }
}

async function http(index: string): Promise<Cell> {
  const p = spawnProcess(process.execPath, [QMD_BIN, 'mcp', '--http', '--port', '0', '--no-auth'], {
    env: env(index),
  });
  try {
    const listening = await p.waitForStderr(/Listening on http/).then(
      () => true,
      () => false,
    );
    if (listening) p.child.kill('SIGTERM');
    const exit = await p.closed;
    return { code: exit.code, stdout: p.stdout(), said: listening ? 'served' : firstQmdLine(p.stderr()) };
  } finally {
    p.kill();
  }
}

async function read(reader: Reader, index: string): Promise<Cell> {
  if (reader === 'mcp (stdio)') return mcp(index, []);
  if (reader === 'mcp --shared') return mcp(index, ['--shared']);
  if (reader === 'mcp --http') return http(index);
  const run = await runQmd(ARGS[reader], env(index));
  return { code: run.code, stdout: run.stdout, said: firstQmdLine(run.stderr) };
}

/** Runs every reader on a damaged copy of `healthy`, and checks the row has one behaviour. */
async function row(label: string, healthy: string, damage: (file: string) => void): Promise<void> {
  const file = join(ws.dir, `${label.replace(/\W+/g, '-')}.sqlite`);
  copyFileSync(healthy, file);
  damage(file);
  const cells = new Map<Reader, Cell>();
  table.set(label, cells);
  for (const reader of READERS) cells.set(reader, await read(reader, file));
  const line = cells.get('status')?.said ?? '';
  expect(line).toMatch(new RegExp(`^qmd: The index ${file.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} is damaged \\(`));
  expect(line).toContain('move it away and add the collections again (qmd collection add DIR)');
  for (const [reader, cell] of cells) {
    expect(cell.code, `${reader}: ${cell.said}`).toBe(1);
    expect(cell.stdout, `${reader} wrote to stdout`).toBe('');
    if (reader === 'mcp --shared') {
      // Through the relay: the server's start failure, in the same words, with its code.
      expect(cell.said, reader).toContain(line.slice('qmd: '.length));
      expect(cell.data, reader).toEqual({ code: 'INDEX_CORRUPT' });
    } else {
      expect(cell.said, reader).toBe(line);
    }
  }
}

let small = '';
let large = '';

beforeAll(async () => {
  mkdirSync(runtime, { recursive: true, mode: 0o700 });
  small = await makeIndex('small', 40, 200);
  // Past QUICK_CHECK_SMALL_BYTES (16 MiB): no command reads it through on open.
  large = await makeIndex('large', 160, 20_000);
  expect(statSync(large).size).toBeGreaterThan(16 * 1024 * 1024);
}, 300_000);

afterAll(() => {
  // Each cell: the exit code, and "same" when it said the row's line (`qmd status`'s).
  const lines = [
    `| damage | the line (\`qmd status\`) | ${READERS.join(' | ')} |`,
    `|---|---|${READERS.map(() => '---').join('|')}|`,
    ...[...table].map(([label, cells]) => {
      const line = cells.get('status')?.said ?? '';
      const cell = (r: Reader) => {
        const c = cells.get(r);
        if (c === undefined) return 'n/a';
        const same = c.said === line || (r === 'mcp --shared' && c.said.includes(line.slice('qmd: '.length)));
        return `exit ${c.code}, ${same ? 'same' : c.said.replaceAll('|', '\\|')}${c.data ? ` ${JSON.stringify(c.data)}` : ''}`;
      };
      return `| ${label} | ${line.replaceAll('|', '\\|')} | ${READERS.map(cell).join(' | ')} |`;
    }),
  ];
  writeFileSync(join(tmpdir(), 'qmd-damaged-index.md'), `${lines.join('\n')}\n`);
  console.log(lines.join('\n'));
  ws.cleanup();
});

describe('a damaged index: every reading command gives the same one line and exit 1', () => {
  it.each(Object.entries(DAMAGE))('a small index (found by quick_check on open): %s', async (label, damage) => {
    await row(`small index: ${label}`, small, damage);
  });

  it.each([
    ['the header overwritten (not a database)', DAMAGE['the header overwritten (not a database)']!],
    ['truncated to half', DAMAGE['truncated to half']!],
  ])('a large index (found by the statement that meets it): %s', async (label, damage) => {
    await row(`large index: ${label}`, large, damage);
  });

  it('a large index with one page damaged mid-file: qmd status, which reads it all, refuses in the same words', async () => {
    // A search that does not read that page answers: finding it would cost every command a
    // read of the whole file (docs/design.md §6); `qmd status` and every writer pay that read.
    const file = join(ws.dir, 'large-mid.sqlite');
    copyFileSync(large, file);
    DAMAGE['one page of random bytes mid-file']!(file);
    const status = await runQmd(['status'], env(file));
    expect(status.code).toBe(1);
    expect(firstQmdLine(status.stderr)).toMatch(/^qmd: The index .* is damaged \(/);
  });
});

describe("a note's stored text changed under qmd (integrity_check passes it): get and multi-get say the index is damaged", () => {
  /** A copy of the small index with one byte of notes/n1.md's stored text changed, as a flipped bit would. */
  function flipped(): string {
    const file = join(ws.dir, 'flipped.sqlite');
    copyFileSync(small, file);
    const db = new Sqlite(file);
    try {
      db.exec(
        "UPDATE content SET body = replace(body, 'Note 1', 'Note 3') WHERE hash = (SELECT hash FROM documents WHERE path = 'n1.md')",
      );
      expect(db.value('SELECT changes()')).toBe(1);
      expect(db.pragmaValue('integrity_check')).toBe('ok');
    } finally {
      db.close();
    }
    return file;
  }

  it('CLI: exit 1, the damaged-index line naming the note, nothing on stdout; other notes are served', async () => {
    const file = flipped();
    const damaged = new RegExp(
      `^qmd: The index ${file.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} is damaged \\(the stored text of notes/n1.md does not match its content hash [0-9a-f]{12}…\\); move it away and add the collections again \\(qmd collection add DIR\\)$`,
    );
    for (const args of [
      ['get', 'notes/n1.md'],
      ['get', 'notes/n1.md:2:1'],
      ['multi-get', 'notes/n1*.md'],
      ['multi-get', 'notes/n2.md,notes/n1.md'],
    ]) {
      const run = await runQmd(args, env(file));
      expect(run.code, args.join(' ')).toBe(1);
      expect(run.stdout, args.join(' ')).toBe('');
      expect(firstQmdLine(run.stderr), args.join(' ')).toMatch(damaged);
    }
    const other = await runQmd(['get', 'notes/n2.md'], env(file));
    expect(other.code, other.stderr).toBe(0);
    expect(other.stdout).toContain('# Note 2');
  });

  it('MCP: get and multi_get answer with an error result in the same words', async () => {
    const file = flipped();
    const session = await sdkSession(env(file), 'flipped');
    try {
      for (const [name, args] of [
        ['get', { file: 'notes/n1.md' }],
        ['multi_get', { pattern: 'notes/n1*.md' }],
      ] as const) {
        const result = (await session.client.callTool({ name, arguments: args })) as { isError?: boolean };
        expect(result.isError, name).toBe(true);
        expect(textOf(result), name).toContain(
          `The index ${file} is damaged (the stored text of notes/n1.md does not match its content hash`,
        );
      }
      const fine = (await session.client.callTool({ name: 'get', arguments: { file: 'notes/n2.md' } })) as {
        isError?: boolean;
      };
      expect(fine.isError).toBeFalsy();
    } finally {
      await session.client.close();
      session.kill();
    }
  });
});
