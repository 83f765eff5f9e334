/**
 * The commands and flags of qmd 2.8.3 that a person types daily, run against the real peer
 * (`npm run peer:install`) and against ours on the same corpus (ours migrated from the peer's
 * files, `qmd migrate`), their outputs compared by shape (`output-shapes.ts`: docids, scores,
 * sizes and times differ by design) and, where both must agree, by content: which files, how
 * many, which collections and contexts. docs/peer-cli.md is the table of every command and
 * flag; each row marked "same" has its case here.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tinyModelPath } from '../support/gguf.js';
import { cliResultSkeleton, jsonKeys, lineSkeleton, recordStarts, uris } from '../support/output-shapes.js';
import { runPeer } from '../support/peer.js';
import { peerIndexedHome } from '../support/peer-corpus.js';
import { runQmd } from '../support/qmd.js';

const dir = mkdtempSync(join(tmpdir(), 'qmd-peer-cli-'));
let home: Awaited<ReturnType<typeof peerIndexedHome>>;
afterAll(() => rmSync(dir, { recursive: true, force: true }));

beforeAll(async () => {
  home = await peerIndexedHome(dir);
  const migrated = await runQmd(['migrate'], home.env);
  expect(migrated.code, migrated.stderr).toBe(0);
}, 180_000);

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The same command line, both engines, from the corpus folder; both must succeed. */
async function both(...args: string[]): Promise<{ peer: Run; ours: Run }> {
  const [peer, ours] = [await runPeer(args, home.env, home.root), await runQmd(args, home.env)];
  expect(peer.code, `qmd 2.8.3 ${args.join(' ')}: ${peer.stderr}`).toBe(0);
  expect(ours.code, `qmd ${args.join(' ')}: ${ours.stderr}`).toBe(0);
  return { peer, ours };
}

describe('search output formats, as qmd 2.8.3 prints them', () => {
  it('the terminal format: path:line #docid, Title, Context, Score, then the snippet under its @@ header', async () => {
    const { peer, ours } = await both('search', 'zephyrine');
    expect(cliResultSkeleton(ours.stdout)).toEqual(cliResultSkeleton(peer.stdout));
    expect(uris(ours.stdout).sort()).toEqual(uris(peer.stdout).sort());
  });

  it('--json: an array with the same keys per result (snippet, or body with --full)', async () => {
    for (const extra of [[], ['--full'], ['--line-numbers']]) {
      const { peer, ours } = await both('search', 'sourdough', '--json', ...extra);
      expect(jsonKeys(ours.stdout), extra.join(' ')).toEqual(jsonKeys(peer.stdout));
    }
  });

  it('--csv: the same header and one record per result', async () => {
    const { peer, ours } = await both('search', 'bearer token', '--csv');
    expect(ours.stdout.split('\n')[0]).toBe(peer.stdout.split('\n')[0]);
    const start = /^#[0-9a-f]+,/;
    expect(recordStarts(ours.stdout, start)).toEqual(recordStarts(peer.stdout, start));
  });

  it('--files (and --format files): docid,score,qmd:// path,"context"', async () => {
    for (const flags of [['--files'], ['--format', 'files']]) {
      const { peer, ours } = await both('search', 'zephyrine', ...flags);
      const start = /^#[0-9a-f]+,/;
      expect(recordStarts(ours.stdout, start).sort()).toEqual(recordStarts(peer.stdout, start).sort());
      expect(uris(ours.stdout).sort()).toEqual(uris(peer.stdout).sort());
    }
  });

  it('--md and --xml: the same headings, fields and elements', async () => {
    const md = await both('search', 'quokka', '--md');
    // Each result's separator, heading (the line after it) and fields; not the snippet's lines.
    const mdLines = (s: string) =>
      s
        .split('\n')
        .filter((l, i, all) => l === '---' || all[i - 1] === '---' || /^\*\*(file|docid|context):\*\*/.test(l))
        .map(lineSkeleton);
    expect(mdLines(md.ours.stdout)).toEqual(mdLines(md.peer.stdout));
    const xml = await both('search', 'quokka', '--xml');
    const tags = (s: string) => [...s.matchAll(/<\/?file\b[^>]*>/g)].map((m) => lineSkeleton(m[0]));
    expect(tags(xml.ours.stdout)).toEqual(tags(xml.peer.stdout));
  });

  it('-n, --all and --min-score: the default of 5 (20 for --files), all matches, a floor', async () => {
    // "the" is in every note of the two default collections: more than 5.
    const five = await both('search', 'the', '--files');
    const count = (s: string) => recordStarts(s, /^#[0-9a-f]+,/).length;
    expect(count(five.ours.stdout)).toBe(count(five.peer.stdout));
    const cli = await both('search', 'the');
    expect(cliResultSkeleton(cli.ours.stdout)).toHaveLength(5);
    expect(cliResultSkeleton(cli.peer.stdout)).toHaveLength(5);
    const two = await both('search', 'the', '-n', '2', '--json');
    expect(JSON.parse(two.ours.stdout)).toHaveLength(2);
    expect(JSON.parse(two.peer.stdout)).toHaveLength(2);
    const all = await both('search', 'the', '--all', '--files');
    expect(count(all.ours.stdout)).toBe(count(all.peer.stdout));
    // Scores are each engine's own, so a floor keeps a different number; both keep the best.
    const floor = await both('search', 'zephyrine', '--all', '--min-score', '0.99', '--files');
    expect(count(floor.ours.stdout)).toBeGreaterThanOrEqual(1);
    expect(count(floor.ours.stdout)).toBeLessThanOrEqual(count(all.ours.stdout));
  });

  it('-c repeated: the union of those collections, an excluded one included when named', async () => {
    const { peer, ours } = await both('search', 'lantern', '-c', 'wiki', '-c', 'docs', '--json');
    const files = (s: string) => (JSON.parse(s) as Array<{ file: string }>).map((r) => r.file).sort();
    expect(files(ours.stdout)).toEqual(files(peer.stdout));
    expect(files(ours.stdout).length).toBeGreaterThan(0);
    // Unscoped, the excluded collection is left out by both.
    const unscoped = await both('search', 'lantern', '--json');
    expect(JSON.parse(unscoped.ours.stdout)).toEqual([]);
    expect(JSON.parse(unscoped.peer.stdout)).toEqual([]);
  });

  it('no results: [] for --json, the header for --csv, one line for the terminal', async () => {
    for (const [flag, expected] of [
      ['--json', '[]\n'],
      ['--csv', 'docid,score,file,title,context,line,snippet\n'],
      ['--xml', '<results></results>\n'],
    ] as const) {
      const { peer, ours } = await both('search', 'nonexistentword', flag);
      expect(ours.stdout).toBe(expected);
      expect(peer.stdout).toBe(expected);
    }
    const { peer, ours } = await both('search', 'nonexistentword');
    expect(ours.stdout).toBe(peer.stdout);
  });

  it('--full-path: the file on disk, ./ under the current folder, no docid', async () => {
    const peer = await runPeer(['search', 'quokka', '--files', '--full-path'], home.env, home.root);
    const ours = await runQmdIn(home.root, ['search', 'quokka', '--files', '--full-path']);
    expect(ours.stdout).toMatch(/^\d\.\d\d,\.\/notes\/work\/roadmap\.md,"Knowledge base/);
    const start = /^\d\.\d\d,/;
    expect(recordStarts(ours.stdout, start)).toEqual(recordStarts(peer.stdout, start));
    expect(recordStarts(peer.stdout, start)).toEqual(['N,./notes/work/roadmap.md,"Knowledge base of a small team']);
  });
});

describe('collections, contexts and ls', () => {
  it('ls: the collections with their file counts', async () => {
    const { peer, ours } = await both('ls');
    const lines = (s: string) => s.split('\n').filter(Boolean).sort();
    expect(lines(ours.stdout)).toEqual(lines(peer.stdout));
  });

  it('ls NAME and ls NAME/PATH: size, date and qmd:// path, the same files', async () => {
    for (const where of ['notes', 'notes/work', 'qmd://docs/howto']) {
      const { peer, ours } = await both('ls', where);
      expect(ours.stdout.split('\n').filter(Boolean).map(lineSkeleton)).toEqual(
        peer.stdout.split('\n').filter(Boolean).map(lineSkeleton),
      );
      expect(uris(ours.stdout)).toEqual(uris(peer.stdout));
    }
  });

  it('collection list: a block per collection, with [excluded], its pattern and file count', async () => {
    const { peer, ours } = await both('collection', 'list');
    const blocks = (s: string) =>
      s
        .split('\n\n')
        .filter((b) => b.includes('Pattern:'))
        .map((b) =>
          b
            .split('\n')
            .filter((l) => !/^\s+(Updated|Ignore):/.test(l))
            .join('\n'),
        )
        .sort();
    expect(blocks(ours.stdout)).toEqual(blocks(peer.stdout));
    expect(ours.stdout.split('\n')[0]).toBe(peer.stdout.split('\n')[0]);
  });

  it('collection show: path, pattern, include, update command, contexts', async () => {
    for (const name of ['notes', 'docs', 'wiki']) {
      const { peer, ours } = await both('collection', 'show', name);
      const kept = (s: string) => s.split('\n').filter((l) => !/^\s+Ignore:/.test(l) && l !== '');
      expect(kept(ours.stdout), name).toEqual(kept(peer.stdout));
    }
  });

  it('context list: by collection, * for the global one, / (root) for a collection', async () => {
    const { peer, ours } = await both('context', 'list');
    const groups = (s: string) =>
      s
        .trim()
        .split(/\n(?=\S)/)
        .sort();
    expect(groups(ours.stdout)).toEqual(groups(peer.stdout));
  });

  it('collection exclude, include, update-cmd, rename: the same ✓ lines, and the same effect', async () => {
    for (const args of [
      ['collection', 'include', 'wiki'],
      ['collection', 'exclude', 'wiki'],
      ['collection', 'update-cmd', 'notes', 'echo', 'notes pulled'],
      ['collection', 'update-cmd', 'notes'],
      ['collection', 'rename', 'wiki', 'kb'],
      ['collection', 'rename', 'kb', 'wiki'],
    ]) {
      const { peer, ours } = await both(...args);
      expect(ours.stdout, args.join(' ')).toBe(peer.stdout);
    }
    const show = await both('collection', 'show', 'wiki');
    expect(show.ours.stdout).toContain('  Include:  no');
    expect(show.peer.stdout).toContain('  Include:  no');
  });

  it('update runs each update command in its folder first, its output indented', async () => {
    const { peer, ours } = await both('update');
    const hook = (s: string) => {
      const lines = s.split('\n');
      const at = lines.findIndex((l) => l.includes('Running update command:'));
      return [lineSkeleton(lines[at - 1] ?? ''), lines[at], lines[at + 1]];
    };
    expect(hook(ours.stdout)).toEqual(hook(peer.stdout));
    expect(hook(ours.stdout)).toEqual([
      '[N/N] docs (**/*.md)',
      '    Running update command: echo pulled',
      '    pulled',
    ]);
  });

  it('context rm: the same ✓ line, for a collection and for the global context', async () => {
    for (const place of ['qmd://docs', '/']) {
      const { peer, ours } = await both('context', 'rm', place);
      expect(ours.stdout).toBe(peer.stdout);
    }
  });
});

describe('documents', () => {
  it('multi-get --json and --files: the same keys and lines; --max-bytes skips in place', async () => {
    const json = await both('multi-get', 'notes/journal/*.md', '--json');
    expect(jsonKeys(json.ours.stdout)).toEqual(jsonKeys(json.peer.stdout));
    const skipped = await both('multi-get', 'notes/journal/*.md', '--max-bytes', '10', '--json');
    expect(jsonKeys(skipped.ours.stdout)).toEqual(jsonKeys(skipped.peer.stdout));
    expect((JSON.parse(skipped.ours.stdout) as Array<{ skipped?: boolean }>).every((d) => d.skipped)).toBe(true);
    const files = await both('multi-get', 'notes/journal/*.md', '--files');
    const skeleton = (s: string) => recordStarts(s, /^#[0-9a-f]+,/).map((l) => l.replace(/,[^,]*$/, ''));
    expect(skeleton(files.ours.stdout)).toHaveLength(2);
    expect(skeleton(files.ours.stdout).length).toBe(skeleton(files.peer.stdout).length);
  });

  it('multi-get --csv and the terminal format: the same header, the same banners', async () => {
    const csv = await both('multi-get', 'notes/journal/*.md', '--csv');
    expect(csv.ours.stdout.split('\n')[0]).toBe(csv.peer.stdout.split('\n')[0]);
    const cli = await both('multi-get', 'notes/journal/*.md');
    const banners = (s: string) =>
      s
        .split('\n')
        .filter((l) => /^(={60}|File: |Folder Context: )/.test(l))
        .map(lineSkeleton);
    expect(banners(cli.ours.stdout).map((l) => l.replace(/File: \S+/, 'File: F'))).toEqual(
      banners(cli.peer.stdout).map((l) => l.replace(/File: \S+/, 'File: F')),
    );
  });

  it('get --no-line-numbers and --full: the document as indexed (the body qmd 2.8.3 prints under its header)', async () => {
    const { peer, ours } = await both('get', 'notes/sqlite.md', '--no-line-numbers', '--full');
    expect(peer.stdout.trimEnd().endsWith(ours.stdout.trimEnd())).toBe(true);
    expect(ours.stdout).toBe(
      '# SQLite notes\n\nWAL mode lets readers and a writer share the index.\nCheckpoint on close.\n',
    );
  });
});

describe('maintenance', () => {
  it('cleanup and cleanup --dry-run: the same lines, less what qmd has not', async () => {
    // qmd 2.x keeps an LLM cache, and keeps a deleted file's row inactive and its text until
    // cleanup; here an update deletes both in its own transaction, so those lines never come.
    for (const args of [['cleanup', '--dry-run'], ['cleanup']]) {
      const { peer, ours } = await both(...args);
      const kept = (s: string) =>
        s
          .split('\n')
          .filter((l) => l !== '' && !/cached API responses|inactive document records|orphaned content hashes/.test(l))
          .map((l) => l.replace(/ \(.*→.*\)$/, ''));
      expect(kept(ours.stdout), args.join(' ')).toEqual(kept(peer.stdout));
    }
  });

  it('collection remove: the same ✓ line and count', async () => {
    const { peer, ours } = await both('collection', 'remove', 'wiki');
    expect(ours.stdout.split('\n').slice(0, 2)).toEqual(peer.stdout.split('\n').slice(0, 2));
  });

  it('pull: `- MODEL -> FILE (SIZE, cached/checked)` for a model on disk; no network is one line', async () => {
    // qmd 2.8.3 would download its three models here: only ours runs, on files it has.
    const model = tinyModelPath();
    // The reranking and expansion models are off: only the embedding model is pulled.
    const embedOnly = { ...home.env, QMD_RERANK_MODEL: 'off', QMD_EXPAND_MODEL: 'off' };
    const local = await runQmd(['--embed-model', model, 'pull'], embedOnly);
    expect(local.code, local.stderr).toBe(0);
    expect(local.stdout).toMatch(
      /^Pulling models\n- \S+ -> \S+ \(\d+(\.\d)? [KMG]?B, cached\/checked\)\n- rerank: off\n- expand: off\n$/,
    );
    // The default hf: model, cached where qmd 2.x downloads it: found, nothing fetched.
    const models = join(home.env.XDG_CACHE_HOME as string, 'qmd', 'models');
    mkdirSync(models, { recursive: true });
    copyFileSync(model, join(models, 'hf_ggml-org_embeddinggemma-300M-Q8_0.gguf'));
    const cached = await runQmd(['pull'], { ...embedOnly, HF_ENDPOINT: 'http://127.0.0.1:9' });
    expect(cached.code, cached.stderr).toBe(0);
    expect(cached.stdout).toContain(`-> ${join(models, 'hf_ggml-org_embeddinggemma-300M-Q8_0.gguf')} (`);
    // Not cached, no network: one line, exit 1.
    const offline = await runQmd(['pull'], {
      ...embedOnly,
      XDG_CACHE_HOME: join(dir, 'empty-cache'),
      HF_ENDPOINT: 'http://127.0.0.1:9',
    });
    expect(offline.code).toBe(1);
    expect(offline.stderr.trim().split('\n')).toHaveLength(1);
    expect(offline.stderr).toMatch(/^qmd: cannot download the embedding model hf:.*unreachable/);
  });

  it('update --pull: git pull --ff-only in a collection that is a git work tree, then the new note is indexed', async () => {
    const upstream = join(dir, 'upstream');
    const clone = join(dir, 'clone');
    const git = (cwd: string, ...args: string[]) =>
      execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], { cwd, stdio: 'pipe' });
    mkdirSync(upstream);
    git(upstream, 'init', '-q', '-b', 'main');
    writeFileSync(join(upstream, 'first.md'), '# First\n\nA first note.\n');
    git(upstream, 'add', '.');
    git(upstream, 'commit', '-qm', 'first');
    git(dir, 'clone', '-q', upstream, clone);
    expect((await runQmd(['collection', 'add', clone, '--name', 'repo'], home.env)).code).toBe(0);
    writeFileSync(join(upstream, 'second.md'), '# Second\n\nThe pelican arrived by git.\n');
    git(upstream, 'add', '.');
    git(upstream, 'commit', '-qm', 'second');

    const pulled = await runQmd(['update', '--pull'], home.env);
    expect(pulled.code, pulled.stderr).toBe(0);
    expect(pulled.stdout).toMatch(/^\[\d\/\d\] repo \(\*\*\/\*\.md\)\n {4}Running git pull --ff-only in .*clone$/m);
    const found = await runQmd(['search', 'pelican', '--files'], home.env);
    expect(uris(found.stdout)).toEqual(['qmd://repo/second.md']);
  });
});

async function runQmdIn(cwd: string, args: string[]): Promise<Run> {
  const { spawnProcess } = await import('../support/spawn.js');
  const { QMD_BIN } = await import('../support/qmd.js');
  const p = spawnProcess(process.execPath, [QMD_BIN, ...args], { env: home.env, cwd });
  p.child.stdin?.end();
  const exit = await p.closed;
  return { code: exit.code, stdout: p.stdout(), stderr: p.stderr() };
}
