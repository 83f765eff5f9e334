/**
 * The flags of `qmd --embed-model M mcp --shared` reach the shared server the relay starts. The
 * flag is not passed on as an invented environment variable (src/cli/config.ts): the server is
 * started with `--index` and `--embed-model`, so this runs with no `QMD_EMBED_MODEL` anywhere.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChildTransport } from '../support/child-transport.js';
import { tinyModelPath } from '../support/gguf.js';
import { QMD_BIN, qmdEnv, runQmd, tempWorkspace } from '../support/qmd.js';
import { spawnProcess, waitForExit } from '../support/spawn.js';
import { PROC_MODES } from './fixtures/proc-modes.js';
import { eventually, serverLog, sharedServerPids } from './fixtures/shared.js';

describe.each(PROC_MODES)('qmd --embed-model M mcp --shared, $mode', ({ extra }) => {
  const ws = tempWorkspace({ 'bread.md': '# Bread\n\nSourdough needs a starter, flour, water and salt.\n' });
  const runtime = mkdtempSync(join(tmpdir(), 'qmd-run-'));
  const model = tinyModelPath();
  let env: NodeJS.ProcessEnv;
  beforeAll(async () => {
    env = qmdEnv(ws.index, {
      QMD_EMBED_THREADS: '1',
      XDG_RUNTIME_DIR: runtime,
      QMD_SHARED_IDLE_MS: '100',
      // A cold server on a loaded machine can take longer than the default 5 s to greet.
      QMD_SHARED_CONNECT_MS: '30000',
      ...extra,
    });
    expect(env.QMD_EMBED_MODEL).toBeUndefined();
    expect((await runQmd(['collection', 'add', ws.notesDir, '--name', 'notes'], env)).code).toBe(0);
    const embedded = await runQmd(['--embed-model', model, 'embed'], env);
    expect(embedded.code, embedded.stderr).toBe(0);
  });
  afterAll(() => {
    for (const pid of sharedServerPids(ws.index)) process.kill(pid, 'SIGKILL');
    ws.cleanup();
    rmSync(runtime, { recursive: true, force: true });
  });

  it('starts the shared server with that model: hybrid answers, and the server loaded M', async () => {
    const relay = spawnProcess(process.execPath, [QMD_BIN, '--embed-model', model, 'mcp', '--shared'], { env });
    try {
      const transport = new ChildTransport(relay.child);
      const client = new Client({ name: 'flags', version: '1' });
      await client.connect(transport);
      const answer = await client.callTool({ name: 'query', arguments: { query: 'sourdough starter' } });
      expect(answer.isError).not.toBe(true);
      expect(answer.structuredContent).toMatchObject({ mode: 'hybrid' });
      expect(sharedServerPids(ws.index)).toHaveLength(1);
      expect(serverLog(ws.index, env)).toContain(`embedding model loaded: ${model}`);
      // Served by the shared server, not by the relay alone.
      expect(relay.stderr()).not.toContain('serving this client alone');
      await transport.close();
      expect(await waitForExit(relay)).toEqual({ code: 0, signal: null });
      await eventually(() => sharedServerPids(ws.index).length === 0, 'the shared server gone');
    } finally {
      relay.kill();
    }
  });
});
