import type { StoreOptions } from '../core/types.js';
import { MODEL_OFF } from './config.js';
import type { CliContext } from './context.js';

type ModelStoreOptions = Pick<StoreOptions, 'gpu' | 'rerankModel' | 'expandModel'>;

/**
 * What a command passes to `openStore` for the llama.cpp backend and a `query`'s two other
 * models, from `ctx.config.models` (config.ts: `--gpu`/`QMD_GPU`, `--rerank-model`/
 * `QMD_RERANK_MODEL`, `--expand-model`/`QMD_EXPAND_MODEL`). `query: false` (embed, vsearch)
 * gives the backend only. Nothing here loads anything: each model loads on first use.
 */
export function modelStoreOptions(ctx: Pick<CliContext, 'config'>, options: { query: boolean }): ModelStoreOptions {
  const { models } = ctx.config;
  if (!options.query) return { gpu: models.gpu };
  return {
    gpu: models.gpu,
    ...(models.rerankModel !== undefined && { rerankModel: models.rerankModel }),
    ...(models.expandModel !== undefined && { expandModel: models.expandModel }),
  };
}

/**
 * The flags that give a child process (the shared server a relay starts) the same backend and
 * models as this one: only what a flag or variable set (the defaults are the child's too).
 */
export function modelFlags(ctx: Pick<CliContext, 'config'>): string[] {
  const { models } = ctx.config;
  return [
    ...(models.given.gpu ? ['--gpu', models.gpu] : []),
    ...(models.given.rerankModel ? ['--rerank-model', models.rerankModel ?? MODEL_OFF] : []),
    ...(models.given.expandModel ? ['--expand-model', models.expandModel ?? MODEL_OFF] : []),
  ];
}
