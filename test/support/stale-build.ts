import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** What `npm run build` reads: a change to any of these after the build leaves `dist/` stale. */
const INPUTS = ['src', 'machines', 'package.json', 'scripts/build.ts'];

/**
 * Why `bin` (a bundle `npm run build` wrote) would run old code, or `undefined` when it is at
 * least as new as every build input. The build deletes `dist/` and writes it afresh, so a fresh
 * clone or checkout followed by `npm run build` always passes. Used by the spawned tests
 * (`qmd.ts`) and the benchmarks (`bench/lib/paths.ts`).
 */
export function staleBuild(bin: string, howToBuild = 'run `npm run build`'): string | undefined {
  let built: number;
  try {
    built = statSync(bin).mtimeMs;
  } catch {
    return `${relative(ROOT, bin) || bin} is missing: ${howToBuild}`;
  }
  const newest = { path: '', mtime: 0 };
  const visit = (path: string) => {
    const stat = statSync(path);
    if (stat.isDirectory()) for (const name of readdirSync(path)) visit(join(path, name));
    else if (stat.mtimeMs > newest.mtime) Object.assign(newest, { path, mtime: stat.mtimeMs });
  };
  for (const input of INPUTS) visit(join(ROOT, input));
  if (newest.mtime <= built) return undefined;
  return `${relative(ROOT, bin) || bin} is older than ${relative(ROOT, newest.path)}: ${howToBuild}`;
}
