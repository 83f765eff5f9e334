/**
 * Stdin EOF drains for real, in the spawned binary, over both stdio transports:
 * the requests a client wrote before closing stdin are answered while stdout is open, as
 * `printf … | qmd mcp | jq` expects. A query is held in flight by the failpoint
 * `tool.query=until(SIGUSR2)` (no timing: it ends when the test says), stdin ends, and only
 * then is the query let go. The lifecycle oracle's rule "only an escalation aborts handlers"
 * (test/model/oracle.ts) is checked on the process itself: the failpoint logs when its signal
 * aborts it, and that line appears only after a second trigger.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { indexedWorkspace, qmdEnv, spawnMcp } from '../support/qmd.js';
import { type Spawned, waitForExit } from '../support/spawn.js';
import { eventually, serverLog, sharedServerPids } from './fixtures/shared.js';

const ws = indexedWorkspace();
const runtime = mkdtempSync(join(tmpdir(), 'qmd-run-'));
afterAll(() => {
  for (const pid of sharedServerPids(ws.index)) process.kill(pid, 'SIGKILL');
  rmSync(runtime, { recursive: true, force: true });
});

const HELD = { QMD_FAILPOINTS: 'tool.query=until(SIGUSR2)' };
const ABORTED = 'QMD Debug: failpoint tool.query aborted';

/** What a script pipes in before closing stdin: the handshake, a held query, a quick request behind it. */
const SCRIPT = [
  {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'script', version: '1' } },
  },
  { jsonrpc: '2.0', method: 'notifications/initialized' },
  { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'query', arguments: { query: 'sourdough' } } },
  { jsonrpc: '2.0', id: 3, method: 'tools/list' },
]
  .map((m) => `${JSON.stringify(m)}\n`)
  .join('');

type Reply = { id: number; result?: { isError?: boolean; content?: Array<{ text?: string }> }; error?: unknown };
const replies = (p: Spawned): Reply[] =>
  p
    .stdout()
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Reply);
const replyTo = (p: Spawned, id: number): Reply | undefined => replies(p).find((r) => r.id === id);

/** Writes the script and ends stdin once the query's handler is surely running. */
async function pipeAndClose(p: Spawned, heldIn: () => string): Promise<void> {
  p.child.stdin!.write(SCRIPT);
  await eventually(() => heldIn().includes('failpoint tool.query hit (until)'), 'the query in flight');
  p.child.stdin!.end();
  await p.waitForStderr('Shutting down (stdin closed)...');
}

describe('stdin EOF with a request in flight: plain qmd mcp', () => {
  it('the reply arrives after the EOF, exit 0, drained, nothing aborted', async () => {
    const p = spawnMcp(qmdEnv(ws.index, HELD));
    try {
      await pipeAndClose(p, () => p.stderr());
      // Tearing down, and the query still owed: every other request was answered meanwhile.
      expect(replyTo(p, 3)).toBeDefined();
      expect(replyTo(p, 2)).toBeUndefined();
      p.child.kill('SIGUSR2');
      expect(await waitForExit(p)).toEqual({ code: 0, signal: null });
      const query = replyTo(p, 2);
      expect(query?.result?.isError).toBeFalsy();
      expect(query?.result?.content?.[0]?.text).toContain('cooking.md');
      expect(p.stderr()).toMatch(/Shutdown complete in [\d.]+ ms: stdin closed: drained, all steps ok, exit 0/);
      expect(p.stderr()).not.toContain(ABORTED);
    } finally {
      p.kill();
    }
  });

  it('a second trigger escalates: then, and only then, the held handler is aborted', async () => {
    const p = spawnMcp(qmdEnv(ws.index, HELD));
    try {
      await pipeAndClose(p, () => p.stderr());
      expect(p.stderr()).not.toContain(ABORTED);
      p.child.kill('SIGTERM');
      expect(await waitForExit(p)).toEqual({ code: 0, signal: null });
      expect(p.stderr()).toContain(
        'QMD Warning: SIGTERM during teardown (stdin closed): aborting 1 in-flight handler(s)',
      );
      expect(p.stderr()).toContain(`${ABORTED} (aborted: SIGTERM escalated the shutdown)`);
      expect(p.stderr()).toMatch(/Shutdown complete in [\d.]+ ms: stdin closed: drain cut short, all steps ok, exit 0/);
    } finally {
      p.kill();
    }
  });
});

describe('stdin EOF with a request in flight: the --shared relay', () => {
  const env = qmdEnv(ws.index, { ...HELD, XDG_RUNTIME_DIR: runtime, QMD_SHARED_IDLE_MS: '60000' });
  const log = () => serverLog(ws.index, env);

  it('the relay delivers the reply it owes, exit 0, drained; the server session drained too', async () => {
    const p = spawnMcp(env, ['--shared']);
    try {
      await pipeAndClose(p, log);
      expect(replyTo(p, 2)).toBeUndefined();
      const [server] = sharedServerPids(ws.index);
      process.kill(server!, 'SIGUSR2');
      expect(await waitForExit(p)).toEqual({ code: 0, signal: null });
      const query = replyTo(p, 2);
      expect(query?.result?.isError).toBeFalsy();
      expect(query?.result?.content?.[0]?.text).toContain('cooking.md');
      expect(replyTo(p, 3)).toBeDefined();
      expect(p.stderr()).toMatch(/Shutdown complete in [\d.]+ ms: stdin closed: drained, all steps ok, exit 0/);
      await eventually(() => /session session-\d+ done/.test(log()), 'the session done');
      expect(log()).toMatch(/session session-\d+ done: drained, all steps ok/);
      expect(log()).not.toContain(ABORTED);
    } finally {
      p.kill();
    }
  });

  it('a SIGTERM to the relay while it drains escalates; the session then aborts the handler', async () => {
    const p = spawnMcp(env, ['--shared']);
    try {
      const before = log().length;
      await pipeAndClose(p, () => log().slice(before));
      expect(log().slice(before)).not.toContain(ABORTED);
      p.child.kill('SIGTERM');
      expect(await waitForExit(p)).toEqual({ code: 0, signal: null });
      expect(p.stderr()).toContain(
        'QMD Warning: SIGTERM during teardown (stdin closed): aborting 1 in-flight handler(s)',
      );
      expect(p.stderr()).toMatch(/Shutdown complete in [\d.]+ ms: stdin closed: drain cut short, all steps ok, exit 0/);
      // The relay released the session under its handler: the socket closing while the session
      // ends is the session's escalation.
      await eventually(() => log().slice(before).includes(ABORTED), 'the held handler aborted');
    } finally {
      p.kill();
    }
  });
});
