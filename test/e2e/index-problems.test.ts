/**
 * One vocabulary for index problems, against the built binary: every problem
 * with the index file (missing, damaged, disk full, unreadable, read-only folder, locked) on
 * every surface (status, search, get, qmd mcp over stdio, --http and --shared, collection add,
 * update, embed, context add). Each cell is what a user sees: the exit code and the first
 * `qmd:` line, or "serves". The table is printed and written to $TMPDIR/qmd-index-problems.md.
 *
 * Rows that need another user (unreadable, read-only folder: root passes every permission
 * check) run the commands as a throwaway account the test creates and removes, with Node and
 * the build where that account can reach them (`test/support/other-user.ts`: in place, or hard
 * links when the checkout lives under a folder others cannot enter); a full disk is a tiny
 * tmpfs mounted for the test. Both need root, and are skipped with the reason without it.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  appendFileSync,
  chmodSync,
  chownSync,
  closeSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tinyModelPath } from '../support/gguf.js';
import { reachableByOthers, ThrowawayUser } from '../support/other-user.js';
import { QMD_BIN, qmdEnv } from '../support/qmd.js';
import { type Spawned, spawnProcess } from '../support/spawn.js';

const SURFACES = [
  'status',
  'search',
  'get',
  'mcp stdio',
  'mcp --http',
  'mcp --shared',
  'collection add',
  'update',
  'embed',
  'context add',
] as const;
type Surface = (typeof SURFACES)[number];
const WRITERS: readonly Surface[] = ['collection add', 'update', 'embed', 'context add'];

interface Cell {
  code: number | null;
  /** The first `qmd:` line on stderr, a JSON-RPC error's message and data, or `serves`. */
  said: string;
}

const isRoot = process.getuid?.() === 0;
/** Node, qmd and a folder another user can reach; or why the rows as another user are skipped. */
const reach = reachableByOthers();
const asOther = 'skip' in reach ? undefined : reach;
// Every place the throwaway account is pointed at lives under a folder it can enter.
const root = mkdtempSync(join(asOther?.scratch ?? tmpdir(), 'qmd-problems-'));
chmodSync(root, 0o755);
const hasSqlite3 = spawnSync('sqlite3', ['-version']).status === 0;
let user: ThrowawayUser | undefined;
let uid = -1;
let model = '';
const table = new Map<string, Map<Surface, Cell>>();

beforeAll(() => {
  // In the root: the throwaway account embeds with it too.
  model = join(root, 'tiny-llama-embed.gguf');
  copyFileSync(tinyModelPath(), model);
  chmodSync(model, 0o644);
  if (asOther !== undefined) {
    user = ThrowawayUser.create('qmdp');
    uid = user.uid;
  }
});

afterAll(() => {
  user?.remove();
  const lines = [
    `| problem | ${SURFACES.join(' | ')} |`,
    `|---|${SURFACES.map(() => '---').join('|')}|`,
    ...[...table].map(
      ([problem, cells]) =>
        `| ${problem} | ${SURFACES.map((s) => {
          const cell = cells.get(s);
          return cell === undefined ? 'n/a' : `exit ${cell.code}: ${cell.said.replaceAll('|', '\\|')}`;
        }).join(' | ')} |`,
    ),
  ];
  writeFileSync(join(tmpdir(), 'qmd-index-problems.md'), `${lines.join('\n')}\n`);
  console.log(lines.join('\n'));
  spawnSync('umount', [join(root, 'full', 'mnt')]);
  rmSync(root, { recursive: true, force: true });
});

interface Place {
  /** The index the surfaces are pointed at. */
  index: string;
  /** A folder of notes that is a collection of the index (for update), and one that is not. */
  notes: string;
  fresh: string;
  /** Run as this account (unreadable, read-only folder), else as the test's own user. */
  asUser?: boolean;
}

function notesIn(dir: string, count = 3): string {
  mkdirSync(dir, { recursive: true });
  for (let i = 0; i < count; i++) writeFileSync(join(dir, `n${i}.md`), `# Note ${i}\n\nwal checkpoint note ${i}\n`);
  return dir;
}

/** A healthy index of `notes`, made by the binary as a user would. */
async function indexed(index: string, notes: string): Promise<void> {
  const run = await qmd(['collection', 'add', notes, '--name', 'notes'], { index });
  expect(run.code, run.stderr).toBe(0);
}

function envFor(place: { index: string; asUser?: boolean }): NodeJS.ProcessEnv {
  const runtime = join(root, 'runtime');
  mkdirSync(runtime, { recursive: true, mode: 0o700 });
  const cache = join(root, place.asUser ? 'user-cache' : 'cache');
  mkdirSync(cache, { recursive: true });
  if (place.asUser) chownSync(cache, uid, uid);
  return qmdEnv(place.index, {
    XDG_CACHE_HOME: cache,
    // The shared server's socket and log: this test's own, and gone soon after its last client.
    ...(place.asUser ? {} : { XDG_RUNTIME_DIR: runtime }),
    QMD_SHARED_IDLE_MS: '300',
    QMD_EMBED_THREADS: '1',
  });
}

function spawnQmd(args: string[], place: { index: string; asUser?: boolean }): Spawned {
  const env = envFor(place);
  if (!place.asUser) return spawnProcess(process.execPath, [QMD_BIN, ...args], { env });
  if (user === undefined || asOther === undefined) throw new Error('no throwaway account here');
  return spawnProcess(...user.argv(asOther.node, [asOther.qmd, ...args]), { env });
}

async function qmd(args: string[], place: { index: string; asUser?: boolean }) {
  const p = spawnQmd(args, place);
  p.child.stdin?.end();
  const exit = await p.closed;
  return { code: exit.code, stdout: p.stdout(), stderr: p.stderr() };
}

function firstQmdLine(stderr: string): string {
  return (
    stderr.split('\n').find((line) => line.startsWith('qmd:')) ?? stderr.split('\n').find((l) => l.trim() !== '') ?? ''
  );
}

const INITIALIZE = `${JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'problems', version: '1' } },
})}\n`;

/** A stdio client's view: the reply to initialize (or the exit), then the exit after EOF. */
async function mcpStdio(args: string[], place: Place): Promise<Cell> {
  const p = spawnQmd(['mcp', ...args], place);
  try {
    p.child.stdin?.write(INITIALIZE);
    const first = await Promise.race([
      p.closed.then(() => 'exit' as const),
      p
        .waitFor(() => (p.stdout().includes('\n') ? ('reply' as const) : undefined), 'a reply')
        .catch(() => 'exit' as const),
    ]);
    p.child.stdin?.end();
    const exit = await p.closed;
    if (first === 'reply') {
      const reply = JSON.parse(p.stdout().split('\n')[0] ?? '{}') as {
        result?: unknown;
        error?: { code: number; message: string; data?: unknown };
      };
      // Answered, then gone with exit 1: the check after the handshake found damage (its line).
      if (reply.result !== undefined)
        return { code: exit.code, said: exit.code === 0 ? 'serves' : firstQmdLine(p.stderr()) };
      return {
        code: exit.code,
        said: `JSON-RPC ${reply.error?.code} ${reply.error?.message} data=${JSON.stringify(reply.error?.data)}`,
      };
    }
    return { code: exit.code, said: firstQmdLine(p.stderr()) };
  } finally {
    p.kill();
  }
}

async function mcpHttp(place: Place): Promise<Cell> {
  const p = spawnQmd(['mcp', '--http', '--port', '0', '--no-auth'], place);
  try {
    const first = await Promise.race([
      p.closed.then(() => 'exit' as const),
      p.waitForStderr(/Listening on http/).then(
        () => 'listening' as const,
        () => 'exit' as const,
      ),
    ]);
    if (first === 'listening') p.child.kill('SIGTERM');
    const exit = await p.closed;
    return { code: exit.code, said: first === 'listening' ? 'serves' : firstQmdLine(p.stderr()) };
  } finally {
    p.kill();
  }
}

async function surface(s: Surface, place: Place): Promise<Cell> {
  const oneShot = async (args: string[]): Promise<Cell> => {
    const run = await qmd(args, place);
    return { code: run.code, said: run.code === 0 ? 'ok' : firstQmdLine(run.stderr) };
  };
  switch (s) {
    case 'status':
      return oneShot(['status']);
    case 'search':
      return oneShot(['search', 'checkpoint']);
    case 'get':
      return oneShot(['get', 'notes/n1.md']);
    case 'mcp stdio':
      return mcpStdio([], place);
    case 'mcp --shared':
      return mcpStdio(['--shared'], place);
    case 'mcp --http':
      return mcpHttp(place);
    case 'collection add':
      return oneShot(['collection', 'add', place.fresh, '--name', 'fresh']);
    case 'update':
      writeFileSync(join(place.notes, 'n0.md'), `# Note 0\n\nchanged ${randomBytes(4).toString('hex')}\n`);
      return oneShot(['update']);
    case 'embed':
      return oneShot(['embed', '--embed-model', model]);
    case 'context add':
      return oneShot(['context', 'add', 'notes', 'Notes about checkpoints']);
  }
}

async function everySurface(problem: string, place: Place, surfaces: readonly Surface[] = SURFACES) {
  const cells = new Map<Surface, Cell>();
  table.set(problem, cells);
  for (const s of surfaces) cells.set(s, await surface(s, place));
  return cells;
}

function expectRefused(cells: Map<Surface, Cell>, surfaces: readonly Surface[], words: string, file: string) {
  for (const s of surfaces) {
    const cell = cells.get(s);
    expect(cell?.code, `${s}: ${cell?.said}`).toBe(1);
    expect(cell?.said, s).toContain(words);
    expect(cell?.said, s).toContain(file);
  }
}

describe('index problems × surfaces', () => {
  it('missing: every surface but collection add refuses, names the path and says how to make one; nothing is created', async () => {
    const dir = join(root, 'missing');
    const place: Place = {
      index: join(dir, 'typo', 'deep', 'index.sqlite'),
      notes: notesIn(join(dir, 'notes')),
      fresh: notesIn(join(dir, 'fresh')),
    };
    const readsFirst = SURFACES.filter((s) => s !== 'collection add' && s !== 'mcp --shared');
    const cells = await everySurface('missing', place, readsFirst);
    expectRefused(cells, readsFirst, 'No index at', place.index);
    expect(cells.get('status')?.said).toContain('make one with qmd collection add DIR');
    expect(existsSync(join(dir, 'typo')), 'a read made the folders').toBe(false);
    cells.set('mcp --shared', await surface('mcp --shared', place));
    expect(existsSync(join(dir, 'typo')), '--shared made the folders').toBe(false);
    expect(cells.get('mcp --shared')?.said).toContain('data={"code":"INDEX_MISSING"}');
    // The way to make one.
    cells.set('collection add', await surface('collection add', place));
    expect(cells.get('collection add')?.code).toBe(0);
    expect(existsSync(place.index)).toBe(true);
  });

  it('damaged (random bytes over every page but the first): every surface refuses with one line', async () => {
    const dir = join(root, 'damaged');
    const place: Place = {
      index: join(dir, 'index.sqlite'),
      notes: notesIn(join(dir, 'notes')),
      fresh: notesIn(join(dir, 'fresh')),
    };
    await indexed(place.index, place.notes);
    const size = statSync(place.index).size;
    const fd = openSync(place.index, 'r+');
    writeSync(fd, randomBytes(size - 4096), 0, size - 4096, 4096);
    closeSync(fd);
    const cells = await everySurface('damaged', place);
    expectRefused(
      cells,
      SURFACES.filter((s) => s !== 'mcp --shared'),
      'is damaged',
      place.index,
    );
    expect(cells.get('status')?.said).toContain('move it away and add the collections again');
    // Through a relay: the server's start failure reaches the client with its code in `data`.
    const shared = cells.get('mcp --shared');
    expect(shared?.code, shared?.said).toBe(1);
    expect(shared?.said).toContain('is damaged');
    expect(shared?.said).toContain('data={"code":"INDEX_CORRUPT"}');
  });

  it('damaged (one page): every surface refuses, exit 1, even a search that would not read the page (quick_check on a small index)', async () => {
    const dir = join(root, 'damaged-page');
    const place: Place = {
      index: join(dir, 'index.sqlite'),
      notes: notesIn(join(dir, 'notes'), 40),
      fresh: notesIn(join(dir, 'fresh')),
    };
    await indexed(place.index, place.notes);
    const size = statSync(place.index).size;
    const fd = openSync(place.index, 'r+');
    const page = Math.floor(size / 2 / 4096) * 4096;
    writeSync(fd, randomBytes(4096), 0, 4096, page);
    closeSync(fd);
    const cells = await everySurface('damaged (one page)', place);
    expectRefused(
      cells,
      SURFACES.filter((s) => s !== 'mcp --shared'),
      'is damaged',
      place.index,
    );
  });

  it.skipIf(!hasSqlite3)(
    'locked (sqlite3 holds the write lock; needs the sqlite3 shell): readers serve, every writer waits, then one line',
    async () => {
      const dir = join(root, 'locked');
      const place: Place = {
        index: join(dir, 'index.sqlite'),
        notes: notesIn(join(dir, 'notes')),
        fresh: notesIn(join(dir, 'fresh')),
      };
      await indexed(place.index, place.notes);
      // Another program in the middle of a write: sqlite3's shell, holding BEGIN IMMEDIATE.
      const holder = spawnProcess('sqlite3', [place.index]);
      try {
        holder.child.stdin?.write(
          "BEGIN IMMEDIATE; INSERT INTO contexts (collection, prefix, text, updated_at) VALUES (NULL, '', 'held', ''); SELECT 'holding';\n",
        );
        await holder.waitFor(
          () => (holder.stdout().includes('holding') ? true : undefined),
          'sqlite3 to hold the lock',
        );
        const cells = await everySurface('locked', place);
        for (const s of ['status', 'search', 'get'] as const) expect(cells.get(s)?.code, s).toBe(0);
        expect(cells.get('mcp stdio')?.said).toBe('serves');
        expect(cells.get('mcp --http')?.said).toBe('serves');
        expectRefused(cells, WRITERS, 'is locked by another process', place.index);
      } finally {
        holder.kill();
        await holder.closed;
      }
    },
  );

  it.skipIf(!isRoot)(
    'disk full (a tmpfs filled up; needs root to mount): every surface says so, exit 1; the index is unchanged',
    async () => {
      const dir = join(root, 'full');
      const mnt = join(dir, 'mnt');
      mkdirSync(mnt, { recursive: true });
      const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=600k', 'tmpfs', mnt], { encoding: 'utf8' });
      expect(mounted.status, mounted.stderr).toBe(0);
      const place: Place = {
        index: join(mnt, 'index.sqlite'),
        notes: notesIn(join(dir, 'notes')),
        fresh: notesIn(join(dir, 'fresh'), 200),
      };
      await indexed(place.index, place.notes);
      const before = (await qmd(['search', 'checkpoint', '--json'], place)).stdout;
      expect(before).toContain('notes/n');
      // Fill what is left, a block at a time, until the file system says no.
      const filler = join(mnt, 'filler');
      try {
        for (;;) appendFileSync(filler, Buffer.alloc(4096));
      } catch (error) {
        expect((error as NodeJS.ErrnoException).code).toBe('ENOSPC');
      }
      const cells = await everySurface('disk full', place);
      expectRefused(cells, WRITERS, 'is full', place.index);
      for (const s of ['status', 'search', 'get', 'mcp stdio', 'mcp --http'] as const) {
        const cell = cells.get(s);
        if (cell?.code !== 0 && cell?.said !== 'serves') expect(cell?.said, s).toContain('is full');
      }
      // Space again: the index answers as before (the failed writes left nothing half-done).
      rmSync(filler);
      writeFileSync(join(place.notes, 'n0.md'), '# Note 0\n\nwal checkpoint note 0\n');
      expect((await qmd(['search', 'checkpoint', '--json'], place)).stdout).toBe(before);
    },
  );

  describe.skipIf(asOther === undefined)(
    `as another user (a throwaway account${'skip' in reach ? `: skipped, ${reach.skip}` : `, Node and qmd ${reach.how}`})`,
    () => {
      it('unreadable (an index this user cannot read): every surface refuses, naming the file', async () => {
        const dir = join(root, 'unreadable');
        const place: Place = {
          index: join(dir, 'index.sqlite'),
          notes: notesIn(join(dir, 'notes')),
          fresh: notesIn(join(dir, 'fresh')),
          asUser: true,
        };
        await indexed(place.index, place.notes);
        chmodSync(dir, 0o777);
        chmodSync(place.index, 0o600);
        const cells = await everySurface('unreadable', place);
        expectRefused(
          cells,
          SURFACES.filter((s) => s !== 'mcp --shared'),
          'cannot be read by this user',
          place.index,
        );
      });

      it('read-only folder (its own index, writable, in a folder it cannot write): one line about -wal/-shm', async () => {
        const dir = join(root, 'read-only-folder');
        const place: Place = {
          index: join(dir, 'db', 'index.sqlite'),
          notes: notesIn(join(dir, 'notes')),
          fresh: notesIn(join(dir, 'fresh')),
          asUser: true,
        };
        mkdirSync(dirname(place.index), { recursive: true });
        await indexed(place.index, place.notes);
        for (const path of [dir, place.notes, place.fresh, dirname(place.index), place.index])
          chownSync(path, uid, uid);
        for (const n of ['n0.md', 'n1.md', 'n2.md']) chownSync(join(place.notes, n), uid, uid);
        chmodSync(dirname(place.index), 0o555);
        const cells = await everySurface('read-only folder', place);
        expectRefused(
          cells,
          SURFACES.filter((s) => s !== 'mcp --shared'),
          `its folder ${dirname(place.index)} is read-only`,
          place.index,
        );
      });
    },
  );
});
