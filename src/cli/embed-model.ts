import type { StoreOptions } from '../core/types.js';
import { DEFAULT_EMBED_MODEL } from '../llm/index.js';
import type { CliContext } from './context.js';

type EmbedStoreOptions = Pick<
  StoreOptions,
  'embedModel' | 'embedModelGivenAs' | 'defaultEmbedModel' | 'embedThreads' | 'trace'
>;

/**
 * What a command passes to `openStore` for embeddings, from `ctx.config.embed` (config.ts:
 * `--embed-model`, else `QMD_EMBED_MODEL`; `QMD_EMBED_THREADS`; `QMD_DEBUG_EMBED`); every MCP
 * transport calls this too. A model named there beats the one the index remembers, which beats
 * `DEFAULT_EMBED_MODEL` (`chooseModel`, chosen by the store when it first needs one).
 * Nothing here loads a model: the store does, on the first call that needs a vector.
 * There is no variable that changes how llama.cpp is disposed.
 */
export function embedStoreOptions(ctx: Pick<CliContext, 'config' | 'log'>): EmbedStoreOptions {
  const { embed } = ctx.config;
  const options: EmbedStoreOptions = { defaultEmbedModel: DEFAULT_EMBED_MODEL };
  if (embed.model !== undefined) {
    options.embedModel = embed.model;
    options.embedModelGivenAs = embed.modelSource === 'env' ? 'QMD_EMBED_MODEL' : '--embed-model';
  }
  // One thread is far faster than one per core on oversubscribed cores (`StoreOptions.embedThreads`).
  if (embed.threads !== undefined) options.embedThreads = embed.threads;
  // Tests use these lines to send a shutdown trigger while a call runs natively.
  if (embed.debug) options.trace = (line) => ctx.log.line(`QMD debug: ${line}`);
  return options;
}
