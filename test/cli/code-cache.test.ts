import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadCachedScript } from '../../src/cli/code-cache.js';

let dir = '';
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'qmd-code-cache-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** A CommonJS script using what Node gives one (require, module, exports, __filename) and __qmdImport. */
function writeScript(name = 'qmd-mcp-AAAA1111.cjs'): string {
  const file = join(dir, name);
  writeFileSync(
    file,
    [
      "const path = require('node:path');",
      'exports.name = path.basename(__filename);',
      'module.exports.double = (n) => n * 2;',
      "exports.loadEsm = () => __qmdImport('node:url').then((url) => typeof url.pathToFileURL);",
    ].join('\n'),
  );
  return file;
}

const FIXTURE = fileURLToPath(new URL('./fixtures/load-script.ts', import.meta.url));

/** One load in a fresh process: V8's in-process compilation cache would otherwise answer for the disk's. */
function loadInChild(file: string): { cached: boolean; doubled: number; esm: string } {
  return JSON.parse(
    execFileSync(process.execPath, ['--import', 'tsx', FIXTURE, file, cacheDir()], { encoding: 'utf8' }),
  );
}

const importEsm = (specifier: string) => import(specifier);

type Exports = { name: string; double(n: number): number; loadEsm(): Promise<string> };
const cacheDir = () => join(dir, 'cache');
const cacheFiles = () => (existsSync(cacheDir()) ? readdirSync(cacheDir()) : []);

describe('loadCachedScript', () => {
  it("runs a CommonJS script as require would, with the caller's import() as __qmdImport", async () => {
    const script = loadCachedScript<Exports>(writeScript(), cacheDir(), importEsm);
    expect(script?.exports.name).toBe('qmd-mcp-AAAA1111.cjs');
    expect(script?.exports.double(21)).toBe(42);
    expect(await script?.exports.loadEsm()).toBe('function');
  });

  it('compiles without a cache the first time and writes one on save(); the next start takes it', () => {
    const file = writeScript();
    expect(loadInChild(file)).toEqual({ cached: false, doubled: 42, esm: 'function' });
    expect(cacheFiles()).toEqual([`qmd-mcp-AAAA1111.cjs.${process.version}-${process.arch}.v8`]);
    const cache = join(cacheDir(), cacheFiles()[0] as string);
    const written = statSync(cache).mtimeMs;
    expect(loadInChild(file)).toEqual({ cached: true, doubled: 42, esm: 'function' });
    expect(statSync(cache).mtimeMs, 'a cache that was taken is not written again').toBe(written);
  });

  it('ignores a cache V8 refuses, and replaces it on save()', () => {
    const file = writeScript();
    loadInChild(file);
    const cache = join(cacheDir(), cacheFiles()[0] as string);
    writeFileSync(cache, 'not a code cache');
    expect(loadInChild(file)).toEqual({ cached: false, doubled: 42, esm: 'function' });
    expect(readFileSync(cache).length).toBeGreaterThan('not a code cache'.length);
    expect(loadInChild(file)).toEqual({ cached: true, doubled: 42, esm: 'function' });
  });

  it("drops the caches of the script's other builds, and nothing else", () => {
    loadCachedScript<Exports>(writeScript('qmd-mcp-OLD00000.cjs'), cacheDir(), importEsm)?.save();
    writeFileSync(join(cacheDir(), 'unrelated.v8'), '');
    loadCachedScript<Exports>(writeScript('qmd-mcp-NEW11111.cjs'), cacheDir(), importEsm)?.save();
    expect(cacheFiles().sort()).toEqual([`qmd-mcp-NEW11111.cjs.${process.version}-${process.arch}.v8`, 'unrelated.v8']);
  });

  it('costs only the cache when the cache directory cannot be written', () => {
    const blocked = join(dir, 'a-file');
    writeFileSync(blocked, '');
    const script = loadCachedScript<Exports>(writeScript(), join(blocked, 'cache'), importEsm);
    expect(() => script?.save()).not.toThrow();
    expect(script?.exports.double(5)).toBe(10);
  });
});
