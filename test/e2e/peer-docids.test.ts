/**
 * Every docid the real qmd 2.8.3 prints (`npm run peer:install`) opens the same note in ours
 * after `qmd migrate`: by the CLI's `get` and `multi-get`, and by the MCP `get` and
 * `multi_get` tools of `qmd mcp`. The peer indexes notes whose bytes and text differ (a
 * byte-order mark, Latin-1 bytes, CRLF) and two with the same text, which share one docid:
 * ours lists both, as AMBIGUOUS does elsewhere, where qmd 2.x silently picks one.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runPeer, sharedHome } from '../support/peer.js';
import { PEER_NOTES } from '../support/peer-corpus.js';
import { runQmd, textOf } from '../support/qmd.js';
import { sdkSession } from '../support/sdk-session.js';

const dir = mkdtempSync(join(tmpdir(), 'qmd-peer-docids-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const home = sharedHome(dir);
const root = join(dir, 'corpus');

/** Besides the peer corpus: what makes a file's bytes and its text differ, and a twin. */
const SPECIAL: Record<string, Buffer> = {
  'notes/bom.md': Buffer.concat([
    Buffer.from([0xef, 0xbb, 0xbf]),
    Buffer.from('# Marked\n\nA note saved with a mark.\n'),
  ]),
  'notes/latin1.md': Buffer.from('# Caf\xe9 notes\n\nSaved as Latin-1 by an old editor.\n', 'latin1'),
  'notes/crlf.md': Buffer.from('# Windows\r\n\r\nLines end in CRLF.\r\n'),
  'notes/twins/one.md': Buffer.from('# Twin\n\nThe same text in two files.\n'),
  'notes/twins/two.md': Buffer.from('# Twin\n\nThe same text in two files.\n'),
  'notes/Ünïcödé name.md': Buffer.from('# Unicode\n\nA name with accents.\n'),
};

/** `qmd://collection/path` → the docid qmd 2.8.3 printed for it. */
const printed = new Map<string, string>();

const peer = async (...args: string[]) => {
  const run = await runPeer(args, home.env, root);
  expect(run.code, `qmd 2.8.3 ${args.join(' ')}: ${run.stderr}`).toBe(0);
  return run.stdout;
};

beforeAll(async () => {
  for (const [file, text] of Object.entries({ ...PEER_NOTES, ...SPECIAL })) {
    mkdirSync(dirname(join(root, file)), { recursive: true });
    writeFileSync(join(root, file), text);
  }
  await peer('collection', 'add', join(root, 'notes'), '--name', 'notes');
  await peer('collection', 'add', join(root, 'docs'), '--name', 'docs');
  // Every docid the peer prints: `get` of each file it lists (its first line is `URI  #docid`)…
  for (const collection of ['notes', 'docs']) {
    const uris = (await peer('ls', collection))
      .split('\n')
      .map((line) => /(qmd:\/\/\S.*)$/.exec(line)?.[1]?.trim())
      .filter((uri): uri is string => uri !== undefined);
    for (const uri of uris) {
      const [first] = (await peer('get', uri)).split('\n');
      const match = /^(qmd:\/\/.+?)\s+#([0-9a-f]{6})$/.exec(first ?? '');
      expect(match, `qmd 2.8.3 get ${uri}: ${first}`).not.toBeNull();
      printed.set(match?.[1] as string, match?.[2] as string);
    }
  }
  // …and the same ones in its search results.
  for (const words of ['sourdough', 'zephyrine', 'bearer token', 'mark', 'twin']) {
    for (const hit of JSON.parse(await peer('search', words, '--json', '-n', '20')) as Array<{
      file: string;
      docid: string;
    }>) {
      expect(printed.get(hit.file), `${hit.file} in search`).toBe(hit.docid.slice(1));
    }
  }
  const migrated = await runQmd(['migrate'], home.env);
  expect(migrated.code, migrated.stderr).toBe(0);
}, 240_000);

/** The docids and the notes that share each (two only for the twins). */
function byDocid(): Map<string, string[]> {
  const notes = new Map<string, string[]>();
  for (const [uri, id] of printed) notes.set(id, [...(notes.get(id) ?? []), uri.slice('qmd://'.length)]);
  return notes;
}

/** What the note's file holds, as we serve it: the text without a leading mark. */
function textOf2x(file: string): string {
  return readFileSync(join(root, file))
    .toString('utf8')
    .replace(/^\uFEFF/, '');
}

describe("qmd 2.8.3's docids after qmd migrate", () => {
  it('the peer printed one for every note it indexed, the twins one between them', () => {
    const files = Object.keys({ ...PEER_NOTES, ...SPECIAL }).filter(
      (file) => /^(notes|docs)\//.test(file) && file.endsWith('.md') && !/\/(\.hidden|archive|build)\//.test(file),
    );
    expect(printed.size).toBeGreaterThanOrEqual(files.length - 1);
    expect(byDocid().get(printed.get('qmd://notes/twins/one.md') as string)).toEqual([
      'notes/twins/one.md',
      'notes/twins/two.md',
    ]);
  });

  it('CLI get: each opens the same note, as #id and as the bare id; the shared one lists both', async () => {
    // The bare id (prompts drop the `#`) for the notes whose bytes and text differ, and the twins.
    const bare = new Set(['notes/bom.md', 'notes/latin1.md', 'notes/crlf.md', 'notes/twins/one.md']);
    for (const [id, files] of byDocid()) {
      for (const ref of files.some((file) => bare.has(file)) ? [`#${id}`, id] : [`#${id}`]) {
        const run = await runQmd(['get', ref, '--json'], home.env);
        if (files.length === 1) {
          expect(run.code, `get ${ref}: ${run.stderr}`).toBe(0);
          const slice = JSON.parse(run.stdout) as { file: string; text: string };
          expect(slice.file, ref).toBe(files[0]);
          expect(slice.text, ref).toBe(textOf2x(slice.file));
        } else {
          expect(run.code).toBe(1);
          expect(run.stdout).toBe('');
          expect(run.stderr).toMatch(
            new RegExp(
              `^qmd: "${ref}" is the qmd 2.x docid of 2 indexed documents: notes/twins/one.md \\(#[0-9a-f]{8}\\), notes/twins/two.md \\(#[0-9a-f]{8}\\); give one of these paths or docids\\n$`,
            ),
          );
        }
      }
    }
  });

  it('CLI multi-get: a list of them opens each', async () => {
    const unique = [...byDocid()].filter(([, files]) => files.length === 1);
    const run = await runQmd(['multi-get', unique.map(([id]) => `#${id}`).join(','), '--json'], home.env);
    expect(run.code, run.stderr).toBe(0);
    const docs = JSON.parse(run.stdout) as Array<{ file: string }>;
    expect(docs.map((d) => d.file).sort()).toEqual(unique.map(([, files]) => files[0]).sort());
  });

  it('MCP get and multi_get: the same notes, and the shared one is an error result listing both', async () => {
    const session = await sdkSession(home.env, 'peer-docids');
    try {
      for (const [id, files] of byDocid()) {
        const result = (await session.client.callTool({
          name: 'get',
          arguments: { file: `#${id}`, lineNumbers: false },
        })) as {
          isError?: boolean;
          structuredContent?: { file: string };
        };
        if (files.length === 1) {
          expect(result.isError, `#${id}: ${textOf(result)}`).toBeFalsy();
          expect(result.structuredContent?.file).toBe(files[0]);
          // The note as an embedded resource, as qmd 2.x returns it.
          expect(textOf(result)).toBe(textOf2x(files[0] as string));
        } else {
          expect(result.isError).toBe(true);
          expect(textOf(result)).toContain('notes/twins/one.md (#');
          expect(textOf(result)).toContain('notes/twins/two.md (#');
        }
      }
      const unique = [...byDocid()].filter(([, files]) => files.length === 1);
      const many = (await session.client.callTool({
        name: 'multi_get',
        arguments: { pattern: unique.map(([id]) => `#${id}`).join(', ') },
      })) as { structuredContent?: { documents: Array<{ file: string }>; skipped: unknown[] } };
      expect(many.structuredContent?.skipped).toEqual([]);
      expect(many.structuredContent?.documents.map((d) => d.file).sort()).toEqual(
        unique.map(([, files]) => files[0]).sort(),
      );
    } finally {
      await session.client.close();
      session.kill();
    }
  });
});
