import type { GlobalOptions } from './config.js';
import { type CliContext, createContext } from './context.js';
import { reportError } from './errors.js';
import { withPeerHint } from './peer-hint.js';

/**
 * Runs one command's action the way every command runs: a context from the root's options,
 * and an error reported on stderr with its exit code rather than thrown.
 */
export async function runAction(options: GlobalOptions, action: (ctx: CliContext) => Promise<unknown>): Promise<void> {
  const ctx = createContext(options);
  try {
    await action(ctx);
  } catch (error) {
    process.exitCode = reportError(withPeerHint(error, ctx.env), ctx.log, ctx.debug);
  }
}
