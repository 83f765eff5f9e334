/**
 * `qmd mcp` over stdio, spawned for real: the built binary, a real index, the SDK's
 * real Client. Each test waits for observable events (a stderr line, an exit) with generous
 * bounds and SIGKILLs its child in `finally`.
 */

import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import { ChildTransport } from '../support/child-transport.js';
import { indexedWorkspace, qmdEnv, runQmd, spawnMcp, textOf } from '../support/qmd.js';
import { sdkSession } from '../support/sdk-session.js';
import { waitForExit } from '../support/spawn.js';

const ws = indexedWorkspace();

async function connect(extraEnv: Record<string, string> = {}) {
  const server = spawnMcp(qmdEnv(ws.index, extraEnv));
  const transport = new ChildTransport(server.child);
  const client = new Client({ name: 'e2e', version: '1.0.0' });
  await client.connect(transport);
  return { server, transport, client };
}

const hashIndex = () => createHash('sha256').update(readFileSync(ws.index)).digest('hex');

describe('qmd mcp over stdio', () => {
  it('answers initialize, tools/list, query and get; EOF then exits 0 through the machine, no -wal left', async () => {
    const { server, transport, client } = await connect();
    try {
      expect(client.getServerVersion()?.name).toBe('qmd');
      expect(client.getInstructions()).toContain('notes');
      const tools = await client.listTools();
      expect(tools.tools.map((t) => t.name).sort()).toEqual(['get', 'multi_get', 'query', 'status']);

      const found = await client.callTool({ name: 'query', arguments: { query: 'sourdough starter' } });
      const results = (found.structuredContent as { results: Array<{ file: string; docid: string }> }).results;
      expect(results[0]?.file).toBe('notes/deep/cooking.md');

      const doc = await client.callTool({ name: 'get', arguments: { file: results[0]!.docid } });
      expect(textOf(doc)).toContain('Flour, water, salt and time.');

      await transport.close(); // stdin.end(): the only portable graceful shutdown
      const exit = await waitForExit(server);
      expect(exit).toEqual({ code: 0, signal: null });
      // The breadcrumb proves the EOF path, not a loop that happened to drain.
      expect(server.stderr()).toContain('Shutting down (stdin closed)...');
      expect(server.stderr()).toMatch(/Shutdown complete in [\d.]+ ms: stdin closed: drained, all steps ok, exit 0/);
      expect(existsSync(`${ws.index}-wal`)).toBe(false);
    } finally {
      server.kill();
    }
  });

  it("exits on its own under the SDK client's close(), before the SDK's SIGTERM", async () => {
    const s = await sdkSession(qmdEnv(ws.index));
    try {
      await s.client.callTool({ name: 'status', arguments: {} });
      await s.client.close();
      expect(await s.exit()).toEqual({ code: 0, signal: null });
      expect(s.stderr()).toContain('Shutting down (stdin closed)...');
      expect(s.stderr()).not.toContain('SIGTERM');
    } finally {
      s.kill();
    }
  });

  it('writes nothing but JSON-RPC to stdout during a whole session, shutdown included', async () => {
    const { server, transport, client } = await connect({ QMD_LIFECYCLE_TRACE: `${ws.dir}/trace.jsonl` });
    try {
      await client.listTools();
      await client.callTool({ name: 'query', arguments: { query: 'WAL checkpoint', limit: 5 } });
      await client.callTool({ name: 'get', arguments: { file: 'notes/sqlite.md', fromLine: 2, maxLines: 1 } });
      await client.callTool({ name: 'multi_get', arguments: { pattern: 'notes/**/*.md' } });
      await client.callTool({ name: 'status', arguments: {} });
      await client.callTool({ name: 'get', arguments: { file: 'notes/missing.md' } });
      await transport.close();
      await waitForExit(server);
      expect(server.stdout().endsWith('\n')).toBe(true);
      const lines = server.stdout().trimEnd().split('\n');
      expect(lines.length).toBeGreaterThanOrEqual(7);
      for (const line of lines) expect(JSON.parse(line)).toMatchObject({ jsonrpc: '2.0' });
    } finally {
      server.kill();
    }
  });

  it('survives a client that stops reading while a reply is pending: no EPIPE crash, a clean exit', async () => {
    // Ten minutes unless its signal fires: the query is pending for as long as the test needs.
    const { server, client } = await connect({ QMD_FAILPOINTS: 'tool.query=delay(600000)' });
    try {
      const pending = client.callTool({ name: 'query', arguments: { query: 'bread' } }).catch((e: Error) => e);
      await server.waitForStderr('QMD Debug: failpoint tool.query hit (delay)');
      // The client closes its read end of our stdout; the next reply written (the ping's) hits EPIPE.
      server.child.stdout?.destroy();
      void client.ping().catch(() => {});
      const exit = await waitForExit(server);
      expect(exit).toEqual({ code: 0, signal: null });
      expect(server.stderr()).toContain('Shutting down (stdout closed)...');
      expect(server.stderr()).not.toMatch(/Error: write EPIPE|Unhandled 'error' event/);
      // No reply can reach the client any more: nothing is owed, so the drain is over at once
      // and the release aborts the pending query.
      expect(server.stderr()).toMatch(/Shutdown complete in [\d.]+ ms: stdout closed: drained, all steps ok, exit 0/);
      void pending;
    } finally {
      server.kill();
    }
  });

  it('a hung tool handler and a short drain timeout: still exits 0, with a QMD Warning', async () => {
    const { server, transport, client } = await connect({
      QMD_FAILPOINTS: 'tool.query=hang',
      QMD_DRAIN_TIMEOUT_MS: '300',
      QMD_EXIT_WATCHDOG_MS: '300',
    });
    try {
      const hung = client.callTool({ name: 'query', arguments: { query: 'bread' } }).catch((e: Error) => e);
      // Requests are dispatched in order, so once a ping behind it is answered the query's
      // handler is in flight; then the EOF, which drains it until the deadline.
      await client.ping();
      await transport.close();
      const exit = await waitForExit(server);
      expect(exit).toEqual({ code: 0, signal: null });
      expect(server.stderr()).toContain('QMD Warning: drain deadline of 300 ms passed with 1 handler(s) in flight');
      expect(server.stderr()).toMatch(/QMD Warning: still running 300 ms after teardown; held by: .*Timeout/);
      void hung;
    } finally {
      server.kill();
    }
  });

  it('a failing teardown step: exit 1, a warning naming the step, and the process exits', async () => {
    const { server, transport } = await connect({ QMD_FAILPOINTS: 'teardown.disposeStore=throw' });
    try {
      await transport.close();
      const exit = await waitForExit(server);
      expect(exit).toEqual({ code: 1, signal: null });
      expect(server.stderr()).toContain(
        'QMD Warning: teardown step disposeStore failed: failpoint teardown.disposeStore: throw; continuing',
      );
    } finally {
      server.kill();
    }
  });

  it('bad input gets clear errors, the server keeps serving, the index is untouched', async () => {
    const before = hashIndex();
    const { server, transport, client } = await connect();
    try {
      // A line that is not JSON: a JSON-RPC parse error (id null), then business as usual.
      transport.writeRaw('this is not json\n');
      const parseError = await transport.waitForLine((l) => /"code":-32700/.test(l));
      expect(JSON.parse(parseError)).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700 } });
      await server.waitForStderr('QMD Warning: protocol error');

      // JSON that is not JSON-RPC: an invalid-request error, and still serving.
      transport.writeRaw('{"hello":"world"}\n');
      const invalid = await transport.waitForLine((l) => /"code":-32600/.test(l));
      expect(JSON.parse(invalid)).toMatchObject({ id: null, error: { code: -32600 } });

      const wrongType = await client.callTool({ name: 'query', arguments: { query: 'bread', limit: 'ten' } });
      expect(wrongType.isError).toBe(true);
      expect(textOf(wrongType)).toMatch(/limit/);

      for (const file of ['../../etc/passwd', '/etc/passwd', 'notes/../../secret.md', 'qmd://../x', '%2e%2e/x']) {
        const refused = await client.callTool({ name: 'get', arguments: { file } });
        expect(refused.isError, file).toBe(true);
        expect(textOf(refused), file).not.toContain('root:');
      }

      const huge = await client.callTool({ name: 'query', arguments: { query: 'x'.repeat(100_000) } });
      expect(huge.isError).toBe(true);

      // A request over the message limit is refused without closing the transport.
      transport.writeRaw(
        `${JSON.stringify({ jsonrpc: '2.0', id: 99, method: 'ping', params: { pad: 'y'.repeat(5 * 1024 * 1024) } })}\n`,
      );
      await server.waitForStderr('QMD Warning: refused a request of');

      const still = await client.callTool({ name: 'query', arguments: { query: 'sourdough' } });
      expect(still.isError).toBeFalsy();
      expect(textOf(still)).toContain('cooking.md');

      await transport.close();
      expect(await waitForExit(server)).toEqual({ code: 0, signal: null });
      expect(hashIndex()).toBe(before);
      const status = await runQmd(['status', '--json'], qmdEnv(ws.index));
      expect(JSON.parse(status.stdout).documents).toBe(3);
    } finally {
      server.kill();
    }
  });
});
