/**
 * The one authority on what a reference may name (`parseRef`), against the whole
 * path-escape table, and the forms it lets through. Pure: no index, no filesystem.
 */
import { describe, expect, it } from 'vitest';
import { isQmdError } from '../../src/errors.js';
import { climbs, type DocumentRef, parseRef, splitLineRange } from '../../src/store/refs.js';
import { pathEscapeCases, type Verdict } from '../support/path-escape.js';

const roots = [
  { name: 'notes', root: '/srv/qmd/notes' },
  { name: 'journal', root: '/srv/qmd/journal' },
  { name: 'sub', root: '/srv/qmd/notes/sub' },
];
const home = '/home/u';
const parse = (input: string): DocumentRef => parseRef(input, roots, home);

function verdictOf(input: string): Verdict {
  try {
    parse(input);
    return 'indexOnly';
  } catch (error) {
    if (!isQmdError(error)) throw error;
    // One line: the CLI prints it as is, a model reads it. A refusal names what it refused.
    expect(error.message).not.toContain('\n');
    if (error.code === 'OUTSIDE_COLLECTIONS') {
      expect(error.message).toContain(`"${input}" is outside the indexed collections`);
      return 'outside';
    }
    if (error.code === 'BAD_ARGUMENT') return 'bad';
    throw error;
  }
}

describe('parseRef, the authority', () => {
  it.each(pathEscapeCases({ dir: '/srv/qmd', notes: '/srv/qmd/notes' }))(
    '$input: $verdict ($why)',
    ({ input, verdict }) => {
      expect(verdictOf(input)).toBe(verdict);
    },
  );

  it.each<[string, DocumentRef]>([
    ['notes/a.md', { kind: 'relative', path: 'notes/a.md' }],
    ['  readme.md  ', { kind: 'relative', path: 'readme.md' }],
    ['meeting-2024-01.md', { kind: 'relative', path: 'meeting-2024-01.md' }],
    ['100%.md', { kind: 'relative', path: '100%.md' }],
    ['**/2025-*.md', { kind: 'relative', path: '**/2025-*.md' }],
    ['qmd://notes/with%20space.md', { kind: 'relative', path: 'notes/with space.md' }],
    ['qmd://meeting-2024-01.md', { kind: 'relative', path: 'meeting-2024-01.md' }],
    ['#1A2B3C4D', { kind: 'docid', docid: '1a2b3c4d' }],
    ['qmd://#1a2b3c', { kind: 'docid', docid: '1a2b3c' }],
    ['/srv/qmd/journal/2025/may.md', { kind: 'rooted', places: [{ collection: 'journal', path: '2025/may.md' }] }],
    [
      '/srv/qmd/notes/sub/b.md',
      {
        kind: 'rooted',
        places: [
          { collection: 'sub', path: 'b.md' },
          { collection: 'notes', path: 'sub/b.md' },
        ],
      },
    ],
    ['qmd:///srv/qmd/notes/a.md', { kind: 'rooted', places: [{ collection: 'notes', path: 'a.md' }] }],
    ['/srv/qmd/notes/*.md', { kind: 'rooted', places: [{ collection: 'notes', path: '*.md' }] }],
  ])('lets %j through as %j', (input, expected) => {
    expect(parse(input)).toEqual(expected);
  });

  it('expands ~/ to the home directory, which is then like any absolute path', () => {
    expect(parseRef('~/notes/a.md', [{ name: 'notes', root: '/home/u/notes' }], home)).toEqual({
      kind: 'rooted',
      places: [{ collection: 'notes', path: 'a.md' }],
    });
  });

  it('a collection at / holds every absolute path, and still no ..', () => {
    const all = [{ name: 'all', root: '/' }];
    expect(parseRef('/etc/hosts', all, home)).toEqual({
      kind: 'rooted',
      places: [{ collection: 'all', path: 'etc/hosts' }],
    });
    expect(() => parseRef('/etc/../x', all, home)).toThrow(/outside/);
  });
});

describe('climbs', () => {
  it('is a .. segment between slashes or backslashes, spaced or not', () => {
    for (const yes of ['..', 'a/..', '../a', 'a/../b', 'a\\..\\b', 'a/ .. /b']) expect(climbs(yes), yes).toBe(true);
    for (const no of ['a..b', '...', '..a/b', 'a/b..', '.', '']) expect(climbs(no), no).toBe(false);
  });
});

describe('splitLineRange', () => {
  it('reads :LINE and :FROM:COUNT, as qmd 2.8 does', () => {
    expect(splitLineRange('notes/a.md:120')).toEqual({ ref: 'notes/a.md', fromLine: 120 });
    expect(splitLineRange('notes/a.md:120:40')).toEqual({ ref: 'notes/a.md', fromLine: 120, maxLines: 40 });
    expect(splitLineRange('#1a2b3c4d:3:2')).toEqual({ ref: '#1a2b3c4d', fromLine: 3, maxLines: 2 });
    expect(splitLineRange('qmd://notes/a.md:7')).toEqual({ ref: 'qmd://notes/a.md', fromLine: 7 });
    for (const none of ['notes/a.md', 'notes/a.md:', 'notes/a.md:x', ':12', 'a.md:1.5']) {
      expect(splitLineRange(none), none).toBeUndefined();
    }
  });
});
