/** Reading qmd 2.x's `index.yml` (`src/peer/config.ts`) and where qmd 2.x keeps its files (`paths.ts`). */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { MAX_PEER_COLLECTIONS, MAX_PEER_CONFIG_BYTES, readPeerConfig } from '../../src/peer/config.js';
import { peerLocations } from '../../src/peer/paths.js';
import { printable } from '../../src/peer/printable.js';

const dir = mkdtempSync(join(tmpdir(), 'qmd-peer-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function write(name: string, text: string): string {
  const file = join(dir, name);
  writeFileSync(file, text);
  return file;
}

describe('readPeerConfig', () => {
  it('reads every field qmd 2.x writes, with its defaults', () => {
    const file = write(
      'full.yml',
      `global_context: Knowledge base
editor_uri: "vscode://file{path}:{line}:{col}"
models:
  embed: hf:ggml-org/embeddinggemma-300M-GGUF/embeddinggemma-300M-Q8_0.gguf
collections:
  notes:
    path: /home/me/notes
    pattern: "**/*.md"
    ignore:
      - "Archive/**"
    update: git pull --rebase
    includeByDefault: false
    context:
      "": Personal notes
      /work: Work notes
      "journal/": Journal
  docs:
    path: ./docs
`,
    );
    expect(readPeerConfig(file)).toEqual({
      file,
      globalContext: 'Knowledge base',
      editorUri: 'vscode://file{path}:{line}:{col}',
      models: { embed: 'hf:ggml-org/embeddinggemma-300M-GGUF/embeddinggemma-300M-Q8_0.gguf' },
      collections: [
        {
          name: 'notes',
          path: '/home/me/notes',
          pattern: '**/*.md',
          ignore: ['Archive/**'],
          update: 'git pull --rebase',
          includeByDefault: false,
          contexts: [
            { prefix: '', text: 'Personal notes' },
            { prefix: 'work', text: 'Work notes' },
            { prefix: 'journal', text: 'Journal' },
          ],
        },
        { name: 'docs', path: join(dir, 'docs'), pattern: '**/*.md', ignore: [], includeByDefault: true, contexts: [] },
      ],
    });
  });

  it('expands ~/ in a path; an empty file is no collections; a missing file is undefined', () => {
    const tilde = write('tilde.yml', 'collections:\n  n:\n    path: ~/notes\n');
    expect(readPeerConfig(tilde)?.collections[0]?.path).toBe(join(homedir(), 'notes'));
    expect(readPeerConfig(write('empty.yml', ''))?.collections).toEqual([]);
    expect(readPeerConfig(join(dir, 'missing.yml'))).toBeUndefined();
  });

  it.each([
    ['collections: [1, 2]\n', /collections must be a mapping/],
    ['collections:\n  n:\n    pattern: "*.md"\n', /collections\.n\.path must be a folder/],
    ['collections:\n  n:\n    path: /x\n    ignore: "a/**"\n', /collections\.n\.ignore must be a list of globs/],
    ['collections:\n  n:\n    path: /x\n    includeByDefault: "no"\n', /includeByDefault must be true or false/],
    ['collections:\n  n:\n    path: /x\n    context: [a]\n', /context must be a mapping/],
    ['collections: {\n', /is not valid YAML/],
  ])('refuses %j in one line naming the file and the key', (text, message) => {
    const file = write('bad.yml', text);
    let caught: unknown;
    try {
      readPeerConfig(file);
    } catch (error) {
      caught = error;
    }
    expect(caught).toMatchObject({ code: 'BAD_ARGUMENT', message: expect.stringMatching(message) });
    expect((caught as Error).message).toContain(file);
    expect((caught as Error).message.split('\n')).toHaveLength(1);
  });
});

describe('bounds on what is read', () => {
  it('refuses an index.yml over 1 MiB before parsing it, in one line', () => {
    const file = write('huge.yml', `global_context: "${'a'.repeat(MAX_PEER_CONFIG_BYTES)}"\n`);
    expect(() => readPeerConfig(file)).toThrow(
      `${file} is 1.0 MiB: qmd migrate reads an index.yml of at most 1 MiB (qmd 2.x writes a few KB); check that it is qmd 2.x's, or give another with --config`,
    );
  });

  it('reads no further than the bound from something that never ends (a device, a FIFO)', () => {
    expect(() => readPeerConfig('/dev/zero')).toThrow(/^\/dev\/zero is more than 1 MiB: /);
  });

  it(`refuses more than ${MAX_PEER_COLLECTIONS} collections`, () => {
    const many = Array.from({ length: MAX_PEER_COLLECTIONS + 1 }, (_, i) => `  c${i}:\n    path: /x/${i}\n`).join('');
    const file = write('many.yml', `collections:\n${many}`);
    expect(() => readPeerConfig(file)).toThrow(
      `${file} lists 1,001 collections: qmd migrate carries at most 1,000; check that it is qmd 2.x's, or give another with --config`,
    );
  });

  it('names a key with control characters escaped', () => {
    const file = write('control.yml', 'collections:\n  "a\\e[2Jb":\n    pattern: "*.md"\n');
    expect(() => readPeerConfig(file)).toThrow(`${file}: collections.a\\x1b[2Jb.path must be a folder`);
  });
});

describe('printable', () => {
  it('escapes C0 and C1 controls, DEL and bidirectional overrides; leaves other text alone', () => {
    expect(printable('a\x1b[31mb\tc\nd\r\x07\x7f\u009b\u202ee\u2066')).toBe(
      'a\\x1b[31mb\\tc\\nd\\r\\x07\\x7f\\x9b\\u202ee\\u2066',
    );
    expect(printable('Notes, café — 日本 ✓')).toBe('Notes, café — 日本 ✓');
  });
});

describe('peerLocations', () => {
  it("is qmd 2.x's: INDEX_PATH, else XDG_CACHE_HOME/qmd/NAME.sqlite; QMD_CONFIG_DIR, else XDG_CONFIG_HOME/qmd, else ~/.config/qmd", () => {
    expect(peerLocations({ HOME: '/h' })).toEqual({
      index: '/h/.cache/qmd/index.sqlite',
      config: '/h/.config/qmd/index.yml',
    });
    expect(peerLocations({ HOME: '/h', XDG_CACHE_HOME: '/c', XDG_CONFIG_HOME: '/g' }, 'work')).toEqual({
      index: '/c/qmd/work.sqlite',
      config: '/g/qmd/work.yml',
    });
    expect(
      peerLocations({ HOME: '/h', INDEX_PATH: '/i/x.sqlite', QMD_CONFIG_DIR: '/q', XDG_CONFIG_HOME: '/g' }),
    ).toEqual({
      index: '/i/x.sqlite',
      config: '/q/index.yml',
    });
  });
});
