import { cpSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { applyMutant, type Mutant } from '../model/mutants.js';

/** Never copied: dependencies are linked, the rest is output, history or scratch. */
const SKIP = new Set(['node_modules', '.git', 'dist', 'reports', '.stryker-tmp', 'scratch', '.tmp']);

/**
 * Copies `paths` (relative to `root`) into `dest`, links `node_modules` when `dest` is not
 * under `root` (inside it, Node finds the real one by walking up), and applies `mutant` to
 * the copy (`null`: none, a baseline). The original tree is never touched. Returns `dest`. With
 * `withTests: false` no `*.test.ts` is copied: a copy left under test/ by a crashed run must not
 * join `npm test`.
 */
export function mutatedCopy(
  root: string,
  dest: string,
  mutant: Mutant | null,
  paths: string[],
  withTests = true,
): string {
  mkdirSync(dest, { recursive: true });
  for (const path of paths) {
    cpSync(join(root, path), join(dest, path), {
      recursive: true,
      filter: (src) =>
        (withTests || !src.endsWith('.test.ts')) &&
        !relative(root, src)
          .split(sep)
          .some((part) => SKIP.has(part)),
    });
  }
  if (relative(root, dest).startsWith('..')) symlinkSync(join(root, 'node_modules'), join(dest, 'node_modules'), 'dir');
  if (mutant === null) return dest;
  const file = join(dest, mutant.file);
  writeFileSync(file, applyMutant(mutant, readFileSync(file, 'utf8')));
  return dest;
}
