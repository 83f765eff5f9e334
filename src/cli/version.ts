import { readFileSync } from 'node:fs';

let cached: string | undefined;

/**
 * The package version, read from the nearest package.json named `qmd` above this module:
 * the same code runs from `src/cli/` (tsx) and `dist/src/cli/` (built), at different depths.
 */
export function packageVersion(): string {
  if (cached !== undefined) return cached;
  let dir = new URL('.', import.meta.url);
  for (let i = 0; i < 6; i++) {
    try {
      const pkg = JSON.parse(readFileSync(new URL('package.json', dir), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'qmd' && pkg.version) {
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
