/**
 * The lifecycle stays awake during a query (issue 26 item 4, docs/design.md §8.4): a real MCP
 * client app (`fixtures/shared-client.mjs`, the SDK's Client and StdioClientTransport) starts
 * plain `qmd mcp` on an index built here, asks a query that never ends
 * (`store.worker.query=hang`: a JS loop that never yields, wherever the query's SQL runs),
 * and is SIGKILLed once the server says the query is running. Its pipes close; the server
 * must notice, drain to its bound, cut the query off, and be gone within the drain bound +
 * 1 s. Run on the main thread (`QMD_QUERY_WORKER=0`), the loop holds the event loop, the EOF
 * is never heard, and this test fails.
 */
import { describe, expect, it } from 'vitest';
import { readIdentity } from '../../src/serve/daemon/proc.js';
import { within } from '../support/bounded.js';
import { indexedWorkspace, QMD_BIN, qmdEnv } from '../support/qmd.js';
import { type SharedClient, startClient } from './fixtures/shared.js';

const NOTES = Object.fromEntries(
  Array.from({ length: 60 }, (_, i) => [
    `n${String(i).padStart(2, '0')}.md`,
    `# Note ${i}\n\nThe sourdough starter of day ${i} rose ${i % 7} hours.\n\n## Oven\n\nBaked at ${200 + i} degrees.\n`,
  ]),
);
const ws = indexedWorkspace(NOTES);
const DRAIN_MS = 2000;
const HIT = 'QMD Debug: failpoint store.worker.query hit (hang)';

describe('qmd mcp: a client killed during a query that never ends', () => {
  it('leaves no server past the drain bound + 1 s, with one breadcrumb and the drain warning', async () => {
    let client: SharedClient | undefined;
    let serverPid = 0;
    try {
      // QMD_QUERY_WORKER passes through: set to 0 it runs the query inline (the check that this fails).
      const env = qmdEnv(ws.index, {
        QMD_FAILPOINTS: 'store.worker.query=hang',
        QMD_DRAIN_TIMEOUT_MS: String(DRAIN_MS),
        ...(process.env.QMD_QUERY_WORKER !== undefined && { QMD_QUERY_WORKER: process.env.QMD_QUERY_WORKER }),
      });
      client = await startClient(ws.index, env, { args: ['--index', ws.index, 'mcp'], stderr: 'inherit' });
      serverPid = client.relayPid;
      expect(readIdentity(serverPid)?.cmdline).toContain('mcp');
      client.order({ op: 'query', query: 'sourdough oven', tag: 'q' });
      await client.p.waitForStderr(HIT);

      client.p.child.kill('SIGKILL');
      const killed = performance.now();
      // The server held the last write end of the client's stderr pipe: its end is the server's exit.
      await within(
        client.p.closed,
        () => `the server (pid ${serverPid}) gone within ${DRAIN_MS + 1000} ms; stderr:\n${client?.p.stderr()}`,
        DRAIN_MS + 1000,
      );
      const gone = performance.now() - killed;
      // Gone, or in its last instant: the kernel empties an exiting process's cmdline before it is reaped.
      expect(readIdentity(serverPid)?.cmdline ?? []).toEqual([]);
      const stderr = client.p.stderr();
      expect(stderr.match(/Shutting down \((stdin closed|parent exited)\)\.\.\./g)).toHaveLength(1);
      expect(stderr).toContain(`drain deadline of ${DRAIN_MS} ms passed with 1 handler(s) in flight`);
      expect(stderr).toMatch(/Shutdown complete in [\d.]+ ms: (stdin closed|parent exited): /);
      expect(stderr).not.toContain('held by');
      expect(gone).toBeLessThan(DRAIN_MS + 1000);
      process.stderr.write(`query-awake: server gone ${Math.round(gone)} ms after the client's SIGKILL\n`);
    } finally {
      client?.p.kill();
      if (serverPid > 0 && readIdentity(serverPid)?.cmdline.includes(QMD_BIN)) process.kill(serverPid, 'SIGKILL');
    }
  });
});
