import * as module from 'node:module';
import { envText, qmdCacheDir } from '../env.js';

/**
 * What `main.ts` does before it loads the program, because it must happen before the modules
 * it affects are loaded: both settings apply only to modules loaded after them.
 *
 * - Source maps, only under `--debug`: stack traces then name `src/` files instead of the
 *   bundle's chunks. Off otherwise: with them on, Node reads and parses every loaded chunk's
 *   map at load time, CPU every `qmd mcp` start would pay (docs/design.md §5, "Start-up").
 * - Node's compile cache (Node ≥ 22.1, `module.enableCompileCache`): the ES chunks' compiled
 *   code is kept in `$XDG_CACHE_HOME/qmd/compile-cache` (else `~/.cache/qmd/compile-cache`), so
 *   a later start skips parsing and compiling it. Node checks each entry against the source,
 *   so an upgrade only costs one cold start; `NODE_DISABLE_COMPILE_CACHE=1` turns it off and
 *   `NODE_COMPILE_CACHE=DIR` moves it (Node's own variables). `qmd mcp` itself runs from a
 *   script with a V8 code cache of its own (code-cache.ts), cheaper still.
 */
export function boot(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): void {
  privateFiles();
  if (argv.includes('--debug')) process.setSourceMapsEnabled(true);
  enableCompileCache(env);
}

/**
 * Every file and folder this process makes is its user's alone (0600, 0700), whatever the umask
 * it was started with (they hold the notes' text, or let their reader into the server): the
 * index and its `-wal`, the token, the daemon's log, the
 * shared server's files, the compile cache and downloaded models, and what a library makes
 * (SQLite, Node's compile cache). The umask only ever takes bits away, so a stricter one stays.
 * First in `boot`, before anything can write.
 */
export function privateFiles(): void {
  // Two calls: reading the umask without setting it is deprecated (DEP0139).
  process.umask(process.umask(0o077) | 0o077);
}

type EnableCompileCache = (directory?: string) => { status: number; message?: string; directory?: string };

/** Returns whether Node has a compile cache to enable (false on Node < 22.1). Never throws. */
export function enableCompileCache(env: NodeJS.ProcessEnv = process.env): boolean {
  const enable = (module as { enableCompileCache?: EnableCompileCache }).enableCompileCache;
  if (enable === undefined) return false;
  try {
    // NODE_COMPILE_CACHE (Node's own) wins: the directory argument would override it.
    enable(envText(env, 'NODE_COMPILE_CACHE') === undefined ? compileCacheDir(env) : undefined);
  } catch {
    // A cache is an optimisation: an unwritable directory must not stop the program.
  }
  return true;
}

/** `$XDG_CACHE_HOME/qmd/compile-cache`, else `~/.cache/qmd/compile-cache`: beside the default index. */
export function compileCacheDir(env: NodeJS.ProcessEnv): string {
  return qmdCacheDir(env, 'compile-cache');
}
