/**
 * Fresh while it serves, in the spawned binary with the real watcher (src/watch/), over MCP as
 * clients use it: plain `qmd mcp` over stdio and `qmd mcp --shared` (one watcher in the shared
 * server for every relay). A note created, saved atomically (a temporary file renamed over it),
 * renamed, moved or deleted under the collection's folder is found (or gone) with no
 * `qmd update`; a burst of 1,000 writes settles to the right index; the client hears
 * `notifications/resources/list_changed`; stdin EOF with the watcher running exits 0 through
 * the usual teardown. Every wait polls what a client sees (a search, `status`) with a generous
 * bound; how fast it is, is measured by bench/watch-mcp.ts, not asserted here.
 */
import { mkdirSync, mkdtempSync, renameSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type CallToolResult, Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { within } from '../support/bounded.js';
import { QMD_BIN, qmdEnv, runQmd, tempWorkspace, textOf } from '../support/qmd.js';
import { eventually, serverLog, sharedServerPids } from './fixtures/shared.js';

/** "Within a few seconds" (docs/design.md §6): the bound a single change must be searchable in, generous for a loaded machine. */
const CHANGE_BOUND_MS = 20_000;
/** A thousand files written at once: scanned, coalesced and committed. */
const BURST_BOUND_MS = 120_000;

const NOTES: Record<string, string> = {
  'bread.md': '# Bread\n\nSourdough needs a starter, flour, water and salt.\n',
  'server.md': '# Server\n\nA server must never outlive its client.\n',
};
const NOTES_COUNT = Object.keys(NOTES).length;

interface Session {
  client: Client;
  transport: StdioClientTransport;
  stderr: () => string;
  /** `notifications/resources/list_changed` the client heard. */
  listChanged: () => number;
  call(name: string, args?: Record<string, unknown>): Promise<CallToolResult>;
  /** The files a search for `word` returns now. */
  files(word: string): Promise<string[]>;
  documents(): Promise<number>;
}

/** An MCP client app (the SDK's Client over its stdio transport) with `qmd ARGS`. */
async function connect(args: string[], env: NodeJS.ProcessEnv, era: 'modern' | 'legacy'): Promise<Session> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [QMD_BIN, ...args],
    env: env as Record<string, string>,
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  let changed = 0;
  const client = new Client(
    { name: 'qmd-watch-e2e', version: '1.0.0' },
    {
      versionNegotiation: { mode: era === 'legacy' ? ('legacy' as const) : { pin: '2026-07-28' } },
      listChanged: { resources: { onChanged: () => changed++ } },
    },
  );
  await client.connect(transport);
  await client.listTools();
  const call = async (name: string, a: Record<string, unknown> = {}) =>
    (await client.callTool({ name, arguments: a })) as CallToolResult;
  return {
    client,
    transport,
    stderr: () => stderr,
    listChanged: () => changed,
    call,
    async files(word) {
      const result = await call('query', { searches: [{ type: 'lex', query: word }] });
      const structured = result.structuredContent as { results?: Array<{ file: string }> } | undefined;
      return (structured?.results ?? []).map((r) => r.file).sort();
    },
    async documents() {
      const result = await call('status');
      return (result.structuredContent as { documents: number }).documents;
    },
  };
}

/**
 * Asks what a client sees (a search, `status`) again and again until `fact` holds of the
 * answer, each question after the last answer; fails after `ms`, saying what it saw last.
 */
async function until<T>(see: () => Promise<T>, fact: (seen: T) => boolean, what: string, ms = CHANGE_BOUND_MS) {
  const deadline = performance.now() + ms;
  for (;;) {
    const seen = await see();
    if (fact(seen)) return seen;
    if (performance.now() > deadline)
      throw new Error(`${what}: not within ${ms} ms; last seen: ${JSON.stringify(seen)}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const MODES = [
  // A 2026-07-28 client hears list_changed on the subscription its `listChanged` opens;
  // through the relay, a 2025 client hears it unsolicited (the relay passes every line through).
  { mode: 'qmd mcp over stdio', args: ['mcp'], era: 'modern' as const },
  { mode: 'qmd mcp --shared', args: ['mcp', '--shared'], era: 'legacy' as const },
];

describe.each(MODES)('$mode keeps its index fresh', ({ args, era }) => {
  const ws = tempWorkspace(NOTES);
  const runtime = mkdtempSync(join(tmpdir(), 'qmd-run-'));
  const env = qmdEnv(ws.index, { XDG_RUNTIME_DIR: runtime, QMD_SHARED_IDLE_MS: '2000' });
  let s: Session;
  const waitFor = (word: string, expected: string[]) =>
    until(
      () => s.files(word),
      (files) => JSON.stringify(files) === JSON.stringify(expected),
      `a search for ${word} to give ${JSON.stringify(expected)}`,
    );

  beforeAll(async () => {
    const added = await runQmd(['collection', 'add', ws.notesDir, '--name', 'notes'], env);
    expect(added.code, added.stderr).toBe(0);
    s = await connect(args, env, era);
  });
  afterAll(async () => {
    await s?.client.close().catch(() => {});
    for (const pid of sharedServerPids(ws.index)) process.kill(pid, 'SIGKILL');
    ws.cleanup();
    rmSync(runtime, { recursive: true, force: true });
  });

  it('a note created is found, and the client hears the list changed', async () => {
    expect(await s.files('zebracorn')).toEqual([]);
    writeFileSync(join(ws.notesDir, 'created.md'), '# Created\n\nA zebracorn grazes here.\n');
    await waitFor('zebracorn', ['notes/created.md']);
    await eventually(() => s.listChanged() > 0, 'notifications/resources/list_changed heard by the client');
  });

  it('an atomic save (a temporary file renamed over the note) is found with its new text, and not its old', async () => {
    const temp = join(ws.notesDir, '.created.md.swp');
    writeFileSync(temp, '# Created\n\nA quagmirefox replaced it.\n');
    renameSync(temp, join(ws.notesDir, 'created.md'));
    await waitFor('quagmirefox', ['notes/created.md']);
    await waitFor('zebracorn', []);
  });

  it('a rename, and a move into another folder, are found under the new path only', async () => {
    renameSync(join(ws.notesDir, 'created.md'), join(ws.notesDir, 'renamed.md'));
    await waitFor('quagmirefox', ['notes/renamed.md']);
    mkdirSync(join(ws.notesDir, 'moved'));
    renameSync(join(ws.notesDir, 'renamed.md'), join(ws.notesDir, 'moved', 'here.md'));
    await waitFor('quagmirefox', ['notes/moved/here.md']);
  });

  it('a delete is gone; a file the mask leaves out never comes in', async () => {
    writeFileSync(join(ws.notesDir, 'draft.txt'), 'quagmirefox in a text file\n');
    unlinkSync(join(ws.notesDir, 'moved', 'here.md'));
    await waitFor('quagmirefox', []);
  });

  it(
    'a burst of 1,000 writes (each file written twice) settles to the right index',
    async () => {
      const before = await s.documents();
      const dir = join(ws.notesDir, 'burst');
      mkdirSync(dir);
      for (let i = 0; i < 1000; i++) {
        const file = join(dir, `b${String(i).padStart(4, '0')}.md`);
        writeFileSync(file, `# Burst ${i}\n\nfirstdraft burstword${i}\n`);
        writeFileSync(file, `# Burst ${i}\n\nseconddraft burstword${i}\n`);
      }
      await until(
        () => s.documents(),
        (n) => n === before + 1000,
        `the index to hold ${before + 1000} documents`,
        BURST_BOUND_MS,
      );
      // Each file's last text, and only it.
      await waitFor('firstdraft', []);
      for (const i of [0, 499, 999]) await waitFor(`burstword${i}`, [`notes/burst/b${String(i).padStart(4, '0')}.md`]);
      const seen = await s.call('get', { file: 'notes/burst/b0999.md' });
      expect(textOf(seen)).toContain('seconddraft burstword999');
    },
    2 * BURST_BOUND_MS,
  );

  it('status says what is watched, and that nothing is pending once it has settled', async () => {
    const result = await s.call('status');
    const watch = (
      result.structuredContent as {
        watch: {
          role: string;
          collections: Array<{ collection: string }>;
          pending: number;
          lastChangeAt: string | null;
        };
      }
    ).watch;
    expect(watch.role).toBe('writer');
    expect(watch.collections.map((c) => c.collection)).toEqual(['notes']);
    expect(watch.lastChangeAt).not.toBeNull();
    expect(textOf(result)).toContain('Watching: this server writes the index as notes change');
  });

  it('qmd status in a terminal says who keeps the index fresh', async () => {
    const status = await runQmd(['status'], env);
    expect(status.code, status.stderr).toBe(0);
    const json = JSON.parse((await runQmd(['status', '--json'], env)).stdout) as {
      watch: { servers: Array<{ kind: string; pid: number; role: string }>; writer?: { pid: number } | null };
    };
    if (args.includes('--shared')) {
      // The shared server answers on its socket with its watcher's report.
      const [pid] = sharedServerPids(ws.index);
      expect(status.stdout).toContain(`Watching: the shared server (pid ${pid}) writes the index as notes change`);
      expect(json.watch.servers).toEqual([expect.objectContaining({ kind: 'shared', pid, role: 'writer' })]);
    } else {
      // A plain server has no socket: its pid is read from the writer's place (the engine's `watchWriter`).
      const pid = s.transport.pid;
      expect(status.stdout).toMatch(new RegExp(`^Watching: pid ${pid} writes the index as notes change`, 'm'));
      expect(json.watch.servers).toEqual([]);
      expect(json.watch.writer).toEqual({ pid });
    }
  });

  it('stdin EOF with the watcher running: the usual teardown, exit 0, nothing left holding the process', async () => {
    const child = (s.transport as unknown as { _process: import('node:child_process').ChildProcess })._process;
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    writeFileSync(join(ws.notesDir, 'last.md'), '# Last\n\nwritten as the client leaves\n');
    child.stdin?.end();
    expect(await within(exited, () => `the exit; stderr was:\n${s.stderr()}`)).toBe(0);
    expect(s.stderr()).toMatch(/Shutdown complete in [\d.]+ ms: stdin closed: drained, all steps ok, exit 0/);
    expect(s.stderr()).not.toContain('held by');
    expect(s.stderr()).not.toContain('could not load the watcher');
    // With --shared the watcher is the server's, and its log says how it went.
    if (args.includes('--shared'))
      expect(serverLog(ws.index, env)).not.toMatch(/could not load the watcher|watching stopped/);
  });
});

describe.each(MODES)('$mode killed during the watcher’s write', ({ args, era }) => {
  it(
    'SIGKILL inside a write transaction leaves the index whole, and the next server catches up',
    async () => {
      const { Sqlite } = await import('../../src/store/sqlite.js');
      const ws = tempWorkspace(NOTES);
      const runtime = mkdtempSync(join(tmpdir(), 'qmd-run-'));
      const env = qmdEnv(ws.index, { XDG_RUNTIME_DIR: runtime, QMD_SHARED_IDLE_MS: '2000' });
      let s: Session | undefined;
      try {
        expect((await runQmd(['collection', 'add', ws.notesDir, '--name', 'notes'], env)).code).toBe(0);
        s = await connect(args, env, era);
        // More text than SQLite's page cache holds, so uncommitted pages reach the WAL before
        // COMMIT (the hard case, as test/indexing/kill.test.ts has it for qmd update).
        const block = `${'A paragraph of filler text with some numbers '.repeat(20)}\n`;
        mkdirSync(join(ws.notesDir, 'big'));
        for (let i = 0; i < 24; i++)
          writeFileSync(join(ws.notesDir, 'big', `big-${i}.md`), `# Big ${i}\n\n${block.repeat(800)}`);
        // A write transaction is running when another connection cannot take the write lock.
        const probe = new Sqlite(ws.index, { timeoutMs: 0 });
        const writing = (): boolean => {
          try {
            probe.exec('BEGIN IMMEDIATE');
            probe.exec('ROLLBACK');
            return false;
          } catch {
            return true;
          }
        };
        await eventually(writing, 'the watcher inside a write transaction', BURST_BOUND_MS);
        const writer = args.includes('--shared') ? sharedServerPids(ws.index)[0]! : (s.transport.pid ?? 0);
        process.kill(writer, 'SIGKILL');
        probe.close();
        await s.client.close().catch(() => {});
        s = undefined;
        // The damaged-index check every reader runs, and SQLite's own.
        const status = await runQmd(['status'], env);
        expect(status.code, status.stderr).toBe(0);
        const raw = new Sqlite(ws.index, { readOnly: true });
        expect(raw.prepare('PRAGMA integrity_check').all()).toEqual([{ integrity_check: 'ok' }]);
        raw.close();
        // A new server catches up what the killed one left.
        s = await connect(args, env, era);
        const next = s;
        await until(
          () => next.documents(),
          (n) => n === NOTES_COUNT + 24,
          'the next server to catch up the 24 big notes',
          BURST_BOUND_MS,
        );
      } finally {
        await s?.client.close().catch(() => {});
        for (const pid of sharedServerPids(ws.index)) process.kill(pid, 'SIGKILL');
        ws.cleanup();
        rmSync(runtime, { recursive: true, force: true });
      }
    },
    3 * BURST_BOUND_MS,
  );
});
