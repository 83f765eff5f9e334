/**
 * A filtered BM25 search first looks through the best matches overall and keeps those inside
 * the filter (`Searcher.rank`); only when too few pass does it rank every match inside. Both
 * ways must give the same answer: the filtered best, in order.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/core/index.js';
import { type Sandbox, sandbox } from '../store/helpers.js';

let box: Sandbox;
let store: Store;

beforeAll(async () => {
  box = sandbox();
  store = openStore(box.index);
  // 260 strong matches in `loud` (more than a page of 10 looks through first: 200), and
  // three weak ones in `quiet`, in a folder of it and outside it.
  const loud: Record<string, string> = {};
  for (let i = 0; i < 260; i++) loud[`n${i}.md`] = `# Apple ${i}\n\napple apple apple orchard ${i}\n`;
  await store.addCollection(box.notes('loud', loud), { name: 'loud' });
  const words = 'the river ran slowly past the old mill near town and on into the valley '.repeat(6);
  await store.addCollection(
    box.notes('quiet', {
      'deep/a.md': `# A\n\n${words} apple\n`,
      'deep/b.md': `# B\n\n${words} ${words} apple\n`,
      'c.md': `# C\n\n${words} apple\n`,
    }),
    { name: 'quiet' },
  );
});

afterAll(async () => {
  await store.close();
  box.cleanup();
});

describe('a filtered BM25 search', () => {
  it('finds matches ranked below the first ones it looks through', () => {
    const overall = store.search('apple', { limit: 300 }).map((hit) => hit.file);
    expect(overall.slice(0, 260).every((file) => file.startsWith('loud/'))).toBe(true);
    expect(store.search('apple', { collections: ['quiet'] }).map((hit) => hit.file)).toEqual(
      overall.filter((file) => file.startsWith('quiet/')),
    );
    expect(store.search('apple', { collections: ['quiet'], folder: 'deep' }).map((hit) => hit.file)).toEqual(
      overall.filter((file) => file.startsWith('quiet/deep/')),
    );
  });

  it('answers from the best matches overall when enough of them pass, in the same order', () => {
    const overall = store.search('apple', { limit: 300 }).map((hit) => hit.file);
    const loud = store.search('apple', { collections: ['loud'], limit: 20 }).map((hit) => hit.file);
    expect(loud).toEqual(overall.filter((file) => file.startsWith('loud/')).slice(0, 20));
    const both = store.search('apple', { collections: ['loud', 'quiet'], limit: 300 }).map((hit) => hit.file);
    expect(both).toEqual(overall);
  });
});
