import { existsSync } from 'node:fs';
import type { StatusReport } from '../core/types.js';
import { cachedModelPath, DEFAULT_EMBED_MODEL, defaultModelsDir, hfEndpoint, isRemoteSpec } from '../llm/index.js';
import type { EmbedConfig } from './config.js';

/**
 * `qmd status`'s line about the embedding model: the one the index remembers (what every
 * search uses unless told otherwise), its fingerprint, whether its file is where the index
 * expects it, and a model named by `--embed-model`/`QMD_EMBED_MODEL` that would be used
 * instead. Reads no model file (a fingerprint is 2 MiB of reading); loads nothing.
 */
export function embeddingModelLine(
  embeddings: StatusReport['embeddings'],
  embed: Pick<EmbedConfig, 'model' | 'modelSource'>,
  env: NodeJS.ProcessEnv = process.env,
): string {
  const named = embed.model === undefined ? undefined : `${sourceName(embed)} names ${embed.model}`;
  if (embeddings.model === null) {
    return `Embedding model: none yet; qmd embed uses ${named === undefined ? DEFAULT_EMBED_MODEL : embed.model}`;
  }
  const fingerprint = embeddings.fingerprint === null ? '' : ` (${shortFingerprint(embeddings.fingerprint)})`;
  const where = whereIs(embeddings.model, env);
  const instead = named === undefined || embed.model === embeddings.model ? '' : `; ${named}: searches use it instead`;
  return `Embedding model: ${embeddings.model}${fingerprint}${where}${instead}`;
}

function sourceName(embed: Pick<EmbedConfig, 'modelSource'>): string {
  return embed.modelSource === 'env' ? 'QMD_EMBED_MODEL' : '--embed-model';
}

/** `sha256:0123456789ab…`: enough to tell two models apart at a glance. */
function shortFingerprint(fingerprint: string): string {
  return fingerprint.length > 19 ? `${fingerprint.slice(0, 19)}…` : fingerprint;
}

function whereIs(spec: string, env: NodeJS.ProcessEnv): string {
  if (!isRemoteSpec(spec)) {
    return existsSync(spec)
      ? ''
      : ': the file is gone (moved or deleted?): name its new place with --embed-model PATH or QMD_EMBED_MODEL=PATH';
  }
  const cached = cachedModelPath(spec, defaultModelsDir(env), hfEndpoint(env));
  if (cached === undefined) return '';
  return existsSync(cached)
    ? `, cached at ${cached}`
    : `: not downloaded (${cached} is missing): run qmd embed when online`;
}
