import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { staleBuild as checkBuild } from '../../test/support/stale-build.js';

/** The repository root. */
export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/**
 * The binary benchmarks run: package.json's `bin.qmd`, the bundle (`npm run bench` builds
 * first), or `QMD_BENCH_BIN` — `bench/runtime.ts` points it at the packed package installed for
 * the Node it runs, whose native addons are built for that Node.
 */
export const QMD_BIN = process.env.QMD_BENCH_BIN || join(ROOT, packageBin());
function packageBin(): string {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { bin: { qmd: string } };
  return pkg.bin.qmd;
}

/** Standalone contender scripts, plain `.mjs` run by node itself (no loader cost). */
export const CONTENDERS = join(ROOT, 'bench/contenders');
/**
 * The naive-dispose contender (`qmd mcp` with llama.cpp freed under a running call): run from
 * source through tsx's loader, since the product's build does not contain it.
 */
export const NAIVE_SERVER = join(ROOT, 'bench/contenders/naive-server.ts');
export const TSX_LOADER = import.meta.resolve('tsx');
/** Generated corpora, indexes and models (gitignored). */
export const TMP = join(ROOT, 'bench/.tmp');
/**
 * Where benchmarked qmd keeps its compile caches (src/cli/boot.ts, code-cache.ts): under
 * bench/.tmp, not the user's ~/.cache, and kept between runs as a user's would be.
 */
export const BENCH_CACHE_HOME = join(TMP, 'xdg-cache');

/**
 * Spawned benchmarks run `dist/`, in-process ones import `src/` through tsx: if the build is
 * older than the sources the two disagree (e.g. on the index schema). `npm run bench` builds
 * first; this names the problem when a benchmark is started another way.
 */
export function staleBuild(): string | undefined {
  return checkBuild(QMD_BIN, 'run `npm run build` (npm run bench does)');
}
