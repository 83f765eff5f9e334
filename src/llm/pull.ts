import { existsSync } from 'node:fs';
import type { Log } from '../log.js';
import { ggufProblem } from './gguf-check.js';
import { cachedModelPath } from './model-cache.js';
import { EMBED_MODEL_KIND, isRemoteSpec, type ModelKind } from './model-choice.js';
import { type DownloadProgress, hfEndpoint, type ModelFileResolver, resolveModelPath } from './model-file.js';

export interface PulledModel {
  spec: string;
  file: string;
  /** False when it was already on disk (cached, or a local `.gguf` path). */
  downloaded: boolean;
  /** True when a cached file was replaced: `--refresh`, or it was not a whole model. */
  refreshed: boolean;
}

/**
 * `qmd pull`: the file of a model spec, downloading an `hf:` model that is not in `modelsDir`
 * yet (`resolveModelPath`: a reachability check first, so no network is one MODEL_UNAVAILABLE
 * line at once, with the way to get the file). A model whose cache name is known and present
 * is answered without loading node-llama-cpp, once its header says it is a whole model (a file
 * that is not is deleted and fetched again, with a line saying why). `refresh` downloads it
 * again whatever is cached (qmd 2.x's `pull --refresh`); the cached file stays until the new
 * one has passed every check.
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
    refresh?: boolean;
    /** `QMD_DOWNLOAD_IDLE_MS`, as the CLI read it. */
    idleMs?: number;
  },
): Promise<PulledModel> {
  const cached = isRemoteSpec(spec)
    ? cachedModelPath(spec, options.modelsDir, hfEndpoint(options.env ?? process.env))
    : undefined;
  const present = cached !== undefined && existsSync(cached);
  const whole = present && (await ggufProblem(cached).catch(() => undefined)) === undefined;
  if (whole && !options.refresh) return { spec, file: cached, downloaded: false, refreshed: false };
  const resolver =
    options.resolver ?? (async () => (await import('node-llama-cpp')).resolveModelFile as ModelFileResolver);
  const common = {
    modelsDir: options.modelsDir,
    resolver,
    log: options.log,
    signal: options.signal,
    kind: options.kind ?? EMBED_MODEL_KIND,
    ...(options.env !== undefined && { env: options.env }),
    ...(options.refresh === true && { refresh: true }),
    ...(options.idleMs !== undefined && { idleMs: options.idleMs }),
    ...(options.onDownloadProgress !== undefined && { onDownloadProgress: options.onDownloadProgress }),
  };
  if (!isRemoteSpec(spec)) {
    return {
      spec,
      file: await resolveModelPath(spec, { ...common, download: false }),
      downloaded: false,
      refreshed: false,
    };
  }
  const file = await resolveModelPath(spec, { ...common, download: true });
  return { spec, file, downloaded: true, refreshed: present };
}
