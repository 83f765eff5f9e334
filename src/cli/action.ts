import { type CliContext, createContext } from './context.js';
import { reportError } from './errors.js';

/** The root's options, as every command receives them. */
export interface GlobalOptions {
  index?: string;
  debug?: boolean;
  embedModel?: string;
}

/**
 * Runs one command's action the way every command runs: a context from the root's options,
 * and an error reported on stderr with its exit code rather than thrown.
 */
export async function runAction(options: GlobalOptions, action: (ctx: CliContext) => Promise<unknown>): Promise<void> {
  // The flag travels as QMD_EMBED_MODEL, so `resolveEmbedModel(ctx.env)` (src/cli/embed-model.ts)
  // is the one place every command and both MCP transports pick the model: flag, env, default.
  const env = options.embedModel === undefined ? process.env : { ...process.env, QMD_EMBED_MODEL: options.embedModel };
  const ctx = createContext(options, env);
  try {
    await action(ctx);
  } catch (error) {
    process.exitCode = reportError(error, ctx.log, ctx.debug);
  }
}
