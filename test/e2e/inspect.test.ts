/**
 * `QMD_INSPECT` on a spawned `qmd mcp`: the built binary, a real index, the
 * SDK's Client, and — for the live case — a real WebSocket receiver (`serveInspector`, what
 * `qmd lifecycle inspect` runs) in the test process.
 *
 * "Never keeps the process alive" is checked by what the process says, not by a stopwatch:
 * if the inspector's socket or its retry timer still held the loop after `done`, the watchdog
 * would name it (`still running … held by`) before exiting.
 */
import { once } from 'node:events';
import { createServer } from 'node:net';
import { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type InspectorServer, serveInspector } from '../../src/viz/inspect-server.js';
import { ChildTransport } from '../support/child-transport.js';
import { indexedWorkspace, qmdEnv, spawnMcp } from '../support/qmd.js';
import { recordingLog } from '../support/recording-log.js';
import { waitForExit } from '../support/spawn.js';

const ws = indexedWorkspace();

/** A loopback port nothing listens on: bound, then closed. */
async function closedPort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, 'close');
  return port;
}

/** Every stdout line is a JSON-RPC 2.0 message: nothing else reached the protocol stream. */
function expectJsonRpcOnly(stdout: string): void {
  const lines = stdout.split('\n').filter((l) => l !== '');
  expect(lines.length).toBeGreaterThan(0);
  for (const line of lines) expect(JSON.parse(line), line).toMatchObject({ jsonrpc: '2.0' });
}

async function session(inspectUrl: string) {
  const server = spawnMcp(qmdEnv(ws.index, { QMD_INSPECT: inspectUrl }));
  const transport = new ChildTransport(server.child);
  const client = new Client({ name: 'e2e-inspect', version: '1.0.0' });
  await client.connect(transport);
  return { server, transport, client };
}

describe('QMD_INSPECT on a spawned qmd mcp', () => {
  it('pointing at nothing: serves, exits on EOF with code 0, nothing held the loop, stdout JSON-RPC only', async () => {
    const url = `ws://127.0.0.1:${await closedPort()}`;
    const { server, transport, client } = await session(url);
    try {
      const found = await client.callTool({ name: 'query', arguments: { query: 'sourdough' } });
      expect(found.isError).toBeFalsy();
      await transport.close();
      const exit = await waitForExit(server);
      expect(exit).toEqual({ code: 0, signal: null });
      const stderr = server.stderr();
      expect(stderr).toContain('Shutting down (stdin closed)...');
      expect(stderr).toMatch(/Shutdown complete in [\d.]+ ms: stdin closed: drained, all steps ok, exit 0/);
      expect(stderr).not.toContain('still running');
      // It did try: the dead inspector is reported once, as a warning, on stderr.
      expect(stderr.match(/^QMD Warning: .*inspector/gm)?.length, stderr).toBe(1);
      expectJsonRpcOnly(server.stdout());
    } finally {
      server.kill();
    }
  });

  describe('with a receiver listening', () => {
    let inspector: InspectorServer;
    const log = recordingLog();
    const { lines } = log;
    beforeAll(async () => {
      inspector = await serveInspector({ port: 0, log });
    });
    afterAll(async () => {
      await inspector.close();
    });

    it('receives the actor’s events and states in order, and the server still exits on its own', async () => {
      const { server, transport, client } = await session(inspector.url);
      const pid = server.child.pid;
      try {
        const found = await client.callTool({ name: 'query', arguments: { query: 'sourdough' } });
        expect(found.isError).toBeFalsy();
        await transport.close();
        const exit = await waitForExit(server);
        expect(exit).toEqual({ code: 0, signal: null });
        await vi.waitFor(() => expect(lines).toContain(`[pid ${pid}] disconnected`), { timeout: 20_000 });

        const mine = lines.filter((l) => l.startsWith(`[pid ${pid}] `)).map((l) => l.slice(`[pid ${pid}] `.length));
        expect(mine[0]).toBe('connected');
        expect(mine.at(-1)).toBe('disconnected');
        // The root actor's events and snapshots, exactly and in order. Observed, the host sends
        // handler events from the start, so each request shows live (initialize, then the tool
        // call: over stdio a request counts from its reading to its reply's writing). `draining` is entered and
        // left within one step (nothing in flight), so no snapshot rests there.
        expect(mine.filter((l) => l.startsWith('event ') || l.startsWith('state '))).toEqual([
          'event xstate.init',
          'state connected (inflight 0)',
          'event handler.started',
          'state connected (inflight 1)',
          'event handler.settled',
          'state connected (inflight 0)',
          'event handler.started',
          'state connected (inflight 1)',
          'event handler.settled',
          'state connected (inflight 0)',
          'event stdin.end',
          'state closingTransport (inflight 0)',
          'event xstate.done.actor.closeTransport',
          'state disposingStore (inflight 0)',
          'event xstate.done.actor.disposeStore',
          'state done (inflight 0): stdin closed: drained, all steps ok, exit 0',
        ]);
        expect(mine).toEqual(expect.arrayContaining(['closeTransport done', 'disposeStore done']));
        expect(server.stderr()).not.toContain('still running');
        expectJsonRpcOnly(server.stdout());
      } finally {
        server.kill();
      }
    });
  });
});
