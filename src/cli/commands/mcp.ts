import { QmdError } from '../../errors.js';
import type { CliContext } from '../context.js';

export interface McpFlags {
  http?: boolean;
  port: number;
  host: string;
  daemon?: boolean;
}

/** `qmd mcp [--http [--port N] [--host H] [--daemon]]`. */
export async function mcpCommand(ctx: CliContext, flags: McpFlags): Promise<void> {
  if (flags.http || flags.daemon) {
    throw new QmdError('BAD_ARGUMENT', 'qmd mcp --http is not available in this build yet');
  }
  const { serveStdio } = await import('../mcp/stdio.js');
  await serveStdio(ctx);
}

/** `qmd mcp stop`: stops the daemon recorded in the pidfile. */
export async function mcpStop(_ctx: CliContext): Promise<void> {
  throw new QmdError('BAD_ARGUMENT', 'qmd mcp stop: no daemon support in this build yet');
}
