import { fileURLToPath } from 'node:url';
import { MCP_DEFAULTS, type McpFlags } from '../serve/mcp-flags.js';
import { compileCacheDir } from './boot.js';
import { loadCachedScript } from './code-cache.js';

/** The bundle's code-cached `qmd mcp` script, beside this chunk (scripts/build.ts); unset from sources. */
declare const __QMD_MCP_SCRIPT__: string | undefined;

/**
 * Runs the command line: its fast path if it has one, else commander's program. Loaded by
 * `main.ts` after `boot()`, so that what it imports is source-mapped under --debug too.
 */
export async function dispatch(argv: string[]): Promise<void> {
  const fast = fastPath(argv);
  if (fast !== undefined) return fast();
  const { main } = await import('./program.js');
  return main(argv);
}

/**
 * Command lines that skip commander: `qmd mcp`, exactly, is what MCP clients spawn, once per
 * session, and then wait on; loading commander to learn that it means "stdio, no options" cost
 * about 5% of the start-up (docs/design.md §5). Each entry runs what commander would: the same
 * action, with the flags commander's defaults give (test/cli/program.test.ts parses each one
 * with commander and compares). Anything else on the command line goes through commander.
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
 * `qmd mcp`: in the bundle, `src/serve/mcp.ts` as one CommonJS script run with a V8 code cache
 * (code-cache.ts: cheaper than Node's compile cache for the ES chunks, docs/design.md §5), the
 * cache written as the process leaves when this start had none. From sources, or with
 * NODE_DISABLE_COMPILE_CACHE=1 (Node's switch, honoured here too), the same module as ES.
 */
async function mcp(): Promise<void> {
  const file = typeof __QMD_MCP_SCRIPT__ === 'string' ? new URL(__QMD_MCP_SCRIPT__, import.meta.url) : undefined;
  if (file !== undefined && !process.env.NODE_DISABLE_COMPILE_CACHE) {
    const script = loadCachedScript<typeof import('../serve/mcp.js')>(
      fileURLToPath(file),
      compileCacheDir(process.env),
      (specifier) => import(specifier),
    );
    // On 'exit', not 'beforeExit': `qmd mcp` leaves by process.exit() once only stdio holds it
    // (src/lifecycle/exit-policy.ts), and then no 'beforeExit' comes. The save is synchronous.
    if (!script.cached) process.once('exit', () => script.save());
    return script.exports.runMcp(fastPathFlags(['mcp']));
  }
  // Fetched together: the stdio root is mcp.ts's next import, one more trip to the disk.
  const [{ runMcp }] = await Promise.all([import('../serve/mcp.js'), import('../serve/stdio.js')]);
  return runMcp(fastPathFlags(['mcp']));
}

/**
 * `qmd mcp --shared`: the relay every client starts when it shares one server. It loads the
 * lifecycle and the relay and nothing of the server (src/relay/ may not import it: lint), so its
 * ES chunks are small and a code-cached script bought nothing (docs/design.md §5).
 */
async function relay(): Promise<void> {
  const [{ runMcp }] = await Promise.all([import('../serve/mcp.js'), import('../serve/relay.js')]);
  return runMcp(fastPathFlags(['mcp', '--shared']));
}
