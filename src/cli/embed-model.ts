import { QmdError } from '../errors.js';
import { DEFAULT_EMBED_MODEL } from '../llm/index.js';
import type { StoreOptions } from '../store/types.js';
import type { CliContext } from './context.js';

/** Where `--embed-model` travels: `program.ts` folds the flag into the command's env under this name. */
export const EMBED_MODEL_ENV = 'QMD_EMBED_MODEL';

/**
 * The embedding model (docs/design.md §6): `--embed-model M`, else `QMD_EMBED_MODEL`, else
 * `DEFAULT_EMBED_MODEL`. The flag arrives as the env var (see `program.ts`), so every
 * command and both MCP transports resolve it in one place.
 */
export function resolveEmbedModel(env: NodeJS.ProcessEnv): string {
  return env[EMBED_MODEL_ENV]?.trim() || DEFAULT_EMBED_MODEL;
}

type EmbedStoreOptions = Pick<StoreOptions, 'embedModel' | 'embedThreads' | 'trace' | 'createEmbedder'>;

/**
 * What a command passes to `openStore` for embeddings; stdio and HTTP `qmd mcp` call this
 * too. Nothing here loads a model: the store does, on the first call that needs a vector.
 * - `QMD_EMBED_THREADS=N`: llama.cpp threads (default one per core; 1 is far faster on
 *   oversubscribed cores, see `StoreOptions.embedThreads`).
 * - `QMD_DEBUG_EMBED=1`: a `QMD debug:` line on stderr just before each embedding call
 *   enters llama.cpp, and when the store closes (how many calls were running). Tests use it
 *   to send a shutdown trigger while a call runs natively.
 *
 * `ctx.createEmbedder` is passed on as it is: code sets it (a benchmark's contender), never
 * the environment. There is no variable that changes how llama.cpp is disposed.
 */
export function embedStoreOptions(ctx: Pick<CliContext, 'env' | 'log' | 'createEmbedder'>): EmbedStoreOptions {
  const { env, log } = ctx;
  const options: EmbedStoreOptions = { embedModel: resolveEmbedModel(env) };
  if (ctx.createEmbedder !== undefined) options.createEmbedder = ctx.createEmbedder;
  const threads = env.QMD_EMBED_THREADS?.trim();
  if (threads) {
    if (!/^\d+$/.test(threads) || Number(threads) < 1) {
      throw new QmdError('BAD_ARGUMENT', `QMD_EMBED_THREADS must be a whole number ≥ 1, got "${threads}"`);
    }
    options.embedThreads = Number(threads);
  }
  if (env.QMD_DEBUG_EMBED === '1') options.trace = (line) => log.line(`QMD debug: ${line}`);
  return options;
}
