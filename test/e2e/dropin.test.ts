/**
 * Issue 23, item 1, against the built binary with SDK v2's real client over stdio (2026-07-28,
 * as a new client negotiates it): a fetched document carries the contexts that cover it, a
 * snippet says which lines it comes from, a sliced `get` is exactly its lines, and the tool
 * list says how long it is good for.
 */
import { Client } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import { ChildTransport } from '../support/child-transport.js';
import { indexedWorkspace, qmdEnv, runQmd, spawnMcp, textOf } from '../support/qmd.js';
import { waitForExit } from '../support/spawn.js';

const ws = indexedWorkspace({
  'a.md': '# A\n\nline three\nline four\nline five\n',
  'recipes/bread.md': '# Bread\n\nFlour, water, salt.\nSourdough needs a starter and time.\n',
});

describe('qmd mcp over stdio, 2026-07-28', () => {
  it('contexts on get and resources, snippet ranges, exact slices, cache hints', async () => {
    const added = await runQmd(['context', 'add', 'notes/recipes', 'Recipes I cook at home.'], qmdEnv(ws.index));
    expect(added.code, added.stderr).toBe(0);
    const server = spawnMcp(qmdEnv(ws.index));
    try {
      const transport = new ChildTransport(server.child);
      const client = new Client(
        { name: 'e2e-dropin', version: '1.0.0' },
        { versionNegotiation: { mode: { pin: '2026-07-28' } } },
      );
      await client.connect(transport);
      await client.listTools();
      const wire = transport.lines.map((line) => JSON.parse(line) as { result?: Record<string, unknown> });
      expect(wire.find((m) => m.result && 'tools' in m.result)?.result).toMatchObject({
        ttlMs: 3_600_000,
        cacheScope: 'private',
      });
      expect(wire.find((m) => m.result && 'supportedVersions' in m.result)?.result).toMatchObject({
        ttlMs: 60_000,
        cacheScope: 'private',
      });

      const got = await client.callTool({ name: 'get', arguments: { file: 'bread.md', lineNumbers: false } });
      expect(textOf(got)).toBe(
        '<!-- Context: Recipes I cook at home. -->\n\n# Bread\n\nFlour, water, salt.\nSourdough needs a starter and time.\n',
      );
      expect(got.structuredContent).toMatchObject({
        file: 'notes/recipes/bread.md',
        context: 'Recipes I cook at home.',
      });
      const plain = await client.callTool({ name: 'get', arguments: { file: 'a.md', lineNumbers: false } });
      expect(textOf(plain).startsWith('# A')).toBe(true);
      expect(plain.structuredContent).not.toHaveProperty('context');

      const read = await client.readResource({ uri: 'qmd://notes/recipes/bread.md' });
      expect((read.contents[0] as { text: string }).text).toMatch(
        /^<!-- Context: Recipes I cook at home\. -->\n\n# Bread/,
      );
      // On the wire, as qmd 2.8 sends them: the name and the title beside the text (the SDK's
      // client keeps only what MCP's ResourceContents lists).
      const readReply = transport.lines
        .map((line) => JSON.parse(line) as { result?: { contents?: Array<Record<string, unknown>> } })
        .find((m) => m.result?.contents !== undefined);
      expect(readReply?.result?.contents?.[0]).toMatchObject({
        uri: 'qmd://notes/recipes/bread.md',
        name: 'notes/recipes/bread.md',
        title: 'Bread',
        mimeType: 'text/markdown',
      });

      const found = await client.callTool({ name: 'query', arguments: { query: 'starter' } });
      expect(textOf(found)).toMatch(/ {2}@@ -\d+,\d+ @@ .*\*\*starter\*\*/);
      const hit = (found.structuredContent as { results: Array<{ snippetRange: { fromLine: number; lines: number } }> })
        .results[0];
      expect(hit?.snippetRange.fromLine).toBeGreaterThanOrEqual(1);
      expect(hit?.snippetRange.fromLine ?? 0).toBeLessThanOrEqual(4);
      expect((hit?.snippetRange.fromLine ?? 0) + (hit?.snippetRange.lines ?? 0) - 1).toBe(4);

      const sliced = await client.callTool({ name: 'get', arguments: { file: 'notes/a.md:3:2', lineNumbers: false } });
      expect((sliced.content as Array<{ resource: { text: string } }>)[0]?.resource.text).toBe('line three\nline four');

      await transport.close();
      expect(await waitForExit(server)).toEqual({ code: 0, signal: null });
    } finally {
      server.kill();
    }
  });
});
