import { errorMessage, isQmdError } from '../../errors.js';
import { writeStartFailure } from '../../relay/health.js';
import { sharedPaths } from '../../relay/paths.js';
import type { CliContext } from '../context.js';

/**
 * `qmd mcp --shared-server`, as a relay's launcher starts it. If it cannot start (the store will
 * not open: a damaged index; the server's own modules will not load: a build for another Node),
 * it leaves the reason beside its socket before it exits, for the relays waiting on it
 * (`src/relay/health.ts`): they fail their clients with it instead of waiting out their bound.
 * Imported apart from the server, so that a native module that fails to load is caught here.
 */
export async function runSharedServer(ctx: CliContext): Promise<void> {
  try {
    const { serveSharedServer } = await import('./shared-server.js');
    await serveSharedServer(ctx);
  } catch (error) {
    const line = errorMessage(error)
      .replace(/\s*\n\s*/g, ' ')
      .trim();
    writeStartFailure(sharedPaths(ctx.indexPath, ctx.env), {
      pid: process.pid,
      at: Date.now(),
      error: isQmdError(error) ? line : `internal error: ${line}`,
    });
    throw error;
  }
}
