import { runAction } from '../cli/action.js';
import { MCP_DEFAULTS, mcpCommand } from '../cli/commands/mcp.js';

/**
 * The entry of `dist/qmd-mcp-<hash>.cjs`, the one CommonJS script the bundle ships: everything
 * `qmd mcp` over stdio runs, in one file that `loadCachedScript` (code-cache.ts) can run with a
 * V8 code cache. `fast-path.ts` runs it for `qmd mcp`; it runs what commander would.
 */
export function runMcp(): Promise<void> {
  return runAction({}, (ctx) => mcpCommand(ctx, MCP_DEFAULTS));
}
