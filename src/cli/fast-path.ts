import { runAction } from './action.js';

/**
 * Command lines that skip commander: `qmd mcp`, exactly, is what MCP clients spawn, once per
 * session, and then wait on. Loading and running commander to learn that it means "stdio, no
 * options" cost about 10 ms of CPU before `initialize` could be answered (Node 20, 25
 * interleaved rounds, ~5% of the start-up). Each entry must run what commander would: the
 * same action, with the flags commander's defaults give (test/cli/program.test.ts parses each
 * one with commander and compares). Anything else on the command line goes through commander.
 *
 * Keyed by the arguments after `qmd`, joined by spaces.
 */
const FAST_PATHS: ReadonlyMap<string, () => Promise<void>> = new Map([
  [
    'mcp',
    () =>
      runAction({}, async (ctx) => {
        // Fetched together: mcpCommand imports the stdio server next, one more trip to the disk.
        const [{ MCP_DEFAULTS, mcpCommand }] = await Promise.all([
          import('./commands/mcp.js'),
          import('./mcp/stdio.js'),
        ]);
        await mcpCommand(ctx, MCP_DEFAULTS);
      }),
  ],
]);

/** The command line's fast path, if it has one. */
export function fastPath(argv: readonly string[]): (() => Promise<void>) | undefined {
  return FAST_PATHS.get(argv.slice(2).join(' '));
}

/** The command lines that have one, as argument lists (for the test that holds them to commander). */
export function fastPathArgs(): string[][] {
  return [...FAST_PATHS.keys()].map((key) => key.split(' '));
}
