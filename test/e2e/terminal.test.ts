/**
 * The built binary in a real pseudo-terminal of a fixed size (test/support/pty.ts), as a person
 * at a terminal runs it (issue 31): every command that draws or reads the terminal exits as it
 * should, draws what it should, within the width, in colour unless NO_COLOR; and the same
 * commands piped draw nothing. The bar on stderr that crashed every command in a terminal
 * (exit 70) was found by nothing else: no other test ran under a terminal.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tinyModelPath } from '../support/gguf.js';
import { frames, ptyExit, runInPty, screenLines } from '../support/pty.js';
import { QMD_BIN, qmdEnv, runQmd, tempWorkspace } from '../support/qmd.js';

// biome-ignore lint/suspicious/noControlCharactersInRegex: colour is what is checked.
const SGR = /\x1b\[[0-9;]*m/;

/** 300 notes: more than one batch of files (256), so the bar moves; each one chunk. */
function notes(n: number): Record<string, string> {
  const files: Record<string, string> = {};
  for (let i = 0; i < n; i++) {
    files[`n${String(i).padStart(3, '0')}.md`] =
      `# Bread ${i}\n\nSourdough bread ${i} needs a starter, flour and salt.\n`;
  }
  files['sub/node_modules/pkg/README.md'] = '# readme\n';
  files['.obsidian/workspace.md'] = '# workspace\n';
  return files;
}

const ws = tempWorkspace(notes(300));
let model: string;
const env = (extra: Record<string, string> = {}) =>
  qmdEnv(ws.index, { QMD_EMBED_MODEL: model, QMD_EMBED_THREADS: '1', ...extra });

beforeAll(() => {
  model = tinyModelPath();
});
afterAll(() => ws.cleanup());

/** Runs qmd in an 80 × 24 terminal (or `columns` wide) to its exit. */
async function inTerminal(args: string[], options: { env?: NodeJS.ProcessEnv; columns?: number } = {}) {
  const p = runInPty(process.execPath, [QMD_BIN, ...args], {
    env: options.env ?? env(),
    ...(options.columns !== undefined && { columns: options.columns }),
  });
  try {
    const exit = await ptyExit(p, 60_000);
    return { exit, output: p.output(), lines: screenLines(p.output()) };
  } finally {
    p.kill();
  }
}

/** Each frame the bar was drawn as fits in `columns - 1`: a wider one would wrap, and `\r` no longer redraw it. */
function expectFramesWithin(output: string, columns: number) {
  const drawn = output.split(/\r\n|\n/).flatMap((line) => line.split('\r'));
  for (const frame of drawn) {
    // biome-ignore lint/suspicious/noControlCharactersInRegex: escapes take no columns.
    const visible = [...frame.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '')].length;
    if (frame.endsWith('\x1b[K')) expect(visible, frame).toBeLessThanOrEqual(columns - 1);
  }
}

describe('in a terminal, in order: collection add, update, embed, status, search, query', () => {
  it('collection add: exit 0, a bar of the files indexed, the summary, what was not indexed and how to include it', async () => {
    const { exit, output, lines } = await inTerminal(['collection', 'add', ws.notesDir, '--name', 'notes']);
    expect(exit, output).toEqual({ code: 0, signal: null });
    expect(output).not.toContain('internal error');
    expect(frames(output).some((f) => /^Indexing notes {2}\[[█░]+\] {2}\d+\/300 files/.test(f))).toBe(true);
    expect(output).toMatch(SGR);
    expectFramesWithin(output, 80);
    const summary = lines.find((l) => l.startsWith('Added collection notes'));
    expect(summary).toMatch(/: 300 files scanned, 300 added, 0 updated, 0 removed, 0 unchanged in [\d.]+ s$/);
    expect(lines).toContain(
      "  not indexed: 1 file under node_modules (notes/sub/node_modules/), 1 hidden file (notes/.obsidian/); to index them, name them in --mask, e.g. --mask '{*.md,**/*.md,sub/node_modules/**/*.md}'",
    );
    // The bar was cleared: nothing of it is left on the screen.
    expect(lines.filter((l) => l.includes('█') || l.includes('░'))).toEqual([]);
  });

  it('update: exit 0, the bar, and a summary that says what changed', async () => {
    writeFileSync(join(ws.notesDir, 'n000.md'), '# Bread 0\n\nRye this time.\n');
    const { exit, output, lines } = await inTerminal(['update']);
    expect(exit, output).toEqual({ code: 0, signal: null });
    expect(frames(output).some((f) => /^Indexing notes {2}\[[█░]+\] {2}\d+\/300 files/.test(f))).toBe(true);
    expect(lines).toContainEqual(
      expect.stringMatching(/^Updated 1 collection\(s\): 300 files scanned, 0 added, 1 updated/),
    );
    expect(lines).toContainEqual(expect.stringMatching(/^ {2}not indexed: 1 file under node_modules/));
  });

  it('embed: exit 0, a bar of the chunks embedded, within the width, the summary', async () => {
    const { exit, output, lines } = await inTerminal(['embed']);
    expect(exit, output).toEqual({ code: 0, signal: null });
    const embedding = frames(output).filter((f) => f.startsWith('Embedding  ['));
    expect(embedding.length, output).toBeGreaterThan(0);
    expect(embedding.every((f) => / \d+\/300 chunks/.test(f))).toBe(true);
    expectFramesWithin(output, 80);
    expect(lines).toContainEqual(expect.stringMatching(/^Embedded 300 chunks, skipped 0 unchanged/));
  });

  it('status: exit 0, every line as piped (no colour to parse, nothing cut)', async () => {
    const { exit, output, lines } = await inTerminal(['status']);
    expect(exit, output).toEqual({ code: 0, signal: null });
    const piped = await runQmd(['status'], env());
    // Where llama.cpp runs is said once, in the report's llama.cpp line: nothing on stderr.
    expect(piped.stderr).toBe('');
    expect(piped.stdout).toMatch(/^llama\.cpp: the CPU: no GPU found/m);
    expect(lines.filter(Boolean)).toEqual(piped.stdout.trimEnd().split('\n'));
  });

  it("search: qmd 2.x's layout coloured, matches marked in colour, snippets cut to the width; piped: plain and whole", async () => {
    const { exit, output, lines } = await inTerminal(['search', 'sourdough', '-n', '3'], { columns: 24 });
    expect(exit, output).toEqual({ code: 0, signal: null });
    expect(output).toMatch(SGR);
    expect(output).toContain('\x1b[1;33mSourdough\x1b[22;39m');
    expect(lines.filter((l) => l.startsWith('qmd://'))).toHaveLength(3);
    // Each snippet, its `@@` header too, cut to the width.
    const snippets = snippetLines(lines);
    expect(snippets.length).toBeGreaterThan(0);
    for (const line of snippets) expect([...line].length, line).toBeLessThanOrEqual(23);
    expect(snippets.some((l) => l.endsWith('…'))).toBe(true);

    const piped = await runQmd(['search', 'sourdough', '-n', '3'], env());
    expect(piped.stdout).not.toMatch(SGR);
    expect(piped.stdout).toContain('Sourdough');
    expect(piped.stdout).not.toContain('…');
  });

  it('query: the same; NO_COLOR keeps the terminal width but drops every colour', async () => {
    const coloured = await inTerminal(['query', 'sourdough starter', '-n', '2']);
    expect(coloured.exit, coloured.output).toEqual({ code: 0, signal: null });
    expect(coloured.output).toMatch(SGR);
    expect(coloured.lines.filter((l) => l.startsWith('qmd://'))).toHaveLength(2);

    const plain = await inTerminal(['query', 'sourdough starter', '-n', '2'], {
      env: env({ NO_COLOR: '1' }),
      columns: 40,
    });
    expect(plain.exit, plain.output).toEqual({ code: 0, signal: null });
    expect(plain.output).not.toMatch(SGR);
    const snippets = snippetLines(plain.lines);
    expect(snippets.length).toBeGreaterThan(0);
    for (const line of snippets) expect([...line].length, line).toBeLessThanOrEqual(39);
  });
});

/** The lines of each result's snippet, blank ones left out: from its `@@` header up to the next result's `qmd://` line. */
function snippetLines(lines: string[]): string[] {
  const out: string[] = [];
  let inSnippet = false;
  for (const line of lines) {
    if (line.startsWith('@@ ')) inSnippet = true;
    else if (line.startsWith('qmd://')) inSnippet = false;
    if (inSnippet && line !== '') out.push(line);
  }
  return out;
}

describe('stdout to a file, stderr the terminal', () => {
  it('qmd embed > file: the bar on the terminal, only the summary in the file', async () => {
    const out = join(ws.dir, 'embed-out.txt');
    writeFileSync(join(ws.notesDir, 'n001.md'), '# Bread 1\n\nSpelt now, and a longer rise.\n');
    expect((await runQmd(['update'], env())).code).toBe(0);
    const p = runInPty('/bin/sh', ['-c', `exec "${process.execPath}" "${QMD_BIN}" embed > "${out}"`], { env: env() });
    try {
      const exit = await ptyExit(p, 60_000);
      expect(exit, p.output()).toEqual({ code: 0, signal: null });
      expect(p.output()).toContain('Preparing…');
      expect(readFileSync(out, 'utf8')).toMatch(/^Embedded 1 chunks, skipped 299 unchanged, removed 1 .*\]\n$/);
    } finally {
      p.kill();
    }
  });
});

describe('a failed first collection add', () => {
  it('says what to do in one line, exits 1, and leaves no index behind', async () => {
    const fresh = join(ws.dir, 'fresh', 'index.sqlite');
    const { exit, lines } = await inTerminal(['--index', fresh, 'collection', 'add', join(ws.dir, 'no-such-folder')]);
    expect(exit).toEqual({ code: 1, signal: null });
    expect(lines.filter(Boolean)).toEqual([`qmd: No such directory: ${join(ws.dir, 'no-such-folder')}`]);
    for (const suffix of ['', '-wal', '-shm']) expect(existsSync(`${fresh}${suffix}`)).toBe(false);
  });
});
