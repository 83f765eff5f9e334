/**
 * Which Node qmd runs on: the same range as `engines.node` in package.json (a test holds them
 * equal). 22.16 is the first Node with every node:sqlite feature the store uses (the `timeout`
 * option, `isTransaction`, `setReturnArrays`: measured absent on 22.15.0, present on 22.16.0;
 * docs/design.md §5); 23 is skipped, an odd line at its end of life. Tested: 22.23.5, 24.22.3.
 */
export const NODE_RANGE = '^22.16.0 || >=24.0.0';

/** Whether `version` (`v22.23.5`) is in `NODE_RANGE`. */
export function nodeSupported(version: string): boolean {
  const [major = 0, minor = 0] = version.replace(/^v/, '').split('.').map(Number);
  return (major === 22 && minor >= 16) || major >= 24;
}

/** The one line an unsupported Node gets, saying what it needs, what it got, and what to run. */
export function nodeMismatch(version: string): string {
  return `qmd: needs Node 24 (or 22.16 or later), this is Node ${version}; install one (npm i -g node@24, or nvm install 24) and run qmd with it`;
}
