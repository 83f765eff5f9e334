/**
 * `qmd get` and `qmd multi-get`, spawned: the same references the
 * MCP tools take, resolved by the same authority, and the whole path-escape table refused with
 * one line on stderr and nothing on stdout.
 */
import { mkdirSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pathEscapeCases } from '../support/path-escape.js';
import { qmdEnv, runQmd, tempWorkspace } from '../support/qmd.js';

const ws = tempWorkspace({
  'sqlite.md': '# SQLite notes\n\nWAL mode lets readers and a writer share the index.\nCheckpoint on close.\n',
  'readme.md': '# Notes\n',
  'deep/meeting-2024-01.md': '# Meeting\n\nAgenda: orphans.\n',
});
const journal = join(ws.dir, 'journal');
const env = () => qmdEnv(ws.index);
const qmd = (...args: string[]) => runQmd(args, env());

beforeAll(async () => {
  writeFileSync(join(ws.dir, 'secret.md'), 'zebrafish hunter2\n');
  symlinkSync(join(ws.dir, 'secret.md'), join(ws.notesDir, 'link.md'));
  // A second collection with its own readme.md, for ambiguity.
  mkdirSync(journal);
  writeFileSync(join(journal, 'readme.md'), '# Journal\n');
  for (const [dir, name] of [
    [ws.notesDir, 'notes'],
    [journal, 'journal'],
  ] as const) {
    const added = await qmd('collection', 'add', dir, '--name', name);
    expect(added.code, added.stderr).toBe(0);
  }
});
afterAll(() => ws.cleanup());

describe('qmd get', () => {
  it('reads the forms qmd 2.8 takes: no collection, a unique end, an absolute path, :FROM:COUNT', async () => {
    const cases: Array<[string, string]> = [
      ['sqlite.md', '# SQLite notes\n\nWAL mode lets readers and a writer share the index.\nCheckpoint on close.\n'],
      ['meeting-2024-01.md:3', 'Agenda: orphans.\n'],
      [`${realpathSync(ws.notesDir)}/sqlite.md:3:1`, 'WAL mode lets readers and a writer share the index.\n'],
      ['qmd://notes/deep/meeting-2024-01.md:1:1', '# Meeting\n'],
    ];
    for (const [ref, text] of cases) {
      const run = await qmd('get', ref);
      expect(run.code, `${ref}: ${run.stderr}`).toBe(0);
      expect(run.stdout, ref).toBe(`${text}`);
    }
  });

  it('numbers lines with --line-numbers, and keeps the raw text otherwise (scripts read it)', async () => {
    const numbered = await qmd('get', 'notes/sqlite.md', '--from', '3', '-l', '2', '--line-numbers');
    expect(numbered.stdout).toBe('3: WAL mode lets readers and a writer share the index.\n4: Checkpoint on close.\n');
  });

  it('a miss: exit 1 and one line with "Did you mean"; an ambiguous name lists the candidates', async () => {
    const miss = await qmd('get', 'notes/sqlite.mdx');
    expect(miss.code).toBe(1);
    expect(miss.stdout).toBe('');
    expect(miss.stderr).toBe('qmd: No indexed document "notes/sqlite.mdx". Did you mean: notes/sqlite.md?\n');
    const both = await qmd('get', 'readme.md');
    expect(both.code).toBe(1);
    expect(both.stderr).toBe(
      'qmd: "readme.md" matches 2 indexed documents: journal/readme.md, notes/readme.md; give one of these paths\n',
    );
  });

  it('refuses the whole path-escape table with one line on stderr and nothing on stdout', async () => {
    // argv cannot carry NUL: those cases cannot even be sent to a process.
    const cases = pathEscapeCases({ dir: ws.dir, notes: realpathSync(ws.notesDir) }).filter(
      (c) => !c.input.includes('\0'),
    );
    const runs = await inBatches(cases, 4, async ({ input, verdict }) => ({
      input,
      verdict,
      run: await qmd('get', input),
    }));
    for (const { input, verdict, run } of runs) {
      expect(run.code, input).toBe(1);
      expect(run.stdout, input).toBe('');
      expect(run.stderr, input).toMatch(/^qmd: [^\n]+\n$/);
      expect(run.stderr, input).not.toMatch(/zebrafish|hunter2|root:/);
      if (verdict === 'outside') expect(run.stderr, input).toContain('is outside the indexed collections');
      if (verdict === 'indexOnly') expect(run.stderr, input).toMatch(/^qmd: No indexed document/);
    }
    // About 50 processes: ~12 s on an idle 2-core machine, far more while the suite runs beside it.
  }, 240_000);
});

describe('qmd multi-get', () => {
  it('globs inside every collection, caps each file with --max-bytes, cuts with --lines', async () => {
    const all = await qmd('multi-get', '*.md', '--json');
    const files = (JSON.parse(all.stdout) as Array<{ file: string }>).map((d) => d.file);
    expect(files).toEqual(['journal/readme.md', 'notes/readme.md', 'notes/sqlite.md']);

    const capped = await qmd('multi-get', '**/*.md', '--max-bytes', '20', '--lines', '1', '--line-numbers');
    expect(capped.code, capped.stderr).toBe(0);
    expect(capped.stdout).toMatch(/^File: notes\/deep\/meeting-2024-01\.md {2}#[0-9a-f]{8}$/m);
    expect(capped.stdout).toContain('1: # Meeting\n');
    expect(capped.stderr).toBe('');

    // A document over --max-bytes is listed as skipped in its place, as qmd 2.8.3 lists it.
    const skipped = await qmd('multi-get', 'notes/sqlite.md, notes/readme.md', '--max-bytes', '20', '--files');
    expect(skipped.stdout).toMatch(/^#[0-9a-f]{8},notes\/readme\.md\n#[0-9a-f]{8},notes\/sqlite\.md,\[SKIPPED\]\n$/);
    const reasons = JSON.parse((await qmd('multi-get', 'notes/sqlite.md', '--max-bytes', '20', '--json')).stdout);
    expect(reasons).toEqual([
      {
        file: 'notes/sqlite.md',
        docid: expect.stringMatching(/^#[0-9a-f]{8}$/),
        title: 'SQLite notes',
        skipped: true,
        reason: expect.stringMatching(/^too large: \d+ bytes > maxBytes 20; use get with maxLines$/),
      },
    ]);
  });
});

async function inBatches<T, R>(items: T[], size: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = [];
  for (let i = 0; i < items.length; i += size) results.push(...(await Promise.all(items.slice(i, i + size).map(work))));
  return results;
}
