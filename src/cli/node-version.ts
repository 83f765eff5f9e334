/**
 * Which Node qmd runs on: the same range as `engines.node` in package.json (a test holds them
 * equal). 22.14 is the first 22 with N-API 10, which better-sqlite3 13's prebuilt addon needs
 * though its own `engines` says `>=22`: on 22.0.0, 22.12.0 and 22.13.0 (N-API 9), and on 20,
 * it segfaults as it loads (measured; docs/design.md §5). 23 is skipped, an odd line at its
 * end of life. Tested: 22.23.5 and 24.22.3 in CI, 22.14.0 by hand.
 */
export const NODE_RANGE = '^22.14.0 || >=24.0.0';

/** Whether `version` (`v22.23.5`) is in `NODE_RANGE`. */
export function nodeSupported(version: string): boolean {
  const [major = 0, minor = 0] = version.replace(/^v/, '').split('.').map(Number);
  return (major === 22 && minor >= 14) || major >= 24;
}

/** The one line an unsupported Node gets, saying what it needs, what it got, and what to run. */
export function nodeMismatch(version: string): string {
  return `qmd: needs Node 24 (or 22.14 or later), this is Node ${version}; install one (npm i -g node@24, or nvm install 24) and run qmd with it`;
}
