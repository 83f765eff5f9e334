/**
 * Output and exit codes a qmd 2.x user notices, side by side with the real qmd 2.8.3 (`npm run
 * peer:install`) on the same corpus, ours migrated from its files: `multi-get` that matches
 * nothing (its line on stderr, exit 1), a list item that names nothing, a title longer than 200
 * characters printed whole in text and `--json`, and `vsearch` before anything is embedded
 * ("No results found.", exit 0, a line saying to run `qmd embed`).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordStarts } from '../support/output-shapes.js';
import { runPeer } from '../support/peer.js';
import { peerIndexedHome } from '../support/peer-corpus.js';
import { runQmd } from '../support/qmd.js';

const dir = mkdtempSync(join(tmpdir(), 'qmd-peer-output-'));
let home: Awaited<ReturnType<typeof peerIndexedHome>>;
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A heading of 317 characters: qmd cut titles at 200, qmd 2.x prints them whole. */
const LONG_TITLE = `The ${'quite '.repeat(50)}long heading of a meeting note about the zebu`;

beforeAll(async () => {
  home = await peerIndexedHome(dir);
  const migrated = await runQmd(['migrate'], home.env);
  expect(migrated.code, migrated.stderr).toBe(0);
  writeFileSync(join(home.root, 'notes', 'long-title.md'), `# ${LONG_TITLE}\n\nThe zebu grazes.\n`);
  for (const run of [await runPeer(['update'], home.env, home.root), await runQmd(['update'], home.env)]) {
    expect(run.code, run.stderr).toBe(0);
  }
}, 180_000);

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

async function both(...args: string[]): Promise<{ peer: Run; ours: Run }> {
  return { peer: await runPeer(args, home.env, home.root), ours: await runQmd(args, home.env) };
}

/** stderr less the peer's own note that its optional sqlite-vec binary is not installed here. */
const said = (stderr: string) =>
  stderr.split('\n').filter((line) => line !== '' && !/sqlite-vec|sqlite_vec/i.test(line));

describe('multi-get that finds nothing', () => {
  it('a glob: "No files matched pattern: P" on stderr, nothing on stdout, exit 1 — in every format', async () => {
    for (const format of [[], ['--json'], ['--files']]) {
      const { peer, ours } = await both('multi-get', 'notes/none/*.md', ...format);
      expect(peer.code, peer.stderr).toBe(1);
      expect(ours.code, ours.stderr).toBe(1);
      expect(said(peer.stderr)).toEqual(['No files matched pattern: notes/none/*.md']);
      expect(said(ours.stderr)).toEqual(said(peer.stderr));
      expect(ours.stdout).toBe('');
      expect(peer.stdout).toBe('');
    }
  });

  it('a list with one item that names nothing: "File not found: X" on stderr, the others printed, exit 0', async () => {
    const { peer, ours } = await both('multi-get', 'notes/sqlite.md,notes/missing.md', '--files');
    expect(peer.code).toBe(0);
    expect(ours.code).toBe(0);
    expect(said(ours.stderr)).toEqual(['File not found: notes/missing.md']);
    expect(said(ours.stderr)).toEqual(said(peer.stderr));
    const start = /^#[0-9a-f]+,/;
    expect(recordStarts(ours.stdout, start)).toHaveLength(1);
    expect(recordStarts(peer.stdout, start)).toHaveLength(1);
  });
});

describe('titles', () => {
  it('a title of 317 characters is printed whole, in --json and in the terminal format', async () => {
    const json = await both('search', 'zebu', '--json');
    const titles = (s: string) => (JSON.parse(s) as Array<{ title: string }>).map((r) => r.title);
    expect(titles(json.ours.stdout)).toEqual([LONG_TITLE]);
    expect(titles(json.ours.stdout)).toEqual(titles(json.peer.stdout));
    const cli = await both('search', 'zebu');
    const titleLine = (s: string) => s.split('\n').find((l) => l.startsWith('Title: '));
    expect(titleLine(cli.ours.stdout)).toBe(`Title: ${LONG_TITLE}`);
    expect(titleLine(cli.ours.stdout)).toBe(titleLine(cli.peer.stdout));
  });
});

describe('vsearch before embed', () => {
  it('"No results found.", exit 0, and a line saying to run qmd embed (never "BM25 only": vsearch runs none)', async () => {
    const { peer, ours } = await both('vsearch', 'sourdough');
    expect(peer.code).toBe(0);
    expect(ours.code).toBe(0);
    expect(ours.stdout).toBe('No results found.\n');
    expect(ours.stdout).toBe(peer.stdout);
    expect(said(peer.stderr).join('\n')).toContain("Run 'qmd embed'");
    expect(said(ours.stderr)).toEqual([
      '(vector: nothing is embedded yet: vsearch has no vectors to search (run qmd embed; qmd search works without them))',
    ]);
    // The same words find notes with BM25 in both.
    const search = await both('search', 'sourdough', '--files');
    expect(recordStarts(search.ours.stdout, /^#[0-9a-f]+,/).length).toBeGreaterThan(0);
    expect(recordStarts(search.ours.stdout, /^#[0-9a-f]+,/).length).toBe(
      recordStarts(search.peer.stdout, /^#[0-9a-f]+,/).length,
    );
  });
});
