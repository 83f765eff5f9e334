import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import * as module from 'node:module';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { compileCacheDir, enableCompileCache } from '../../src/cli/boot.js';
import { resolveIndexPath } from '../../src/store/paths.js';

describe('compileCacheDir', () => {
  it('is qmd/compile-cache under XDG_CACHE_HOME, else under ~/.cache: beside the default index folder', () => {
    for (const env of [
      { XDG_CACHE_HOME: '/x/cache', HOME: '/home/u' },
      { HOME: '/home/u' },
      { XDG_CACHE_HOME: ' ', HOME: '/h' },
    ]) {
      expect(compileCacheDir(env)).toBe(
        path.join(path.dirname(path.dirname(resolveIndexPath({ env }))), 'compile-cache'),
      );
    }
    expect(compileCacheDir({ XDG_CACHE_HOME: '/x/cache' })).toBe('/x/cache/qmd/compile-cache');
    expect(compileCacheDir({ HOME: '/home/u' })).toBe('/home/u/.cache/qmd/compile-cache');
  });
});

describe('enableCompileCache', () => {
  it('enables it under the cache directory where Node has the API (≥ 22.1), and does nothing where not', () => {
    const cache = mkdtempSync(path.join(tmpdir(), 'qmd-boot-'));
    try {
      const has = typeof (module as { enableCompileCache?: unknown }).enableCompileCache === 'function';
      expect(enableCompileCache({ XDG_CACHE_HOME: cache })).toBe(has);
      expect(existsSync(path.join(cache, 'qmd', 'compile-cache'))).toBe(has);
    } finally {
      rmSync(cache, { recursive: true, force: true });
    }
  });
  // What a Node 22 run writes there is checked on the bundle itself: test/e2e/packed.test.ts.
});
