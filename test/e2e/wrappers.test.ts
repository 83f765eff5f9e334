/**
 * qmd started through wrappers and preloads, as clients and their frameworks start servers
 * (docs/design.md §8.4): the MCP SDK's own stdio scenario runs `node --input-type=module -e
 * "…await import(qmd)"`, and people add `--require`/`--import` preloads and V8 flags. Every
 * tool answers over a real MCP Client, plain and `--shared`, and nothing says the query worker
 * failed: the worker and the shared server never inherit a wrapper's flags
 * (`src/node-flags.ts`).
 */
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/client';
import { afterAll, describe, expect, it } from 'vitest';
import { ChildTransport } from '../support/child-transport.js';
import { indexedWorkspace, QMD_BIN, qmdEnv, textOf } from '../support/qmd.js';
import { spawnProcess, waitForExit } from '../support/spawn.js';
import { cleanPlace, sharedServerPids } from './fixtures/shared.js';

const ws = indexedWorkspace();
const PRELOAD_CJS = fileURLToPath(new URL('./fixtures/preload.cjs', import.meta.url));
const PRELOAD_MJS = fileURLToPath(new URL('./fixtures/preload.mjs', import.meta.url));
/** What the SDK's scenario does: the program is `-e`, qmd its import, argv fixed up first. */
const EVAL = `process.argv.splice(1, 0, ${JSON.stringify(QMD_BIN)}); await import(${JSON.stringify(pathToFileURL(QMD_BIN).href)});`;

const WRAPPERS: Array<[string, string[]]> = [
  ['node --input-type=module -e "…await import(qmd)"', ['--input-type=module', '-e', EVAL]],
  ['node --require preload.cjs', ['--require', PRELOAD_CJS, QMD_BIN]],
  ['node --import preload.mjs', ['--import', PRELOAD_MJS, QMD_BIN]],
  ['node --max-old-space-size=512 --stack-size=2000', ['--max-old-space-size=512', '--stack-size=2000', QMD_BIN]],
];

afterAll(() => {
  for (const pid of sharedServerPids(ws.index)) process.kill(pid, 'SIGKILL');
  cleanPlace(ws.index);
});

async function everyTool(client: Client): Promise<void> {
  const found = await client.callTool({ name: 'query', arguments: { query: 'sourdough starter' } });
  expect(found.isError, textOf(found)).toBeFalsy();
  const results = (found.structuredContent as { results: Array<{ docid: string }> }).results;
  expect(results.length).toBeGreaterThan(0);
  const doc = await client.callTool({ name: 'get', arguments: { file: results[0]!.docid } });
  expect(doc.isError, textOf(doc)).toBeFalsy();
  expect(textOf(doc)).toContain('Flour, water, salt and time.');
  const many = await client.callTool({ name: 'multi_get', arguments: { pattern: 'notes/**/*.md' } });
  expect(many.isError, textOf(many)).toBeFalsy();
  const status = await client.callTool({ name: 'status', arguments: {} });
  expect(status.isError, textOf(status)).toBeFalsy();
  expect(textOf(status)).toContain('notes');
}

describe.each([
  ['qmd mcp', ['mcp']],
  ['qmd mcp --shared', ['mcp', '--shared']],
])('%s under wrappers', (_, args) => {
  it.each(WRAPPERS)('%s: every tool answers, and the query worker runs', async (_, flags) => {
    const env = qmdEnv(ws.index, { QMD_SHARED_IDLE_MS: '60000' });
    const p = spawnProcess(process.execPath, [...flags, ...args], { env });
    const client = new Client({ name: 'wrapped', version: '1' });
    try {
      await client.connect(new ChildTransport(p.child));
      await everyTool(client);
      await client.close();
      expect(await waitForExit(p)).toEqual({ code: 0, signal: null });
      expect(p.stderr()).not.toMatch(/query worker/);
      expect(p.stderr()).not.toMatch(/serving this client alone/);
    } finally {
      p.kill();
    }
  });
});
