import { QmdError } from '../../errors.js';
import type { CliContext } from '../context.js';

export interface McpFlags {
  http?: boolean;
  port: number;
  host: string;
  daemon?: boolean;
}

/** `qmd mcp` with no options: stdio (the HTTP defaults are commander's defaults for --port and --host). */
export const MCP_DEFAULTS: McpFlags = { port: 8181, host: '127.0.0.1' };

/**
 * `qmd mcp [--http [--port N] [--host H] [--daemon]]`. With `--daemon` this process only
 * starts the detached server and reports it; the detached child runs the same command line
 * with `QMD_DAEMON_CHILD=1` and serves.
 */
export async function mcpCommand(ctx: CliContext, flags: McpFlags): Promise<void> {
  if (flags.daemon && !flags.http) throw new QmdError('BAD_ARGUMENT', '--daemon needs --http (stdio needs its client)');
  if (!flags.http) {
    const { serveStdio } = await import('../mcp/stdio.js');
    await serveStdio(ctx);
    return;
  }
  const { DAEMON_CHILD_ENV, daemonHooks } = await import('../daemon/child.js');
  if (flags.daemon && ctx.env[DAEMON_CHILD_ENV] !== '1') {
    const { startDaemon } = await import('../daemon/start.js');
    await startDaemon(ctx);
    return;
  }
  const { pidfilePath } = await import('../daemon/pidfile.js');
  const { serveHttp } = await import('../mcp/http.js');
  await serveHttp(ctx, {
    host: flags.host,
    port: flags.port,
    ...(flags.daemon && { daemon: daemonHooks(pidfilePath(ctx.indexPath), ctx.indexPath, flags.host) }),
  });
}

/** `qmd mcp stop`: stops the daemon recorded in the pidfile, after verifying it is that process. */
export async function mcpStop(ctx: CliContext): Promise<void> {
  const { stopDaemon } = await import('../daemon/stop.js');
  await stopDaemon(ctx);
}
