/**
 * Nothing a user can set makes the shipped binary dispose llama.cpp under a running call.
 * The naive dispose order the benchmarks count crashes of used to sit in
 * `src/` behind `QMD_UNSAFE_DISPOSE`; it now lives in `bench/contenders/` and reaches a store
 * only through `StoreOptions.createEmbedder`, which only code can pass. Checked on what ships
 * (`dist/`, built by `npm test`) and on a spawned server given the old variable.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChildTransport } from '../support/child-transport.js';
import { tinyModelPath } from '../support/gguf.js';
import { qmdEnv, runQmd, spawnMcp, tempWorkspace } from '../support/qmd.js';
import { waitForExit } from '../support/spawn.js';

const DIST = fileURLToPath(new URL('../../dist/', import.meta.url));
const OLD_SWITCH = 'QMD_UNSAFE_DISPOSE';

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? filesUnder(join(dir, entry.name)) : [join(dir, entry.name)],
  );
}

const ws = tempWorkspace({
  'sqlite.md': '# SQLite\n\nWAL mode lets readers and a writer share the index. Checkpoint on close.\n',
  'bread.md': '# Bread\n\nSourdough needs a starter, flour, water and salt.\n',
});
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  env = qmdEnv(ws.index, { QMD_EMBED_MODEL: tinyModelPath(), QMD_EMBED_THREADS: '1' });
  for (const args of [['collection', 'add', ws.notesDir, '--name', 'notes'], ['embed']]) {
    const run = await runQmd(args, env);
    expect(run.code, run.stderr).toBe(0);
  }
});
afterAll(() => ws.cleanup());

describe('the shipped binary has no unsafe dispose path', () => {
  it('nothing in dist/ reads the old switch or carries the naive disposer', () => {
    // The bundle: dist/qmd.mjs, its chunks and qmd mcp's code-cached script.
    const shipped = filesUnder(DIST).filter((f) => /\.(mjs|cjs|js)$/.test(f));
    expect(shipped).toContain(join(DIST, 'qmd.mjs'));
    expect(shipped.some((f) => f.endsWith('.cjs'))).toBe(true);
    const offending = shipped.filter((file) => {
      const text = readFileSync(file, 'utf8');
      return text.includes(OLD_SWITCH) || text.includes('naive-dispose') || text.includes('unsafeDispose');
    });
    expect(offending).toEqual([]);
  });

  it(`qmd mcp with ${OLD_SWITCH} set: no experiment mode, the call running at close is waited for, exit 0`, async () => {
    const server = spawnMcp({ ...env, [OLD_SWITCH]: 'all', QMD_DEBUG_EMBED: '1' });
    const transport = new ChildTransport(server.child);
    try {
      const client = new Client({ name: 'unsafe-dispose', version: '1.0.0' });
      await client.connect(transport);
      // Hundreds of tokens, so the native call lasts; under the tool's 2,000 characters.
      const query = Array.from({ length: 120 }, (_, i) => `sourdough ${i}`).join(' ');
      const pending = client.callTool({ name: 'query', arguments: { query } }).catch(() => undefined);
      await server.waitForStderr('QMD debug: embedding call entering llama.cpp', 60_000);
      await transport.close();
      expect(await waitForExit(server, 60_000)).toEqual({ code: 0, signal: null });
      await pending;
      const stderr = server.stderr();
      expect(stderr).not.toContain(OLD_SWITCH);
      expect(stderr).not.toContain('QMD Warning:');
      expect(stderr).toMatch(
        /QMD debug: closing: \d embedding call\(s\) running natively[\s\S]*embedding model disposed/,
      );
    } finally {
      server.kill();
    }
  }, 180_000);
});
