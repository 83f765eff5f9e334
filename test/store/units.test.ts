import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { resolveIndexPath } from '../../src/core/index.js';
import { toFtsQuery } from '../../src/search/fts-query.js';
import { extractTitle, lineAt, lineStarts } from '../../src/text/markdown.js';
import { generateCorpus } from '../support/corpus.js';

describe('resolveIndexPath', () => {
  it('prefers --index, then QMD_INDEX, then INDEX_PATH, then XDG_CACHE_HOME, then ~/.cache', () => {
    const env = { QMD_INDEX: '/env/index.sqlite', XDG_CACHE_HOME: '/xdg', HOME: '/home/u' };
    expect(resolveIndexPath({ flag: '/flag/i.sqlite', env })).toBe('/flag/i.sqlite');
    expect(resolveIndexPath({ env })).toBe('/env/index.sqlite');
    expect(resolveIndexPath({ env: { XDG_CACHE_HOME: '/xdg', HOME: '/home/u' } })).toBe(
      '/xdg/qmd/indexes/index.sqlite',
    );
    expect(resolveIndexPath({ env: { HOME: '/home/u' } })).toBe('/home/u/.cache/qmd/indexes/index.sqlite');
    expect(resolveIndexPath({ flag: '', env: { QMD_INDEX: '', XDG_CACHE_HOME: '', HOME: '/h' } })).toBe(
      '/h/.cache/qmd/indexes/index.sqlite',
    );
    expect(resolveIndexPath({ flag: 'rel.sqlite', env: {} })).toBe(path.resolve('rel.sqlite'));
    const peer = { INDEX_PATH: '/peer/index.sqlite', XDG_CACHE_HOME: '/xdg' };
    expect(resolveIndexPath({ env: peer })).toBe('/peer/index.sqlite');
    expect(resolveIndexPath({ env: { ...peer, QMD_INDEX: '/env/index.sqlite' } })).toBe('/env/index.sqlite');
    expect(resolveIndexPath({ flag: '/flag/i.sqlite', env: peer })).toBe('/flag/i.sqlite');
    expect(resolveIndexPath({ env: { INDEX_PATH: ' ', XDG_CACHE_HOME: '/xdg' } })).toBe(
      '/xdg/qmd/indexes/index.sqlite',
    );
  });
});

describe('toFtsQuery', () => {
  it('quotes every term, keeps phrases and prefixes, drops operators and punctuation', () => {
    expect(toFtsQuery('alpha beta')).toEqual({ all: '"alpha" "beta"', any: '"alpha" OR "beta"', terms: 2 });
    expect(toFtsQuery('"two words" index*')?.all).toBe('"two words" "index"*');
    expect(toFtsQuery('a AND b OR NOT c NEAR d')?.all).toBe('"a" "b" "c" "d"');
    expect(toFtsQuery('say "hi')?.all).toBe('"say" "hi"');
    expect(toFtsQuery('foo"bar')?.all).toBe('"foo" "bar"');
    expect(toFtsQuery('( * ) 🎉 "')).toBeUndefined();
    expect(toFtsQuery('')).toBeUndefined();
    expect(toFtsQuery('x'.repeat(3) + ' y'.repeat(100))?.terms).toBe(32);
  });
});

describe('markdown', () => {
  it('finds titles', () => {
    expect(extractTitle('# Hello #\n', 'a.md')).toBe('Hello');
    expect(extractTitle('#NoSpace\n', 'dir/file.name.md')).toBe('file.name');
    expect(extractTitle('text\n\n### Third  level ###\n', 'a.md')).toBe('Third level');
    expect(extractTitle('    # indented code\n', 'b.md')).toBe('b');
    expect(extractTitle('~~~\n# in fence\n~~~\nTitle\n---\n', 'c.md')).toBe('Title');
    // Whole, however long (qmd 2.x prints titles whole): it was cut at 200 characters.
    const long = `A ${'very '.repeat(80)}long title`;
    expect(extractTitle(`# ${long}\n\ntext\n`, 'd.md')).toBe(long);
  });

  it('counts lines', () => {
    expect(lineStarts('a\nb\nc')).toEqual([0, 2, 4]);
    expect(lineStarts('a\nb\n')).toEqual([0, 2]);
    expect(lineAt('a\nb\nc', 4)).toBe(3);
    expect(lineAt('a\nb\nc', 0)).toBe(1);
  });
});

describe('generateCorpus', () => {
  it('is deterministic and plants its rare words where it says', () => {
    const dirs = [0, 1].map(() => fs.mkdtempSync(path.join(os.tmpdir(), 'qmd-corpus-')));
    try {
      const [a, b] = dirs.map((dir) => generateCorpus(dir, { files: 40, seed: 3 }));
      expect(a?.files).toEqual(b?.files);
      expect(a?.bytes).toBe(b?.bytes);
      for (const file of a?.files ?? []) {
        expect(fs.readFileSync(path.join(dirs[0] ?? '', file), 'utf8')).toBe(
          fs.readFileSync(path.join(dirs[1] ?? '', file), 'utf8'),
        );
      }
      expect(a?.rare.size).toBeGreaterThanOrEqual(10);
      for (const [word, files] of a?.rare ?? []) {
        for (const file of files) expect(fs.readFileSync(path.join(dirs[0] ?? '', file), 'utf8')).toContain(word);
      }
      const other = generateCorpus(path.join(dirs[1] ?? '', 'other'), { files: 40, seed: 4 });
      expect(other.bytes).not.toBe(a?.bytes);
    } finally {
      for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
