/**
 * The folder filter as users reach it, spawned from the bundle: `qmd search|query --folder`
 * and the MCP `query` tool's `folder` in a running `qmd mcp`, whose queries run in the bundled
 * query worker (`dist/query-worker.mjs`). Every note says "sourdough", and `talkshow/` starts
 * like `talks/`: each check fails if the folder is ignored or matched by characters.
 */
import { Client } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import { ChildTransport } from '../support/child-transport.js';
import { indexedWorkspace, qmdEnv, runQmd, spawnMcp, textOf } from '../support/qmd.js';
import { waitForExit } from '../support/spawn.js';

const ws = indexedWorkspace({
  'sourdough.md': '# Sourdough\n\nA sourdough starter needs flour and water.\n',
  'talks/2024/keynote.md': '# Keynote\n\nOpening remarks on sourdough.\n',
  'talkshow/episode.md': '# Episode\n\nA sourdough episode.\n',
});
const env = qmdEnv(ws.index);

/** The files of `--json` results: qmd 2.8.3's array, each `file` a `qmd://` URI. */
const filesOf = (stdout: string): string[] => (JSON.parse(stdout) as Array<{ file: string }>).map((r) => r.file).sort();

describe('qmd search and query --folder', () => {
  it('find only the notes under the folder, by whole segments', async () => {
    for (const command of ['search', 'query']) {
      const all = await runQmd([command, 'sourdough', '--json'], env);
      expect(all.code, all.stderr).toBe(0);
      expect(filesOf(all.stdout)).toEqual([
        'qmd://notes/sourdough.md',
        'qmd://notes/talks/2024/keynote.md',
        'qmd://notes/talkshow/episode.md',
      ]);
      const talks = await runQmd([command, 'sourdough', '--folder', 'talks', '--json'], env);
      expect(talks.code, talks.stderr).toBe(0);
      expect(filesOf(talks.stdout)).toEqual(['qmd://notes/talks/2024/keynote.md']);
      const both = await runQmd([command, 'sourdough', '--folder', 'talks/2024/', '-c', 'notes', '--json'], env);
      expect(filesOf(both.stdout)).toEqual(['qmd://notes/talks/2024/keynote.md']);
    }
  });

  it.each([
    ['../secret', /^qmd: folder "\.\.\/secret" climbs out of the collection/],
    ['/etc', /^qmd: folder "\/etc" is not inside a collection/],
    ['talks//2024', /^qmd: folder "talks\/\/2024" has an empty or "\." segment/],
  ])('--folder %s exits 1 with one line on stderr and nothing on stdout', async (folder, message) => {
    for (const command of ['search', 'query']) {
      const result = await runQmd([command, 'sourdough', '--folder', folder], env);
      expect(result.code).toBe(1);
      expect(result.stdout).toBe('');
      expect(result.stderr.trim().split('\n')).toHaveLength(1);
      expect(result.stderr).toMatch(message);
    }
  });
});

describe('the query tool of a running qmd mcp', () => {
  it('takes folder through its query worker, and refuses one that leaves the collection', async () => {
    const p = spawnMcp(env);
    const client = new Client({ name: 'e2e-folder', version: '1.0.0' });
    try {
      await client.connect(new ChildTransport(p.child));
      const call = (args: Record<string, unknown>) => client.callTool({ name: 'query', arguments: args });
      const files = (result: unknown) =>
        (result as { structuredContent: { results: Array<{ file: string }> } }).structuredContent.results
          .map((r) => r.file)
          .sort();
      expect(files(await call({ query: 'sourdough' }))).toHaveLength(3);
      expect(files(await call({ query: 'sourdough', folder: 'talks' }))).toEqual(['notes/talks/2024/keynote.md']);
      const refused = await call({ query: 'sourdough', folder: 'talks/../..' });
      expect(refused.isError).toBe(true);
      expect(textOf(refused)).toMatch(/^folder "talks\/\.\.\/\.\." climbs out of the collection/);
      await client.close();
      expect(await waitForExit(p)).toEqual({ code: 0, signal: null });
    } finally {
      p.kill();
    }
  });
});
