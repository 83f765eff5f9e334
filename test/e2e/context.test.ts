/**
 * `qmd context add|list|rm`, spawned as users run it, against a real index; then
 * a spawned `qmd mcp` shows a context on its results and in its instructions, and a context
 * added while that server runs shows up in its next result.
 */
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChildTransport } from '../support/child-transport.js';
import { QMD_BIN, qmdEnv, runQmd, spawnMcp, tempWorkspace } from '../support/qmd.js';
import { spawnProcess, waitForExit } from '../support/spawn.js';

const ws = tempWorkspace({
  'sqlite.md': '# SQLite notes\n\nWAL mode lets readers and a writer share the index.\n',
  'talks/2024/keynote.md': '# Keynote\n\nOpening remarks on sourdough.\n',
  'talkshow/episode.md': '# Episode\n\nA sourdough episode.\n',
});
const env = qmdEnv(ws.index);

/** `qmd ARGS` from `cwd`, to completion. */
async function qmdIn(cwd: string, args: string[]) {
  const p = spawnProcess(process.execPath, [QMD_BIN, ...args], { env, cwd });
  p.child.stdin?.end();
  const exit = await p.exited;
  return { code: exit.code, stdout: p.stdout(), stderr: p.stderr() };
}

beforeAll(async () => {
  const added = await runQmd(['collection', 'add', ws.notesDir, '--name', 'notes'], env);
  expect(added.code, added.stderr).toBe(0);
});
afterAll(() => ws.cleanup());

describe('qmd context', () => {
  it('add, list, replace, rm: one line each on stdout', async () => {
    const empty = await runQmd(['context', 'list'], env);
    expect(empty).toMatchObject({
      code: 0,
      stdout: "No contexts configured. Use 'qmd context add' to add one.\n",
    });

    const add = await runQmd(['context', 'add', 'notes/talks', 'Talks', 'I gave.'], env);
    expect(add).toMatchObject({ code: 0, stdout: 'Added context for notes/talks: Talks I gave.\n', stderr: '' });
    expect((await runQmd(['context', 'add', '/', 'Everything here is mine.'], env)).code).toBe(0);
    const replace = await runQmd(['context', 'add', 'qmd://notes/talks/', 'Talks, 2019 on.'], env);
    expect(replace.stdout).toBe('Replaced context for notes/talks: Talks, 2019 on.\n');

    const list = await runQmd(['context', 'list'], env);
    // qmd 2.8.3's layout: by collection, `*` for the global context.
    expect(list.stdout).toBe(
      '\nConfigured Contexts\n\n*\n  /\n    Everything here is mine.\nnotes\n  talks\n    Talks, 2019 on.\n',
    );
    const json = JSON.parse((await runQmd(['context', 'list', '--json'], env)).stdout) as Array<{ path: string }>;
    expect(json.map((c) => c.path)).toEqual(['/', 'notes/talks']);

    const status = JSON.parse((await runQmd(['status', '--json'], env)).stdout) as { contexts: unknown[] };
    expect(status.contexts).toHaveLength(2);

    expect(await runQmd(['context', 'rm', '/'], env)).toMatchObject({ code: 0, stdout: '✓ Removed global context\n' });
    expect((await runQmd(['context', 'remove', 'notes/talks'], env)).code).toBe(0);
    expect((await runQmd(['context', 'list', '--json'], env)).stdout.trim()).toBe('[]');
  });

  it('reads a folder on disk, from the current directory, as qmd 2.8 does', async () => {
    const talks = join(ws.notesDir, 'talks');
    const dot = await qmdIn(talks, ['context', 'add', '.', 'Talks.']);
    expect(dot.stdout).toBe('Added context for notes/talks: Talks.\n');
    // qmd 2.x's short form: the text alone is for the current folder.
    const here = await qmdIn(talks, ['context', 'add', 'Talks I gave.']);
    expect(here.stdout).toBe('Replaced context for notes/talks: Talks I gave.\n');
    const relative = await qmdIn(talks, ['context', 'add', '2024', 'The 2024 ones.']);
    expect(relative.stdout).toBe('Added context for notes/talks/2024: The 2024 ones.\n');
    const absolute = await runQmd(['context', 'rm', join(talks, '2024')], env);
    expect(absolute.stdout).toBe('✓ Removed context for: qmd://notes/talks/2024\n');
    expect((await runQmd(['context', 'rm', 'notes/talks'], env)).code).toBe(0);
  });

  it.each([
    [['context', 'add', 'nope', 'x'], 1, /^qmd: No collection named "nope" \(known: notes\), and no folder .*nope/],
    [['context', 'add', 'notes/../x', 'x'], 1, /^qmd: A context path may not contain "\.\.": notes\/\.\.\/x$/],
    [['context', 'add', '/tmp', 'x'], 1, /^qmd: \/tmp is not inside any collection; collections: notes \(/],
    [['context', 'add', 'notes', '   '], 1, /^qmd: A context needs some text/],
    [['context', 'rm', 'notes'], 1, /^qmd: No context for notes; contexts: \(none\)$/],
    // qmd 2.x's meaning: the text alone is the current folder's context (here not in a collection).
    [['context', 'add', 'notes'], 1, /^qmd: \S+ is not inside any collection; collections: notes \(/],
    [['context', 'add'], 2, /missing required argument 'path'/],
    [['context', 'rm'], 2, /missing required argument 'path'/],
  ])(
    'qmd %j exits %i with one clear line on stderr, nothing on stdout, nothing changed',
    async (args, code, message) => {
      const result = await runQmd(args, env);
      expect(result.code).toBe(code);
      expect(result.stdout).toBe('');
      expect(result.stderr.split('\n')[0]).toMatch(message);
      if (code === 1) expect(result.stderr.trim().split('\n')).toHaveLength(1);
      expect((await runQmd(['context', 'list', '--json'], env)).stdout.trim()).toBe('[]');
    },
  );
});

describe('contexts in a running qmd mcp', () => {
  it('are on its results and in its instructions; one added meanwhile shows up in the next result', async () => {
    expect((await runQmd(['context', 'add', 'notes', 'Work notes.'], env)).code).toBe(0);
    const p = spawnMcp(env);
    const client = new Client({ name: 'e2e-context', version: '1.0.0' });
    try {
      await client.connect(new ChildTransport(p.child));
      expect(client.getInstructions()).toContain('  - notes: Work notes.');
      const before = (await client.callTool({ name: 'query', arguments: { query: 'sourdough' } })) as {
        structuredContent: { results: Array<{ file: string; context?: string }> };
      };
      expect(before.structuredContent.results.map((r) => r.context)).toEqual(['Work notes.', 'Work notes.']);

      expect((await runQmd(['context', 'add', 'notes/talks', 'Talks I gave.'], env)).code).toBe(0);
      const after = (await client.callTool({ name: 'query', arguments: { query: 'sourdough' } })) as {
        structuredContent: { results: Array<{ file: string; context?: string }> };
      };
      const byFile = Object.fromEntries(after.structuredContent.results.map((r) => [r.file, r.context]));
      expect(byFile['notes/talks/2024/keynote.md']).toBe('Work notes.\n\nTalks I gave.');
      expect(byFile['notes/talkshow/episode.md']).toBe('Work notes.');
      await client.close();
      expect(await waitForExit(p)).toEqual({ code: 0, signal: null });
    } finally {
      p.kill();
    }
  });
});
