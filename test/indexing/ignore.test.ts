import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/core/index.js';
import { ignoreRule } from '../../src/indexing/ignore.js';
import { type Sandbox, sandbox } from '../store/helpers.js';

describe('ignoreRule: wildcards never enter node_modules or hidden names; a mask that names them does', () => {
  it.each([
    ['**/*.md', 'a.md', undefined],
    ['**/*.md', 'deep/er/b.md', undefined],
    ['**/*.md', 'node_modules/x/a.md', { reason: 'node_modules', folder: 'node_modules/' }],
    ['**/*.md', 'sub/node_modules/x/a.md', { reason: 'node_modules', folder: 'sub/node_modules/' }],
    ['**/*.md', '.git/a.md', { reason: 'hidden', folder: '.git/' }],
    ['**/*.md', 'sub/.obsidian/deep/a.md', { reason: 'hidden', folder: 'sub/.obsidian/' }],
    ['**/*.md', 'sub/.draft.md', { reason: 'hidden', folder: 'sub/.draft.md' }],
    // The first name not named decides the reason.
    ['**/*.md', 'node_modules/.bin/a.md', { reason: 'node_modules', folder: 'node_modules/' }],
    // Named: included, whatever else the mask says.
    ['{*.md,**/*.md,.obsidian/**/*.md}', '.obsidian/a.md', undefined],
    ['{*.md,**/*.md,**/.obsidian/**/*.md}', 'sub/.obsidian/a.md', undefined],
    ['{*.md,**/*.md,.obsidian/**/*.md}', '.draft.md', { reason: 'hidden', folder: '.draft.md' }],
    ['**/.*/*.md', '.any/a.md', undefined],
    ['**/*.md', '.cache/node_modules/a.md', { reason: 'hidden', folder: '.cache/' }],
    ['.cache/**/*.md', '.cache/node_modules/a.md', { reason: 'node_modules', folder: '.cache/node_modules/' }],
    ['{*.md,**/*.md,sub/node_modules/**/*.md}', 'sub/node_modules/x/a.md', undefined],
    [
      '{*.md,**/*.md,sub/node_modules/**/*.md}',
      'node_modules/x/a.md',
      { reason: 'node_modules', folder: 'node_modules/' },
    ],
    ['**/node_modules/**/*.md', 'a/node_modules/b.md', undefined],
    // A name that merely contains node_modules is not the folder.
    ['**/*.md', 'my_node_modules/a.md', undefined],
  ] as const)('%s on %s', (mask, file, expected) => {
    expect(ignoreRule(mask)(file)).toEqual(expected);
  });
});

describe('a scan counts what its ignore rule passed by, and the report says where', () => {
  let box: Sandbox;
  let store: Store;
  beforeEach(() => {
    box = sandbox();
    store = openStore(box.index);
  });
  afterEach(async () => {
    await store.close();
    box.cleanup();
  });

  const tree = () =>
    box.notes('notes', {
      'a.md': 'alpha\n',
      'sub/b.md': 'bravo\n',
      'sub/node_modules/pkg/README.md': 'readme\n',
      'sub/node_modules/pkg/CHANGELOG.md': 'changes\n',
      'node_modules/x/y.md': 'why\n',
      '.obsidian/workspace.md': 'ws\n',
      '.git/notes.md': 'git\n',
      '.draft.md': 'draft\n',
      'sub/photo.png': 'not a note\n',
    });

  it('collection add: 2 indexed, 3 under node_modules and 3 hidden passed by, with example folders', async () => {
    const report = await store.addCollection(tree(), { name: 'notes' });
    expect(report).toMatchObject({ scanned: 2, added: 2 });
    expect(report.ignored).toEqual({
      counts: { node_modules: 3, hidden: 3 },
      examples: {
        node_modules: ['notes/node_modules/', 'notes/sub/node_modules/'],
        hidden: ['notes/.draft.md', 'notes/.git/', 'notes/.obsidian/'],
      },
    });
    expect(store.search('readme')).toEqual([]);
  });

  it('a mask naming a folder indexes it, and update keeps it (the mask is stored)', async () => {
    const root = tree();
    const report = await store.addCollection(root, {
      name: 'notes',
      mask: '{*.md,**/*.md,sub/node_modules/**/*.md,.obsidian/**/*.md}',
    });
    expect(report).toMatchObject({ scanned: 5, added: 5 });
    expect(report.ignored.counts).toEqual({ node_modules: 1, hidden: 2 });
    expect(report.ignored.examples.hidden).toEqual(['notes/.draft.md', 'notes/.git/']);
    expect(store.search('readme').map((hit) => hit.file)).toEqual(['notes/sub/node_modules/pkg/README.md']);
    const again = await store.update();
    expect(again).toMatchObject({ scanned: 5, unchanged: 5, removed: 0 });
    expect(again.ignored.counts).toEqual({ node_modules: 1, hidden: 2 });
  });
});
