/** What `qmd migrate` builds from qmd 2.x's configuration and index (`src/peer/plan.ts`). */
import { describe, expect, it } from 'vitest';
import type { PeerConfig } from '../../src/peer/config.js';
import { type FolderProbe, PEER_EXCLUDED, planMigration } from '../../src/peer/plan.js';
import type { PeerIndex } from '../../src/store/peer-index.js';

const config: PeerConfig = {
  file: '/h/.config/qmd/index.yml',
  globalContext: 'Everything',
  models: {},
  collections: [
    {
      name: 'notes',
      path: '/n',
      pattern: '**/*.md',
      ignore: ['archive/**', '**/dist/**'],
      update: 'git pull',
      includeByDefault: false,
      contexts: [
        { prefix: '', text: 'Notes' },
        { prefix: 'work', text: 'Work' },
        { prefix: 'empty', text: '  ' },
      ],
    },
    { name: 'My Notes!', path: '/m', pattern: 'a.md,b/*.md', ignore: [], includeByDefault: true, contexts: [] },
    { name: 'My-Notes', path: '/m2', pattern: '**/*.md', ignore: [], includeByDefault: true, contexts: [] },
  ],
};

const index: PeerIndex = {
  file: '/h/.cache/qmd/index.sqlite',
  collections: [
    { name: 'stale', path: '/s', pattern: '**/*.md', ignore: [], includeByDefault: true, context: { '/': 'S' } },
  ],
  globalContext: 'From the index',
  documents: { notes: 12, 'My Notes!': 3 },
  embedded: { chunks: 40, model: 'embeddinggemma' },
};

/** Every path named is a folder of its own. */
const here: FolderProbe = (path) => ({ real: path });

describe('planMigration', () => {
  it("takes the YAML's collections with their settings, qmd 2.x's built-in exclusions added once", () => {
    const plan = planMigration(config, index, here);
    expect(plan.collections[0]).toEqual({
      name: 'notes',
      root: '/n',
      mask: '**/*.md',
      ignore: ['archive/**', '**/dist/**', '**/vendor/**', '**/build/**'],
      update: 'git pull',
      includeByDefault: false,
      peerDocuments: 12,
    });
    expect(new Set(plan.collections[0]?.ignore)).toEqual(new Set(['archive/**', ...PEER_EXCLUDED]));
  });

  it('renames a name that is not valid here, and never onto a taken one', () => {
    const plan = planMigration(config, index, here);
    expect(plan.collections.map((c) => [c.name, c.renamedFrom ?? null])).toEqual([
      ['notes', null],
      ['My-Notes', 'My Notes!'],
      ['My-Notes-2', 'My-Notes'],
    ]);
    expect(plan.collections[1]).toMatchObject({ mask: 'a.md,b/*.md', peerDocuments: 3 });
  });

  it('carries the global context first, then each collection’s, skipping blank ones', () => {
    expect(planMigration(config, index, here).contexts).toEqual([
      { place: '/', text: 'Everything' },
      { place: 'notes', text: 'Notes' },
      { place: 'notes/work', text: 'Work' },
    ]);
  });

  it("falls back to the index's copy when there is no YAML", () => {
    const plan = planMigration(undefined, index, here);
    expect(plan.collections.map((c) => c.name)).toEqual(['stale']);
    expect(plan.contexts).toEqual([
      { place: '/', text: 'From the index' },
      { place: 'stale', text: 'S' },
    ]);
  });

  it('says in one line each what is not carried over', () => {
    const plan = planMigration(
      {
        ...config,
        editorUri: 'vscode://file{path}',
        models: { embed: 'hf:someone/other/model.gguf', rerank: 'hf:x/y/z.gguf' },
      },
      index,
      here,
    );
    expect(plan.notes).toEqual([
      expect.stringMatching(/^qmd 2\.x never indexes vendor\/, dist\/ or build\/ folders/),
      expect.stringMatching(
        /^index\.yml embeds with hf:someone\/other\/model\.gguf: give qmd the same with --embed-model/,
      ),
      expect.stringMatching(/^index\.yml's models\.rerank \(hf:x\/y\/z\.gguf\) is not carried over/),
      expect.stringMatching(/^index\.yml's editor_uri is not carried over/),
      expect.stringMatching(/^qmd 2\.x's 40 vectors are not carried over .*run qmd embed/),
    ]);
    for (const note of plan.notes) expect(note).not.toContain('\n');
    // qmd 2.x's default models (it writes them into every index.yml) are no news.
    expect(planMigration({ ...config, models: {} }, { ...index, embedded: { chunks: 0 } }, here).notes).toHaveLength(1);
  });

  it('skips, with why, what the real run could not add: a folder gone, one another collection has, a mask that leaves it', () => {
    const folders: FolderProbe = (path) =>
      path === '/gone' ? { missing: `its folder ${path} no longer exists` } : { real: path === '/link' ? '/n' : path };
    const collection = (name: string, path: string, pattern = '**/*.md') => ({
      name,
      path,
      pattern,
      ignore: [],
      includeByDefault: true,
      contexts: [{ prefix: '', text: `About ${name}` }],
    });
    const plan = planMigration(
      {
        file: '/h/index.yml',
        models: {},
        collections: [
          collection('notes', '/n'),
          collection('gone', '/gone'),
          collection('again', '/link', '*.txt'),
          collection('out', '/o', '../*.md'),
        ],
      },
      undefined,
      folders,
    );
    expect(plan.collections.map((c) => c.name)).toEqual(['notes']);
    expect(plan.skipped).toEqual([
      { name: 'gone', why: 'its folder /gone no longer exists' },
      {
        name: 'again',
        why: `/n is already indexed as collection "notes" (to index both masks there: qmd collection set-mask notes '**/*.md,*.txt')`,
      },
      { name: 'out', why: 'Invalid mask "../*.md": use a glob relative to the directory, like **/*.md' },
    ]);
    // Only the contexts of what is added.
    expect(plan.contexts).toEqual([{ place: 'notes', text: 'About notes' }]);
  });

  it('refuses a context longer than context add takes, naming where it is; the global one too', () => {
    const long = 'x'.repeat(2001);
    const withContext = (text: string): PeerConfig => ({
      ...config,
      collections: [{ ...config.collections[0]!, contexts: [{ prefix: 'work', text }] }],
    });
    expect(() => planMigration(withContext(long), undefined, here)).toThrow(
      '/h/.config/qmd/index.yml: collections.notes.context "work" is 2,001 characters: a context here is at most 2,000; shorten it, then run qmd migrate again',
    );
    expect(() => planMigration({ ...config, globalContext: long }, undefined, here)).toThrow(
      '/h/.config/qmd/index.yml: global_context is 2,001 characters',
    );
    expect(planMigration(withContext('x'.repeat(2000)), undefined, here).contexts).toHaveLength(2);
  });

  it('shows control characters from the files escaped in what it says', () => {
    const plan = planMigration({ ...config, models: { embed: 'hf:evil/\x1b[2Jmodel.gguf' } }, undefined, here);
    const line = plan.notes.find((n) => n.startsWith('index.yml embeds with'));
    expect(line).toContain('hf:evil/\\x1b[2Jmodel.gguf');
    expect(line).not.toContain('\x1b');
    const skipped = planMigration(
      { file: '/h/i.yml', models: {}, collections: [{ ...config.collections[1]!, name: 'bell', path: '/b\u0007' }] },
      undefined,
      () => ({ missing: 'its folder /b\u0007 no longer exists' }),
    ).skipped;
    expect(skipped).toEqual([{ name: 'bell', why: 'its folder /b\\x07 no longer exists' }]);
  });
});
