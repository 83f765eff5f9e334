import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The layout rules of docs/design.md §4 that dependency-cruiser cannot see: a file a reader
 * can take in at one sitting, a folder that tells what lives in it, and comments that say
 * why rather than point at an issue the next reader cannot open.
 */
const ROOT = join(import.meta.dirname, '../..');
const MAX_LINES = 450;
const MAX_FILES_PER_FOLDER = 20;

function sourceFolders(dir: string): Array<{ folder: string; files: string[] }> {
  const entries = readdirSync(join(ROOT, dir), { withFileTypes: true });
  const files = entries.filter((e) => e.isFile() && e.name.endsWith('.ts')).map((e) => `${dir}/${e.name}`);
  const below = entries.filter((e) => e.isDirectory()).flatMap((e) => sourceFolders(`${dir}/${e.name}`));
  return [{ folder: dir, files }, ...below];
}

const folders = [...sourceFolders('src'), ...sourceFolders('machines')];
const files = folders.flatMap((f) => f.files);

/** A comment line that names an issue: `issue 31`, `issues 31 and 34`, `typescript-sdk#2002`. */
const CITES_AN_ISSUE = /\bissues?\s+#?\d+|[a-z][\w-]*#\d+\b/i;

function commentLines(text: string): string[] {
  return text.split('\n').filter((line) => /^\s*(\/\/|\/\*|\*)/.test(line));
}

describe('the layout of src/ and machines/', () => {
  it('finds the sources it checks', () => {
    expect(files).toContain('src/core/compose.ts');
    expect(files).toContain('machines/lifecycle.ts');
  });

  it(`has no file over ${MAX_LINES} lines`, () => {
    const long = files
      .map((file) => ({ file, lines: readFileSync(join(ROOT, file), 'utf8').split('\n').length - 1 }))
      .filter(({ lines }) => lines > MAX_LINES);
    expect(long).toEqual([]);
  });

  it(`has no folder with more than ${MAX_FILES_PER_FOLDER} source files`, () => {
    const crowded = folders
      .filter(({ files }) => files.length > MAX_FILES_PER_FOLDER)
      .map(({ folder, files }) => `${relative(ROOT, join(ROOT, folder))}: ${files.length}`);
    expect(crowded).toEqual([]);
  });

  it('has no comment that cites an issue number', () => {
    const citing = files.flatMap((file) =>
      commentLines(readFileSync(join(ROOT, file), 'utf8'))
        .filter((line) => CITES_AN_ISSUE.test(line))
        .map((line) => `${file}: ${line.trim()}`),
    );
    expect(citing).toEqual([]);
  });

  it('recognises a citation when there is one', () => {
    expect(commentLines('// the peer does this (issue 31)\nconst issue = 31;')).toHaveLength(1);
    expect(CITES_AN_ISSUE.test(' * never listens for it (typescript-sdk#2002)')).toBe(true);
    expect(CITES_AN_ISSUE.test(' * `#docid` or `#a1b2c3d4`, a docid')).toBe(false);
  });
});
