import { resolve } from 'node:path';
import { runAction } from '../cli/action.js';
import { withWatchOff } from '../cli/config.js';
import type { CliContext } from '../cli/context.js';
import { QmdError } from '../errors.js';
import type { McpFlags } from './mcp-flags.js';
import { MCP_DEFAULTS } from './mcp-flags.js';
import { tokenPath } from './token-path.js';

export { MCP_DEFAULTS, type McpFlags } from './mcp-flags.js';

/**
 * `qmd mcp` from a fast path (src/cli/fast-path.ts), as commander would run it: a context from
 * no root options, `flags`, and an error reported on stderr. In the bundle this module is also
 * `dist/chunks/qmd-mcp-<hash>.cjs`, the one CommonJS script, which the fast path runs with a V8
 * code cache (src/cli/code-cache.ts).
 */
export function runMcp(flags: McpFlags = MCP_DEFAULTS): Promise<void> {
  return runAction({}, (ctx) => mcpCommand(ctx, flags));
}

/**
 * `qmd mcp [--http [--port N] [--host H] [--daemon]] [--shared]`: the root its flags choose,
 * each imported on first use. With `--daemon` this process only starts the detached server and
 * reports it; the detached child runs the same command line with `QMD_DAEMON_CHILD=1` and serves.
 */
export async function mcpCommand(given: CliContext, flags: McpFlags): Promise<void> {
  // Every root reads watching from the configuration (serve-mcp.ts, openServing): the flag is folded in here once.
  const ctx = flags.watch === false ? { ...given, config: withWatchOff(given.config) } : given;
  if (flags.token !== undefined) {
    throw new QmdError(
      'BAD_ARGUMENT',
      `--token is refused: every local user can read a command line (ps); put the token in a file only you can read and pass --token-file FILE, or set QMD_HTTP_TOKEN (by default the token is in ${tokenPath(ctx.indexPath)})`,
    );
  }
  if (flags.daemon && !flags.http) throw new QmdError('BAD_ARGUMENT', '--daemon needs --http (stdio needs its client)');
  if (!flags.http && (flags.tokenFile !== undefined || flags.auth === false)) {
    throw new QmdError(
      'BAD_ARGUMENT',
      '--token-file and --no-auth are for --http (stdio and --shared are yours alone)',
    );
  }
  if (flags.tokenFile !== undefined && flags.auth === false) {
    throw new QmdError('BAD_ARGUMENT', '--token-file and --no-auth contradict each other: give one');
  }
  if (flags.sharedServer) {
    const { runSharedServer } = await import('./shared-start.js');
    await runSharedServer(ctx);
    return;
  }
  if (!flags.http && (flags.shared === true || ctx.config.shared.requested)) {
    const { serveRelay } = await import('./relay.js');
    await serveRelay(ctx);
    return;
  }
  if (!flags.http) {
    const { serveStdio } = await import('./stdio.js');
    await serveStdio(ctx);
    return;
  }
  if (flags.daemon && !ctx.config.daemonChild) {
    // Here, before the daemon's log is made beside the index: its folder would then exist, and
    // a mistyped path would be served as "no index yet" (serve-mcp.ts, openServing).
    const { mistypedIndex } = await import('../store/paths.js');
    const mistyped = mistypedIndex(ctx.indexPath, ctx.env);
    if (mistyped !== undefined) throw mistyped;
    const { startDaemon } = await import('./daemon/start.js');
    await startDaemon(ctx);
    return;
  }
  const [{ claimHooks }, { pidfilePath }, { daemonControlPath, hostFacts }, { serveHttp }] = await Promise.all([
    import('./daemon/child.js'),
    import('./daemon/pidfile.js'),
    import('../relay/paths.js'),
    import('./http.js'),
  ]);
  const control = daemonControlPath(ctx.indexPath, hostFacts(ctx.env));
  // One HTTP server per index, daemon or not (the daemon's parent asked before starting it).
  if (!ctx.config.daemonChild) {
    const { refuseIfServed } = await import('./http-claim.js');
    await refuseIfServed(control);
  }
  await serveHttp(ctx, {
    host: flags.host,
    port: flags.port,
    auth: httpAuth(ctx, flags),
    claim: claimHooks(pidfilePath(ctx.indexPath), control, ctx.indexPath, flags.host, ctx.config.daemonChild, ctx.log),
  });
}

/** Where the HTTP token comes from: `--no-auth`, `--token-file`, `QMD_HTTP_TOKEN`, the file beside the index (a flag beats its variable). */
function httpAuth(ctx: CliContext, flags: McpFlags): { file?: string } | { variable: string } | 'none' {
  if (flags.auth === false) return 'none';
  if (flags.tokenFile !== undefined) return { file: resolve(flags.tokenFile) };
  const variable = ctx.config.http.token;
  return variable === undefined ? {} : { variable };
}
