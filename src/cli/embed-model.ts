import { DEFAULT_EMBED_MODEL } from '../llm/index.js';
import type { StoreOptions } from '../store/types.js';
import type { CliContext } from './context.js';

type EmbedStoreOptions = Pick<StoreOptions, 'embedModel' | 'embedThreads' | 'trace'>;

/**
 * What a command passes to `openStore` for embeddings, from `ctx.config.embed` (config.ts:
 * `--embed-model`, else `QMD_EMBED_MODEL`, else `DEFAULT_EMBED_MODEL`; `QMD_EMBED_THREADS`;
 * `QMD_DEBUG_EMBED`); every MCP transport calls this too. Nothing here loads a model: the
 * store does, on the first call that needs a vector.
 * There is no variable that changes how llama.cpp is disposed.
 */
export function embedStoreOptions(ctx: Pick<CliContext, 'config' | 'log'>): EmbedStoreOptions {
  const { embed } = ctx.config;
  const options: EmbedStoreOptions = { embedModel: embed.model ?? DEFAULT_EMBED_MODEL };
  // One thread is far faster than one per core on oversubscribed cores (`StoreOptions.embedThreads`).
  if (embed.threads !== undefined) options.embedThreads = embed.threads;
  // Tests use these lines to send a shutdown trigger while a call runs natively.
  if (embed.debug) options.trace = (line) => ctx.log.line(`QMD debug: ${line}`);
  return options;
}
