import { QmdError } from '../../errors.js';
import type { CliContext } from '../context.js';

export interface McpFlags {
  http?: boolean;
  port: number;
  host: string;
  daemon?: boolean;
  shared?: boolean;
  sharedServer?: boolean;
  /** `--token T`: the HTTP bearer token, instead of the token file beside the index. */
  token?: string;
  /** `--no-auth` sets it false: HTTP without a token, for any local user. */
  auth?: boolean;
}

/** `qmd mcp` with no options: stdio (the HTTP defaults are commander's defaults for --port, --host and --no-auth). */
export const MCP_DEFAULTS: McpFlags = { port: 8181, host: '127.0.0.1', auth: true };

/**
 * `qmd mcp [--http [--port N] [--host H] [--daemon]]`. With `--daemon` this process only
 * starts the detached server and reports it; the detached child runs the same command line
 * with `QMD_DAEMON_CHILD=1` and serves.
 */
export async function mcpCommand(ctx: CliContext, flags: McpFlags): Promise<void> {
  if (flags.daemon && !flags.http) throw new QmdError('BAD_ARGUMENT', '--daemon needs --http (stdio needs its client)');
  if (!flags.http && (flags.token !== undefined || flags.auth === false)) {
    throw new QmdError('BAD_ARGUMENT', '--token and --no-auth are for --http (stdio and --shared are yours alone)');
  }
  if (flags.token !== undefined && flags.auth === false) {
    throw new QmdError('BAD_ARGUMENT', '--token and --no-auth contradict each other: give one');
  }
  if (flags.sharedServer) {
    const { runSharedServer } = await import('../../serve/shared-start.js');
    await runSharedServer(ctx);
    return;
  }
  if (!flags.http && (flags.shared === true || ctx.config.shared.requested)) {
    const { serveRelay } = await import('../../serve/relay.js');
    await serveRelay(ctx);
    return;
  }
  if (!flags.http) {
    const { serveStdio } = await import('../../serve/stdio.js');
    await serveStdio(ctx);
    return;
  }
  const { daemonHooks } = await import('../../serve/daemon/child.js');
  if (flags.daemon && !ctx.config.daemonChild) {
    const { startDaemon } = await import('../../serve/daemon/start.js');
    await startDaemon(ctx);
    return;
  }
  const { pidfilePath } = await import('../../serve/daemon/pidfile.js');
  const { daemonControlPath } = await import('../../relay/paths.js');
  const { serveHttp } = await import('../../serve/http.js');
  const control = daemonControlPath(ctx.indexPath, ctx.env);
  await serveHttp(ctx, {
    host: flags.host,
    port: flags.port,
    auth: flags.auth === false ? 'none' : flags.token !== undefined ? { token: flags.token } : {},
    ...(flags.daemon && { daemon: daemonHooks(pidfilePath(ctx.indexPath), control, ctx.indexPath, flags.host) }),
  });
}

/**
 * `qmd mcp stop [--shared]`: asks the index's daemon (or, with `--shared`, its shared server)
 * over its control socket to stop, and waits for it to exit. Nothing is signalled.
 */
export async function mcpStop(ctx: CliContext, flags: { shared?: boolean } = {}): Promise<void> {
  const { stopServer } = await import('../../serve/daemon/stop.js');
  const { daemonControlPath, sharedPaths } = await import('../../relay/paths.js');
  const { pidfilePath } = await import('../../serve/daemon/pidfile.js');
  if (flags.shared) {
    const paths = sharedPaths(ctx.indexPath, ctx.env);
    await stopServer(ctx, { control: paths.socket, record: paths.record, what: 'shared server' });
    return;
  }
  const control = daemonControlPath(ctx.indexPath, ctx.env);
  await stopServer(ctx, { control, record: pidfilePath(ctx.indexPath), what: 'daemon' });
}
