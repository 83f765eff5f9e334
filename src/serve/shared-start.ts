import type { CliContext } from '../cli/context.js';
import { startFailure, writeStartFailure } from '../relay/health.js';
import { hostFacts, sharedPaths } from '../relay/paths.js';

/**
 * `qmd mcp --shared-server`, as a relay's launcher starts it. If its modules will not load (a
 * broken install, say), it leaves the reason beside its socket before it exits, for the relays
 * waiting on it (`src/relay/health.ts`): they fail their clients with it instead of waiting
 * out their bound. The server does the same when its store
 * will not open. Nothing else a server fails on (losing the race for the record to another
 * server, say) is left there: the relays keep waiting for the server that won.
 */
export async function runSharedServer(ctx: CliContext): Promise<void> {
  let server: typeof import('./shared-server.js');
  try {
    server = await import('./shared-server.js');
  } catch (error) {
    writeStartFailure(sharedPaths(ctx.indexPath, hostFacts(ctx.env)), startFailure(error));
    throw error;
  }
  await server.serveSharedServer(ctx);
}
