import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import * as vm from 'node:vm';
import { makePrivateDir, replacePrivateFile } from '../private-file.js';

/** A CommonJS script run with a V8 code cache (see `loadCachedScript`). */
export interface CachedScript<T> {
  exports: T;
  /** V8 took the cache: nothing of the script was parsed or compiled from its source. */
  cached: boolean;
  /** Writes the cache for the next start if this one had none, with what has been compiled so far. */
  save(): void;
}

/**
 * Runs `file`, a CommonJS script, the way Node's `require` would, but through `vm.Script` with
 * V8's code cache: `qmd mcp`. Made for Node 20, whose ESM loader had no cache, it still pays on
 * Node 22 and 24, where Node's own compile cache covers the ES chunks but does not reach a
 * vm.Script: less CPU to the `initialize` reply than the ES chunks with Node's compile cache
 * (docs/design.md §5, "Start-up").
 *
 * The cache is `$cacheDir/<script name>.<node version>-<arch>.v8`. V8 checks its own version,
 * flags and the source's length, not its content, so `file`'s name must change with its content
 * (scripts/build.ts puts a content hash in it). `save()` writes with the functions compiled
 * until then (call it late: at exit the whole start-up and what ran since are in), through a
 * temporary file and a rename, and drops caches of this script's other builds. Every failure
 * to read or write a cache only costs the cache.
 *
 * The script gets `__qmdImport(specifier)` for the ES modules it loads (node-llama-cpp): a
 * vm.Script has no dynamic-import callback ("A dynamic import callback was not specified",
 * ERR_VM_DYNAMIC_IMPORT_CALLBACK_MISSING, measured on Node 20.20.2, 22.23.5 and 24.22.3, from
 * source and from a cache alike), and a callback of our own needs --experimental-vm-modules. scripts/build.ts rewrites the script's `import()`
 * calls to it. `importEsm` is the caller's `import()`: it resolves from the caller's module.
 */
export function loadCachedScript<T>(
  file: string,
  cacheDir: string,
  importEsm: (specifier: string) => Promise<unknown>,
): CachedScript<T> {
  const source = readFileSync(file, 'utf8');
  const name = path.basename(file);
  const cacheFile = path.join(cacheDir, `${name}.${process.version}-${process.arch}.v8`);
  let cachedData: Buffer | undefined;
  try {
    cachedData = readFileSync(cacheFile);
  } catch {
    // No cache yet: this start compiles, and save() keeps what it compiled.
  }
  // Node's own CommonJS wrapper, on the script's first line so its line numbers stay true.
  const wrapped = `(function (exports, require, module, __filename, __dirname, __qmdImport) {${source}\n})`;
  const script = new vm.Script(wrapped, { filename: file, ...(cachedData !== undefined && { cachedData }) });
  const module = { exports: {} as T };
  const wrapper = script.runInThisContext() as (...args: unknown[]) => void;
  wrapper(module.exports, createRequire(file), module, file, path.dirname(file), importEsm);
  const cached = cachedData !== undefined && !script.cachedDataRejected;
  return {
    exports: module.exports,
    cached,
    save() {
      if (cached) return;
      try {
        makePrivateDir(cacheDir, { tighten: true });
        replacePrivateFile(cacheFile, `${cacheFile}.${process.pid}.tmp`, script.createCachedData());
        const stem = name.replace(/-[^-]+\.cjs$/, '-');
        for (const other of readdirSync(cacheDir)) {
          if (other.startsWith(stem) && other.endsWith('.v8') && !other.startsWith(name)) {
            rmSync(path.join(cacheDir, other), { force: true });
          }
        }
      } catch {
        // A cache is an optimisation: an unwritable directory costs the next start, nothing more.
      }
    },
  };
}
