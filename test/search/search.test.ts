import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/core/index.js';
import { expectQmdError, type Sandbox, sandbox } from '../store/helpers.js';

let box: Sandbox;
let store: Store;

const filler = 'The weather was mild and the river ran slowly past the old mill near town.';

beforeAll(async () => {
  box = sandbox();
  store = openStore(box.index);
  const garden = box.notes('garden', {
    'roses.md': `# Pruning roses\n\n${filler}\n\nCut above an outward bud.\n`,
    'diary.md': `# Diary\n\n${filler}\n\nToday I read about pruning in a magazine.\n`,
    'tools.md': `# Tools\n\n${filler}\n\nShears for pruning. Pruning saw. Pruning knife for pruning.\n`,
    'lines.md': `# Lines\n\nline two\nline three\n\nline five\nline six has the zebra\nline seven\n`,
    'indexing.md': '# Indexer\n\nIndexing notes quickly.\n',
  });
  const kitchen = box.notes('kitchen', {
    'bread.md': '# Bread\n\nKnead the dough; pruning is not a kitchen word, but here it is.\n',
  });
  await store.addCollection(garden);
  await store.addCollection(kitchen);
});

afterAll(async () => {
  await store.close();
  box.cleanup();
});

describe('search', () => {
  it('ranks a title match above body matches, and more matches above fewer', () => {
    const hits = store.search('pruning', { collections: ['garden'] });
    expect(hits.map((hit) => hit.file)).toEqual(['garden/roses.md', 'garden/tools.md', 'garden/diary.md']);
  });

  it('returns scores in [0, 1] relative to the best hit (1), best first, and a filled-in hit', () => {
    const hits = store.search('pruning');
    expect(hits.length).toBe(4);
    expect(hits[0]?.score).toBe(1);
    for (const hit of hits.slice(1)) {
      expect(hit.score).toBeGreaterThan(0);
      expect(hit.score).toBeLessThan(1);
    }
    expect(hits.map((hit) => hit.score)).toEqual([...hits.map((hit) => hit.score)].sort((a, b) => b - a));
    expect(hits[0]).toMatchObject({
      file: 'garden/roses.md',
      collection: 'garden',
      path: 'roses.md',
      title: 'Pruning roses',
      docid: expect.stringMatching(/^#[0-9a-f]{8}$/),
    });
  });

  it('makes snippets with the matched terms and gives the line of the best match', () => {
    const [hit] = store.search('zebra');
    expect(hit?.snippet).toContain('**zebra**');
    expect(hit?.line).toBe(7);
    const [custom] = store.search('zebra', { highlight: { open: '<', close: '>' } });
    expect(custom?.snippet).toContain('<zebra>');
  });

  it('stems words and takes a trailing * as a prefix', () => {
    expect(store.search('pruned').length).toBeGreaterThan(0);
    expect(store.search('index*').map((hit) => hit.file)).toEqual(['garden/indexing.md']);
  });

  it('requires every term, and falls back to any term when none has them all', () => {
    expect(store.search('pruning shears').map((hit) => hit.file)).toEqual(['garden/tools.md']);
    expect(store.search('zebra unicorn').map((hit) => hit.file)).toEqual(['garden/lines.md']);
    expect(store.search('"outward bud"').map((hit) => hit.file)).toEqual(['garden/roses.md']);
    expect(store.search('"bud outward"')).toEqual([]);
  });

  it('filters by collection, limit and minScore', async () => {
    expect(store.search('pruning', { collections: ['kitchen'] }).map((hit) => hit.file)).toEqual(['kitchen/bread.md']);
    expect(store.search('pruning', { limit: 1 })).toHaveLength(1);
    const all = store.search('pruning');
    const threshold = all[1]?.score ?? 1;
    expect(store.search('pruning', { minScore: threshold }).map((hit) => hit.file)).toEqual(
      all.filter((hit) => hit.score >= threshold).map((hit) => hit.file),
    );
    // 1 keeps the best hit (and only hits as strong as it).
    expect(store.search('pruning', { minScore: 1 }).map((hit) => hit.file)).toEqual([all[0]?.file]);
    await expectQmdError(() => store.search('pruning', { collections: ['nope'] }), 'UNKNOWN_COLLECTION');
    await expectQmdError(() => store.search('pruning', { limit: 0 }), 'BAD_ARGUMENT');
  });

  it('never turns user text into an SQL error', () => {
    const hostile = [
      '"',
      '""',
      '*',
      '**',
      'AND OR NOT',
      'pruning AND',
      'OR pruning',
      'NOT pruning',
      '(',
      ')',
      '(pruning',
      'NEAR',
      'NEAR(pruning shears, 2)',
      'pruning NEAR shears',
      'title:pruning',
      '{title body}: pruning',
      '-pruning',
      '+pruning',
      '^pruning',
      '*pruning',
      'prun*ing*',
      'a"b"c',
      '"unbalanced pruning',
      "'; DROP TABLE documents; --",
      '\\',
      ':',
      '🎉',
      '日本語のノート',
      'Ǆemal ﬁle café',
      'e\u0301',
      '\u0000',
      '',
      '   ',
      'x'.repeat(10_000),
      Array.from({ length: 500 }, (_, i) => `w${i}`).join(' '),
    ];
    for (const query of hostile) {
      try {
        const hits = store.search(query);
        expect(Array.isArray(hits)).toBe(true);
      } catch (error) {
        throw new Error(`query ${JSON.stringify(query.slice(0, 40))} threw ${String(error)}`);
      }
    }
    expect(store.search('AND OR NOT')).toEqual([]);
    expect(store.search('pruning AND').length).toBe(4);
    expect(store.search('title:pruning').length).toBe(0);
  });

  it('throws ABORTED when the signal has fired', async () => {
    const signal = AbortSignal.abort();
    await expectQmdError(() => store.search('pruning', { signal }), 'ABORTED');
    await expectQmdError(() => store.query('pruning', { signal }), 'ABORTED');
  });

  it('answers query() with BM25 and says why', async () => {
    const result = await store.query('pruning', { limit: 2 });
    expect(result.mode).toBe('bm25');
    expect(result.note).toMatch(/BM25/);
    expect(result.hits.map((hit) => hit.file)).toEqual(store.search('pruning', { limit: 2 }).map((hit) => hit.file));
  });

  it('refuses a minScore that is not a number', async () => {
    await expectQmdError(() => store.search('x', { minScore: Number.NaN }), 'BAD_ARGUMENT');
  });
});
