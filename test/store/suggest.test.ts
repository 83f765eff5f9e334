import { describe, expect, it } from 'vitest';
import { closestFiles, distance } from '../../src/store/suggest.js';

const files = [
  'notes/readme.md',
  'notes/sub/b.md',
  'notes/sub/c.md',
  'notes/a.md',
  'journal/2024/meeting-2024-01.md',
  'journal/2024/meeting-2024-02.md',
  'journal/data.md',
];

describe('distance', () => {
  it('is the edit distance while within budget, budget + 1 beyond it', () => {
    expect(distance('kitten', 'sitting', 5)).toBe(3);
    expect(distance('', 'abc', 5)).toBe(3);
    expect(distance('same', 'same', 0)).toBe(0);
    expect(distance('kitten', 'sitting', 2)).toBe(3);
    expect(distance('a', 'abcdefgh', 3)).toBe(4);
  });
});

describe('closestFiles', () => {
  it('finds typos in the path, the path without its collection, and the file name', () => {
    expect(closestFiles('notes/redme.md', files)).toEqual(['notes/readme.md']);
    expect(closestFiles('sub/bb.md', files)).toEqual(['notes/sub/b.md']);
    expect(closestFiles('metting-2024-01.md', files)).toEqual([
      'journal/2024/meeting-2024-01.md',
      'journal/2024/meeting-2024-02.md',
    ]);
    expect(closestFiles('NOTES/README.MD', files)).toEqual(['notes/readme.md']);
  });

  it('ranks the nearest first, gives at most three, and nothing for another name', () => {
    expect(closestFiles('journal/2024/meeting-2024-03.md', files, 1)).toEqual(['journal/2024/meeting-2024-01.md']);
    expect(closestFiles('notes/sub/x.md', files).length).toBeLessThanOrEqual(3);
    expect(closestFiles('d.md', files)).toEqual([]);
    expect(closestFiles('something/else/entirely.md', files)).toEqual([]);
  });
});
