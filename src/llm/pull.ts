import { existsSync } from 'node:fs';
import type { Log } from '../log.js';
import { cachedModelPath } from './model-cache.js';
import { EMBED_MODEL_KIND, isRemoteSpec, type ModelKind } from './model-choice.js';
import { type DownloadProgress, hfEndpoint, type ModelFileResolver, resolveModelPath } from './model-file.js';

export interface PulledModel {
  spec: string;
  file: string;
  /** False when it was already on disk (cached, or a local `.gguf` path). */
  downloaded: boolean;
}

/**
 * `qmd pull`: the file of a model spec, downloading an `hf:` model that is not in `modelsDir`
 * yet (`resolveModelPath`: a reachability check first, so no network is one MODEL_UNAVAILABLE
 * line at once, with the way to get the file). A model whose cache name is known and present
 * is answered without loading node-llama-cpp.
 */
export async function pullModel(
  spec: string,
  options: {
    modelsDir: string;
    log: Log;
    signal: AbortSignal;
    kind?: ModelKind;
    onDownloadProgress?: (progress: DownloadProgress) => void;
    resolver?: () => Promise<ModelFileResolver>;
    env?: NodeJS.ProcessEnv;
  },
): Promise<PulledModel> {
  const cached = isRemoteSpec(spec)
    ? cachedModelPath(spec, options.modelsDir, hfEndpoint(options.env ?? process.env))
    : undefined;
  if (cached !== undefined && existsSync(cached)) return { spec, file: cached, downloaded: false };
  const resolver =
    options.resolver ?? (async () => (await import('node-llama-cpp')).resolveModelFile as ModelFileResolver);
  const common = {
    modelsDir: options.modelsDir,
    resolver,
    log: options.log,
    signal: options.signal,
    kind: options.kind ?? EMBED_MODEL_KIND,
    ...(options.onDownloadProgress !== undefined && { onDownloadProgress: options.onDownloadProgress }),
  };
  if (!isRemoteSpec(spec))
    return { spec, file: await resolveModelPath(spec, { ...common, download: false }), downloaded: false };
  return { spec, file: await resolveModelPath(spec, { ...common, download: true }), downloaded: true };
}
