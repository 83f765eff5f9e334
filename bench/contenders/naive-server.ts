/**
 * `qmd mcp` over stdio with the naive llama.cpp dispose order: the contender the disposal
 * benchmarks count crashes of (`bench/embed.ts`, `bench/benchmarks/disposal.ts`). It is the
 * product's own composition (`serveStdio`, the same lifecycle, server and store) with one
 * difference, injected from code: the store's embedder comes from `naiveEmbedderFactory`
 * (`serveStdio`'s `createEmbedder`, `src/serve/serve-mcp.ts`). The shipped binary has no way to
 * do this: no flag or environment variable reaches it.
 *
 *   node --import tsx bench/contenders/naive-server.ts [ordered|all]
 *
 * The environment is read as `qmd mcp` reads it (`QMD_INDEX`, `QMD_EMBED_MODEL`,
 * `QMD_EMBED_THREADS`, `QMD_DEBUG_EMBED`, ...).
 */
import '../../src/serve/startup.js'; // first, as in main.ts: the PPID at start-up
import { createContext } from '../../src/cli/context.js';
import { reportError } from '../../src/cli/errors.js';
import { serveStdio } from '../../src/serve/stdio.js';
import { NAIVE_BANNER, type NaiveOrder, naiveEmbedderFactory } from './naive-dispose.js';

const order: NaiveOrder = process.argv[2] === 'all' ? 'all' : 'ordered';
const base = createContext({});
base.log.line(`${NAIVE_BANNER} (${order}): llama.cpp is disposed without waiting for running calls`);
try {
  await serveStdio(base, { createEmbedder: naiveEmbedderFactory(order, base.log) });
} catch (error) {
  process.exitCode = reportError(error, base.log, base.debug);
}
