import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import createDatabase from 'better-sqlite3/lib/database.js';
import SqliteError from 'better-sqlite3/lib/sqlite-error.js';
import type { Binding } from './load.js';
import { requireBinding as packageBinding } from './load.js';

/** The better-sqlite3 whose JS this bundle holds (scripts/build.ts defines it from the package it bundled). */
declare const __QMD_BETTER_SQLITE3_VERSION__: string;

/**
 * better-sqlite3 in the bundle (scripts/build.ts puts this file in place of `load.ts`):
 * its JS (`lib/database.js` and the 11 modules it requires) is bundled, so the code-cached
 * script holds it, and only its addon is loaded from the installed package. Loading the package
 * itself cost every `qmd mcp` start its 15 CommonJS files through Node's loader (resolution,
 * reads, compile-cache lookups: docs/design.md §5, "Start-up").
 *
 * The addon is found as the package's own `lib/binding.js` finds it (a compiled `build/` first,
 * then `prebuilds/<platform>-<arch>.node`, `linuxmusl` where the process runs on musl), in the
 * better-sqlite3 this file resolves (`node_modules` beside the bundle, or above it when npm
 * hoisted it). Anything else (another version installed than the one bundled, a platform with
 * no prebuild and no build, an addon that will not load) falls back to the package's own entry,
 * which loads as it always did or fails with its own words.
 */
export function requireBinding(): Binding {
  const require = createRequire(import.meta.url);
  let addon: unknown;
  try {
    const dir = path.dirname(require.resolve('better-sqlite3/package.json'));
    const { version } = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')) as { version?: unknown };
    const file = version === __QMD_BETTER_SQLITE3_VERSION__ ? addonFile(dir) : undefined;
    if (file !== undefined) addon = require(file);
  } catch {
    addon = undefined;
  }
  if (addon === undefined) return packageBinding();
  const Database = createDatabase(() => addon, false) as Binding;
  return Object.assign(Database, { SqliteError });
}

const PREBUILD_PLATFORMS = ['linux', 'darwin', 'win32'];
const PREBUILD_ARCHS = ['x64', 'arm64'];

/** The addon better-sqlite3 13.2.0's `getBinding` would load from `dir`, if it is there. */
function addonFile(dir: string): string | undefined {
  for (const build of ['Debug', 'Release']) {
    const compiled = path.join(dir, 'build', build, 'better_sqlite3.node');
    if (fs.existsSync(compiled)) return compiled;
  }
  if (!PREBUILD_PLATFORMS.includes(process.platform) || !PREBUILD_ARCHS.includes(process.arch)) return undefined;
  const target = `${isLinuxMusl() ? 'linuxmusl' : process.platform}-${process.arch}`;
  const prebuilt = path.join(dir, 'prebuilds', `${target}.node`);
  return fs.existsSync(prebuilt) ? prebuilt : undefined;
}

/**
 * The package's own check: which libc loader is mapped into this process. Under 1 ms of CPU
 * (measured: reading the ELF interpreter of `process.execPath` instead cost the same).
 * Undecided (no /proc) answers glibc's, and the package's entry decides if that addon fails.
 */
function isLinuxMusl(): boolean {
  if (process.platform !== 'linux') return false;
  try {
    const maps = fs.readFileSync('/proc/self/maps', 'latin1');
    if (/\/ld-musl-[^/\s]*\.so/.test(maps)) return true;
  } catch {
    // No /proc: the glibc addon is tried, and the package's own loader decides if it fails.
  }
  return false;
}
