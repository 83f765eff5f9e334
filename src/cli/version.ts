import { readFileSync } from 'node:fs';

let cached: string | undefined;

/**
 * The package version, read from the nearest package.json above this module that ships the
 * `qmd` bin (the package is `qmd-search` on the npm registry, README: Install): the same code
 * runs from `src/cli/` (tsx) and `dist/chunks/` (built), at different depths.
 */
export function packageVersion(): string {
  if (cached !== undefined) return cached;
  let dir = new URL('.', import.meta.url);
  for (let i = 0; i < 6; i++) {
    try {
      const pkg = JSON.parse(readFileSync(new URL('package.json', dir), 'utf8')) as {
        bin?: Record<string, string>;
        version?: string;
      };
      if (typeof pkg.bin?.qmd === 'string' && pkg.version) {
        cached = pkg.version;
        return cached;
      }
    } catch {
      // Not here: look one level up.
    }
    dir = new URL('..', dir);
  }
  cached = '0.0.0';
  return cached;
}
