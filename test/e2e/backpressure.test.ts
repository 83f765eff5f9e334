/**
 * A client that stops reading costs bounded memory, in the spawned binary: plain
 * `qmd mcp`, and under `--shared` its relay and the shared server every client depends on. The
 * stalled client writes the handshake and 20,000 queries (~20 KiB of reply each: ~400 MB if
 * all were answered and kept) and never reads a byte. Each process says when it stops reading
 * a client that is not reading (a warning on stderr): that is the observable moment the
 * backlog stops growing, and the peak RSS (VmHWM) is checked against the bound there. Another
 * session is answered meanwhile; how fast is for `bench/stalled-reader.ts`, not a test.
 *
 * The bound: IDLE_RSS_BOUND_MB, what the process may hold at its peak with a stalled client,
 * well under what unbounded buffering reached (docs/design.md §2.2; `bench/results-stalled-reader.md`).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChildTransport } from '../support/child-transport.js';
import { qmdEnv, runQmd, spawnMcp, tempWorkspace, textOf } from '../support/qmd.js';
import { type Spawned, waitForExit } from '../support/spawn.js';
import { eventually, serverLog, sharedServerPids } from './fixtures/shared.js';

/** What a process may reach at its peak with a client stalled on 20,000 queries. */
const RSS_BOUND_MB = 150;
const QUERIES = 20_000;
const STALLED = 'the client is not reading its replies';

/** 40 notes that all match the query, so a reply is a full page of results (~20 KiB). */
const NOTES = Object.fromEntries(
  Array.from({ length: 40 }, (_, i) => [
    `bread-${i}.md`,
    `# Bread ${i}\n\n${'Sourdough needs a starter, flour, water and salt; bake it hot. '.repeat(12)}\n`,
  ]),
);

function stalledScript(queries = QUERIES): string {
  const lines = [
    {
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'stalled', version: '1' } },
    },
    { jsonrpc: '2.0', method: 'notifications/initialized' },
  ].map((m) => JSON.stringify(m));
  for (let id = 1; id <= queries; id++) {
    lines.push(
      JSON.stringify({
        jsonrpc: '2.0',
        id,
        method: 'tools/call',
        params: { name: 'query', arguments: { query: 'sourdough starter', limit: 40 } },
      }),
    );
  }
  return `${lines.join('\n')}\n`;
}

function peakMb(pid: number): number {
  const match = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(match?.[1]) / 1024;
}

/** A client that writes everything and never reads: its stdout pipe is left unread. */
function stall(env: NodeJS.ProcessEnv, args: string[] = [], queries = QUERIES): Spawned {
  const p = spawnMcp(env, args, { keepStdout: false });
  p.child.stdin!.write(stalledScript(queries));
  return p;
}

/** The watchdog's line: something held the loop past `done`. */
const WATCHDOG = /still running \d+ ms after teardown/;
/**
 * What it says it dropped: the replies written and not taken (those it never ran were answered
 * with an error at the end, written too), and what it sent on and never heard back about.
 */
const DROPPED =
  /QMD Warning: dropped \d+ repl(y|ies) \(\d+ KiB\) the client did not read(; \d+ requests? it sent go unanswered)?$/m;

describe('a client that never reads', () => {
  const ws = tempWorkspace(NOTES);
  const runtime = mkdtempSync(join(tmpdir(), 'qmd-run-'));
  let env: NodeJS.ProcessEnv;
  beforeAll(async () => {
    env = qmdEnv(ws.index, { XDG_RUNTIME_DIR: runtime, QMD_SHARED_IDLE_MS: '60000' });
    expect((await runQmd(['collection', 'add', ws.notesDir, '--name', 'notes'], env)).code).toBe(0);
  });
  afterAll(() => {
    for (const pid of sharedServerPids(ws.index)) process.kill(pid, 'SIGKILL');
    ws.cleanup();
    rmSync(runtime, { recursive: true, force: true });
  });

  it(`plain qmd mcp stops reading it and stays under ${RSS_BOUND_MB} MB; its leaving is a clean exit`, async () => {
    const p = stall(env);
    try {
      await p.waitForStderr(STALLED, 60_000);
      const peak = peakMb(p.child.pid!);
      expect(peak).toBeLessThan(RSS_BOUND_MB);
      // The client goes away without reading: the stalled replies do not hold the exit.
      p.child.stdout!.destroy();
      expect(await waitForExit(p)).toEqual({ code: 0, signal: null });
      expect(p.stderr()).toMatch(/Shutdown complete in [\d.]+ ms: stdout closed: drained, all steps ok, exit 0/);
    } finally {
      p.kill();
    }
  });

  it('alive, never reading, its stdin ended: qmd mcp exits at the drain deadline, says what it dropped, and needs no watchdog', async () => {
    const p = stall({ ...env, QMD_DRAIN_TIMEOUT_MS: '1000' }, [], 400);
    try {
      await p.waitForStderr(STALLED, 60_000);
      p.child.stdin!.end();
      // The client is still there, and still reads nothing.
      expect(await waitForExit(p)).toEqual({ code: 0, signal: null });
      expect(p.stderr()).toContain('drain deadline of 1000 ms passed');
      expect(p.stderr()).toMatch(DROPPED);
      expect(p.stderr()).toMatch(
        /Shutdown complete in [\d.]+ ms: stdin closed: drain deadline passed, all steps ok, exit 0/,
      );
      expect(p.stderr()).not.toMatch(WATCHDOG);
    } finally {
      p.kill();
    }
  });

  it('alive, never reading, its stdin ended: the --shared relay exits at its drain deadline, says what it dropped, no watchdog', async () => {
    const stalledBefore = (serverLog(ws.index, env).match(new RegExp(STALLED, 'g')) ?? []).length;
    const p = stall({ ...env, QMD_DRAIN_TIMEOUT_MS: '1000' }, ['--shared'], 400);
    try {
      await eventually(
        () => (serverLog(ws.index, env).match(new RegExp(STALLED, 'g')) ?? []).length > stalledBefore,
        'the server stops reading the stalled relay',
        60_000,
      );
      p.child.stdin!.end();
      expect(await waitForExit(p)).toEqual({ code: 0, signal: null });
      expect(p.stderr()).toContain('drain deadline of 1000 ms passed');
      expect(p.stderr()).toMatch(DROPPED);
      expect(p.stderr()).not.toMatch(WATCHDOG);
    } finally {
      p.kill();
    }
  });

  it(`--shared: the relay and the server stay under ${RSS_BOUND_MB} MB, and another session is answered meanwhile`, async () => {
    const other = spawnMcp(env, ['--shared']);
    const client = new Client({ name: 'other', version: '1' });
    await client.connect(new ChildTransport(other.child));
    const [server] = sharedServerPids(ws.index);
    const p = stall(env, ['--shared']);
    try {
      await eventually(
        () => serverLog(ws.index, env).includes(STALLED),
        'the server stops reading the stalled session',
        60_000,
      );
      const answer = await client.callTool({ name: 'query', arguments: { query: 'sourdough' } });
      expect(textOf(answer)).toContain('bread-');
      expect(peakMb(p.child.pid!)).toBeLessThan(RSS_BOUND_MB);
      expect(peakMb(server!)).toBeLessThan(RSS_BOUND_MB);
      expect(serverLog(ws.index, env)).not.toContain('MaxListenersExceededWarning');
      // The stalled client leaves: its relay exits cleanly, and the session ends within its bounds.
      p.child.stdout!.destroy();
      expect(await waitForExit(p)).toEqual({ code: 0, signal: null });
      await eventually(
        () => (serverLog(ws.index, env).match(/session session-\d+ done/g) ?? []).length >= 1,
        'the stalled session done',
      );
      expect(serverLog(ws.index, env)).not.toMatch(/teardown step \w+ failed/);
      await client.close();
      expect(await waitForExit(other)).toEqual({ code: 0, signal: null });
    } finally {
      p.kill();
      other.kill();
    }
  });
});
