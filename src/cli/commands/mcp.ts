import type { CliContext } from '../context.js';

/**
 * `qmd mcp stop [--shared]`: asks the index's daemon (or, with `--shared`, its shared server)
 * over its control socket to stop, and waits for it to exit. Nothing is signalled. (`qmd mcp`
 * itself is `src/serve/mcp.ts`.)
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
