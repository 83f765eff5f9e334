/** What `qmd migrate` builds from qmd 2.x's configuration and index (`src/peer/plan.ts`). */
import { describe, expect, it } from 'vitest';
import type { PeerConfig } from '../../src/peer/config.js';
import { PEER_EXCLUDED, planMigration } from '../../src/peer/plan.js';
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

describe('planMigration', () => {
  it("takes the YAML's collections with their settings, qmd 2.x's built-in exclusions added once", () => {
    const plan = planMigration(config, index);
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
    const plan = planMigration(config, index);
    expect(plan.collections.map((c) => [c.name, c.renamedFrom ?? null])).toEqual([
      ['notes', null],
      ['My-Notes', 'My Notes!'],
      ['My-Notes-2', 'My-Notes'],
    ]);
    expect(plan.collections[1]).toMatchObject({ mask: 'a.md,b/*.md', peerDocuments: 3 });
  });

  it('carries the global context first, then each collection’s, skipping blank ones', () => {
    expect(planMigration(config, index).contexts).toEqual([
      { place: '/', text: 'Everything' },
      { place: 'notes', text: 'Notes' },
      { place: 'notes/work', text: 'Work' },
    ]);
  });

  it("falls back to the index's copy when there is no YAML", () => {
    const plan = planMigration(undefined, index);
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
    expect(planMigration({ ...config, models: {} }, { ...index, embedded: { chunks: 0 } }).notes).toHaveLength(1);
  });
});
