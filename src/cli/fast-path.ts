import { fileURLToPath } from 'node:url';
import { runAction } from './action.js';
import { compileCacheDir } from './boot.js';
import { loadCachedScript } from './code-cache.js';
import { MCP_DEFAULTS, type McpFlags } from './commands/mcp.js';

/** The bundle's code-cached `qmd mcp` script, beside this chunk (scripts/build.ts); unset from sources. */
declare const __QMD_MCP_SCRIPT__: string | undefined;

/**
 * Command lines that skip commander: `qmd mcp`, exactly, is what MCP clients spawn, once per
 * session, and then wait on. Loading and running commander to learn that it means "stdio, no
 * options" cost about 10 to 14 ms of CPU before `initialize` could be answered (Node 20, 20
 * to 25 interleaved rounds, ~5% of the start-up). Each entry must run what commander would:
 * the same action, with the flags commander's defaults give (test/cli/program.test.ts parses
 * each one with commander and compares). Anything else on the command line goes through
 * commander.
 *
 * Keyed by the arguments after `qmd`, joined by spaces.
 */
const FAST_PATHS: ReadonlyMap<string, () => Promise<void>> = new Map([
  ['mcp', mcp],
  ['mcp --shared', relay],
]);

/** The command line's fast path, if it has one. */
export function fastPath(argv: readonly string[]): (() => Promise<void>) | undefined {
  return FAST_PATHS.get(argv.slice(2).join(' '));
}

/** What commander parses for each fast command line: the flags its fast path runs with. */
export function fastPathFlags(args: readonly string[]): McpFlags {
  return args.includes('--shared') ? { ...MCP_DEFAULTS, shared: true } : MCP_DEFAULTS;
}

/** The command lines that have one, as argument lists (for the test that holds them to commander). */
export function fastPathArgs(): string[][] {
  return [...FAST_PATHS.keys()].map((key) => key.split(' '));
}

/**
 * `qmd mcp`: in the bundle, its CommonJS script with a V8 code cache (code-cache.ts: ~12% of
 * the start-up's CPU on Node 22 against Node's compile cache for the ES chunks), the cache
 * written as the process leaves when this start had none. From sources, or with
 * NODE_DISABLE_COMPILE_CACHE=1 (Node's switch, honoured here too), the ES modules.
 */
function mcp(): Promise<void> {
  const file = typeof __QMD_MCP_SCRIPT__ === 'string' ? new URL(__QMD_MCP_SCRIPT__, import.meta.url) : undefined;
  const script =
    file !== undefined && !process.env.NODE_DISABLE_COMPILE_CACHE
      ? loadCachedScript<{ runMcp(): Promise<void> }>(
          fileURLToPath(file),
          compileCacheDir(process.env),
          (specifier) => import(specifier),
        )
      : undefined;
  if (script !== undefined) {
    if (!script.cached) process.once('beforeExit', () => script.save());
    return script.exports.runMcp();
  }
  return runAction({}, async (ctx) => {
    // Fetched together: mcpCommand imports the stdio server next, one more trip to the disk.
    const [{ MCP_DEFAULTS, mcpCommand }] = await Promise.all([
      import('./commands/mcp.js'),
      import('../serve/stdio.js'),
    ]);
    await mcpCommand(ctx, MCP_DEFAULTS);
  });
}

/**
 * `qmd mcp --shared`: the relay every client starts when it shares one server. It loads the
 * lifecycle and the relay and nothing of the server (src/relay/ may not import it: lint), so it
 * needs no code-cached script: its ES chunks are small. Measured: a code-cached relay script
 * (1.45 MB unsplit, the fallback server inlined) bought nothing — relay ÷ bare node 1.47× with
 * it, 1.38× without (`npm run bench -- shared`, 30 rounds each, Node 20).
 */
function relay(): Promise<void> {
  return runAction({}, async (ctx) => {
    const [{ mcpCommand }] = await Promise.all([import('./commands/mcp.js'), import('../serve/relay.js')]);
    await mcpCommand(ctx, fastPathFlags(['mcp', '--shared']));
  });
}
