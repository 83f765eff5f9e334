/**
 * Signals on stdio: SIGTERM, SIGINT and SIGHUP each go through the machine — the
 * breadcrumb, the whole teardown in order (the trace), the store closed (no `-wal` left),
 * exit 0 — and the process then leaves on its own, with nothing for the watchdog to name.
 */
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import type { ShutdownSignal } from '../../machines/triggers.js';
import { ChildTransport } from '../support/child-transport.js';
import { indexedWorkspace, qmdEnv, spawnMcp } from '../support/qmd.js';
import { waitForExit } from '../support/spawn.js';

const ws = indexedWorkspace();

const SIGNALS: ShutdownSignal[] = ['SIGTERM', 'SIGINT', 'SIGHUP'];

describe('qmd mcp over stdio, stopped by a signal', () => {
  it.each(SIGNALS)('%s: breadcrumb, clean teardown in order, exit 0, no -wal', async (signal) => {
    const trace = join(ws.dir, `trace-${signal}.jsonl`);
    rmSync(trace, { force: true });
    const server = spawnMcp(qmdEnv(ws.index, { QMD_LIFECYCLE_TRACE: trace }));
    try {
      const client = new Client({ name: 'e2e-signals', version: '1.0.0' });
      await client.connect(new ChildTransport(server.child));
      // A real search first: the store (and its WAL) is open and in use when the signal lands.
      const found = await client.callTool({ name: 'query', arguments: { query: 'sourdough' } });
      expect(found.isError).toBeFalsy();

      server.child.kill(signal);
      const exit = await waitForExit(server);

      expect(exit).toEqual({ code: 0, signal: null });
      const stderr = server.stderr();
      expect(stderr).toContain(`Shutting down (${signal})...`);
      expect(stderr).toMatch(new RegExp(`Shutdown complete in [\\d.]+ ms: ${signal}: drained, all steps ok, exit 0`));
      // It left because nothing held the loop, not because the watchdog forced it.
      expect(stderr).not.toContain('held by');
      expect(existsSync(`${ws.index}-wal`)).toBe(false);
      const states = readFileSync(trace, 'utf8')
        .trim()
        .split('\n')
        .map((line) => (JSON.parse(line) as { state: string }).state);
      expect(states).toEqual(['connected', 'closingTransport', 'draining', 'disposingStore', 'done']);
      expect(server.stdout()).not.toContain('Shutting down');
    } finally {
      server.kill();
    }
  });
});
