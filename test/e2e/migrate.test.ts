/**
 * `qmd migrate` against a real qmd 2.8.3 (`npm run peer:install`): the peer indexes a corpus
 * with contexts, an update command, an excluded collection and an `ignore:` (BM25 only, no
 * models), then ours migrates from its files at their default places, and the two are
 * compared: collections and their settings, contexts, document counts, the top hits of a few
 * searches. The peer's files must be byte for byte as they were, and the peer must still work.
 */
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runPeer, sharedHome } from '../support/peer.js';
import { PEER_CONTEXTS, peerIndexedHome } from '../support/peer-corpus.js';
import { runQmd } from '../support/qmd.js';

const dir = mkdtempSync(join(tmpdir(), 'qmd-migrate-'));
let home: Awaited<ReturnType<typeof peerIndexedHome>>;
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface PeerHit {
  file: string;
  docid: string;
}
const searches = [['zephyrine'], ['sourdough'], ['quokka'], ['bearer token'], ['lantern', '-c', 'wiki']];

/** Each search's files, in the peer's order. */
async function peerSearches(): Promise<string[][]> {
  const out: string[][] = [];
  for (const args of searches) {
    const run = await runPeer(['search', ...args, '--json', '-n', '10'], home.env);
    expect(run.code, run.stderr).toBe(0);
    out.push((JSON.parse(run.stdout) as PeerHit[]).map((hit) => hit.file));
  }
  return out;
}

function fingerprint(file: string): string {
  return `${createHash('sha256').update(readFileSync(file)).digest('hex')} ${statSync(file).mtimeMs} ${statSync(file).mode}`;
}

let before: { index: string; config: string; files: string[]; hits: string[][] };
let migrated: { code: number | null; stdout: string; stderr: string };

beforeAll(async () => {
  home = await peerIndexedHome(dir);
  before = {
    index: fingerprint(home.peerIndex),
    config: fingerprint(home.peerConfig),
    files: readdirSync(join(home.env.XDG_CACHE_HOME as string, 'qmd')).sort(),
    hits: await peerSearches(),
  };
  migrated = await runQmd(['migrate'], home.env);
}, 180_000);

async function ours(args: string[]): Promise<string> {
  const run = await runQmd(args, home.env);
  expect(run.code, `qmd ${args.join(' ')}: ${run.stderr}`).toBe(0);
  return run.stdout;
}

describe('qmd migrate from qmd 2.8.3', () => {
  it('builds our index at our own default path, and says what it did', () => {
    expect(migrated.code, migrated.stderr).toBe(0);
    expect(existsSync(home.ourIndex)).toBe(true);
    expect(migrated.stdout).toContain('notes: 5 documents (qmd 2.x: 5)');
    expect(migrated.stdout).toContain('docs: 3 documents (qmd 2.x: 3), update command: echo pulled');
    expect(migrated.stdout).toContain('wiki: 3 documents (qmd 2.x: 3), excluded from searches by default');
    expect(migrated.stdout).toContain('4 contexts carried over');
    expect(migrated.stdout).toContain(`Index: ${home.ourIndex}.`);
  });

  it("leaves qmd 2.x's index and index.yml byte for byte as they were, with nothing new beside them", () => {
    expect(fingerprint(home.peerIndex)).toBe(before.index);
    expect(fingerprint(home.peerConfig)).toBe(before.config);
    const after = readdirSync(join(home.env.XDG_CACHE_HOME as string, 'qmd')).sort();
    expect(after.filter((f) => !before.files.includes(f)).sort()).toEqual(['compile-cache', 'indexes']);
  });

  it('has the same collections, with their masks, update command and inclusion', async () => {
    const collections = JSON.parse(await ours(['collection', 'list', '--json'])) as Array<{
      name: string;
      root: string;
      mask: string;
      ignore: string[];
      update?: string;
      includeByDefault: boolean;
    }>;
    expect(collections.map((c) => [c.name, c.root, c.mask, c.update ?? null, c.includeByDefault])).toEqual([
      ['docs', join(home.root, 'docs'), '**/*.md', 'echo pulled', true],
      ['notes', join(home.root, 'notes'), '**/*.md', null, true],
      ['wiki', join(home.root, 'wiki'), 'pages/*.md,index.md', null, false],
    ]);
    expect(collections.find((c) => c.name === 'notes')?.ignore).toEqual([
      'archive/**',
      '**/vendor/**',
      '**/dist/**',
      '**/build/**',
    ]);
  });

  it('has the same contexts, the global one included', async () => {
    const contexts = JSON.parse(await ours(['context', 'list', '--json'])) as Array<{ path: string; text: string }>;
    expect(contexts.map((c) => ({ place: c.path, text: c.text })).sort(byPlace)).toEqual(
      [...PEER_CONTEXTS].sort(byPlace),
    );
  });

  it('has the same documents in each collection as qmd 2.x lists', async () => {
    for (const name of ['notes', 'docs', 'wiki']) {
      const peerLs = await runPeer(['ls', name], home.env);
      const peerFiles = [...peerLs.stdout.matchAll(/qmd:\/\/\S+/g)].map((m) => m[0]).sort();
      const ourFiles = [...(await ours(['ls', name])).matchAll(/qmd:\/\/\S+/g)].map((m) => m[0]).sort();
      expect(ourFiles.length).toBeGreaterThan(0);
      expect(ourFiles, name).toEqual(peerFiles);
    }
  });

  it('finds the same documents, the same one first, for the same searches', async () => {
    for (const [i, args] of searches.entries()) {
      const hits = JSON.parse(await ours(['search', ...args, '--json', '-n', '10'])) as PeerHit[];
      const theirs = before.hits[i] as string[];
      expect(theirs.length, args.join(' ')).toBeGreaterThan(0);
      expect(
        hits.map((h) => h.file),
        args.join(' '),
      ).toEqual(expect.arrayContaining(theirs));
      expect(hits.length, args.join(' ')).toBe(theirs.length);
      expect(hits[0]?.file, args.join(' ')).toBe(theirs[0]);
    }
  });

  it('leaves qmd 2.x working on its own index, with the same answers', async () => {
    expect(await peerSearches()).toEqual(before.hits);
  });

  it('refuses to run again over the index it built', async () => {
    const again = await runQmd(['migrate'], home.env);
    expect(again.code).toBe(1);
    expect(again.stderr.trim()).toBe(
      `qmd: ${home.ourIndex} already exists: qmd migrate builds a new index; move that one away or choose another --index`,
    );
  });
});

describe("commands pointed at qmd 2.x's index", () => {
  it('refuse it in one line that names qmd migrate, and leave it as it was', async () => {
    const run = await runQmd(['--index', home.peerIndex, 'status'], home.env);
    expect(run.code).toBe(1);
    expect(run.stderr.trim()).toBe(
      `qmd: ${home.peerIndex} is an index of qmd 2.x (@tobilu/qmd), not of this qmd: run qmd migrate to build ours from it (it stays as it is), or choose another --index`,
    );
    expect(fingerprint(home.peerIndex)).toBe(before.index);
  });

  it('with no index of ours yet, a command says where qmd 2.x keeps its own and names qmd migrate', async () => {
    const none = join(dir, 'none', 'index.sqlite');
    const run = await runQmd(['search', 'quokka'], { ...home.env, QMD_INDEX: none });
    expect(run.code).toBe(1);
    expect(run.stderr.trim()).toBe(
      `qmd: No index at ${none}; qmd 2.x's index is at ${home.peerIndex}: qmd migrate builds ours from it (or qmd collection add DIR)`,
    );
  });
});

describe('qmd migrate from an index.yml alone', () => {
  it('--dry-run builds nothing; a collection it cannot carry over is skipped in one line, the rest built', async () => {
    const alone = sharedHome(join(dir, 'alone'));
    const notes = join(dir, 'alone', 'notes');
    mkdirSync(notes, { recursive: true });
    writeFileSync(join(notes, 'a.md'), '# A\n\nOne note.\n');
    mkdirSync(join(alone.env.XDG_CONFIG_HOME as string, 'qmd'), { recursive: true });
    writeFileSync(
      alone.peerConfig,
      [
        'global_context: All of it',
        'collections:',
        '  notes:',
        `    path: ${notes}`,
        '    context:',
        '      "/": Mine',
        '  again:',
        `    path: ${notes}`,
        '    pattern: "*.txt"',
        '  gone:',
        `    path: ${join(dir, 'alone', 'gone')}`,
        '',
      ].join('\n'),
    );
    const dry = await runQmd(['migrate', '--dry-run'], alone.env);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain(`Migrating from qmd 2.x: ${alone.peerConfig}, (no index)`);
    expect(dry.stdout).toContain('would set context notes: Mine');
    expect(dry.stdout).toContain(`Dry run: nothing was written; the index would be ${alone.ourIndex}`);
    expect(existsSync(alone.ourIndex)).toBe(false);

    const run = await runQmd(['migrate'], alone.env);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('notes: 1 document\n');
    expect(run.stdout).toContain('2 contexts carried over');
    const skipped = [
      `skipped collection again: ${notes} is already indexed as collection "notes" (to index both masks there: qmd collection set-mask notes '**/*.md,*.txt')`,
      `skipped collection gone: its folder ${join(dir, 'alone', 'gone')} no longer exists`,
    ];
    expect(run.stderr.trim().split('\n')).toEqual(skipped.map((line) => `qmd: ${line}`));
    // The dry run promised exactly this: the collections added, those skipped (in the same
    // words), the contexts set.
    const promised = (prefix: string) =>
      dry.stdout
        .split('\n')
        .filter((l) => l.startsWith(prefix))
        .map((l) => l.slice(prefix.length));
    expect(promised('would add ').map((l) => l.split(':')[0])).toEqual(
      run.stdout
        .split('\n')
        .filter((l) => /^\S+: \d+ documents?/.test(l))
        .map((l) => l.split(':')[0]),
    );
    expect(promised('would skip ')).toEqual(skipped.map((line) => line.replace(/^skipped /, '')));
    expect(promised('would set context ')).toHaveLength(2);
    expect(readdirSync(join(alone.env.XDG_CACHE_HOME as string, 'qmd', 'indexes'))).toEqual(['index.sqlite']);
  });

  it('a hostile index.yml: too large, too many collections, a context too long: one line, exit 1, nothing built, the dry run the same', async () => {
    const hostile = sharedHome(join(dir, 'hostile'));
    const notes = join(dir, 'hostile', 'notes');
    mkdirSync(notes, { recursive: true });
    mkdirSync(join(hostile.env.XDG_CONFIG_HOME as string, 'qmd'), { recursive: true });
    const cases: Array<[string, RegExp]> = [
      [
        `global_context: "${'a'.repeat(2 * 1024 * 1024)}"\n`,
        /^qmd: \S+index\.yml is 2\.0 MiB: qmd migrate reads an index\.yml of at most 1 MiB/,
      ],
      [
        `collections:\n${Array.from({ length: 1001 }, (_, i) => `  c${i}:\n    path: ${notes}\n`).join('')}`,
        /^qmd: \S+index\.yml lists 1,001 collections: qmd migrate carries at most 1,000/,
      ],
      [
        `global_context: "${'a'.repeat(5000)}"\ncollections:\n  notes:\n    path: ${notes}\n`,
        /^qmd: \S+index\.yml: global_context is 5,000 characters: a context here is at most 2,000; shorten it, then run qmd migrate again$/,
      ],
    ];
    for (const [yaml, said] of cases) {
      writeFileSync(hostile.peerConfig, yaml);
      for (const args of [['migrate', '--dry-run'], ['migrate']]) {
        const run = await runQmd(args, hostile.env);
        expect(run.code, args.join(' ')).toBe(1);
        expect(run.stderr.trim().split('\n'), args.join(' ')).toEqual([expect.stringMatching(said)]);
        expect(run.stdout).toBe('');
        expect(existsSync(hostile.ourIndex)).toBe(false);
      }
    }
  });

  it('control characters from index.yml reach neither stdout nor stderr raw: they are shown escaped', async () => {
    const control = sharedHome(join(dir, 'control'));
    const notes = join(dir, 'control', 'notes');
    mkdirSync(notes, { recursive: true });
    writeFileSync(join(notes, 'a.md'), '# A\n\nOne note.\n');
    mkdirSync(join(control.env.XDG_CONFIG_HOME as string, 'qmd'), { recursive: true });
    writeFileSync(
      control.peerConfig,
      [
        'collections:',
        '  notes:',
        `    path: ${notes}`,
        '    update: "echo \\e[2J\\rpulled"',
        '    context:',
        '      "/": "red \\e[31malert\\u0007"',
        '  "gone\\e[8m":',
        `    path: "${join(dir, 'control', 'gone\\e[8m')}"`,
        'models:',
        '  embed: "hf:x/y\\e]0;title\\u0007/z.gguf"',
        '',
      ].join('\n'),
    );
    for (const args of [['migrate', '--dry-run'], ['migrate']]) {
      const run = await runQmd(args, control.env);
      expect(run.code, run.stderr).toBe(0);
      // biome-ignore lint/suspicious/noControlCharactersInRegex: no control character may come through.
      const raw = /[\x00-\x09\x0b-\x1f\x7f]/;
      expect(run.stdout).not.toMatch(raw);
      expect(run.stderr).not.toMatch(raw);
      expect(`${run.stdout}${run.stderr}`).toContain('\\x1b[');
    }
    const dry = await runQmd(['migrate', '--dry-run'], { ...control.env, QMD_INDEX: join(dir, 'control', 'x.sqlite') });
    expect(dry.stdout).toContain('would set context notes: red \\x1b[31malert\\x07');
    expect(dry.stdout).toContain(
      `would skip collection gone-8m: its folder ${join(dir, 'control', 'gone\\x1b[8m')} no longer exists`,
    );
  });

  it('with nothing of qmd 2.x to read, says where it looked, and writes nothing', async () => {
    const none = sharedHome(join(dir, 'none-at-all'));
    const run = await runQmd(['migrate'], none.env);
    expect(run.code).toBe(1);
    expect(run.stderr.trim()).toBe(
      `qmd: Nothing to migrate: no qmd 2.x configuration at ${none.peerConfig} and no index at ${none.peerIndex} (give them with --config and --from)`,
    );
    expect(existsSync(none.ourIndex)).toBe(false);
  });
});

function byPlace(a: { place: string }, b: { place: string }): number {
  return a.place.localeCompare(b.place);
}
