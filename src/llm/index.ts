/**
 * The LLM wrapper the store owns. Importing this does not load node-llama-cpp (~1 s of
 * import and binary self-test): `createEmbedder` loads it on the first call that needs it,
 * so BM25-only commands and `qmd mcp` start-up never pay for it. Imports nothing of ours.
 */
export {
  createEmbedder,
  type EmbedBatchOptions,
  type Embedder,
  type EmbedderOptions,
  type EmbedOptions,
  type LlamaModule,
} from './embedder.js';
export { isLlmError, LlmError, type LlmErrorCode } from './errors.js';
export { cachedModelPath, howToGetModel } from './model-cache.js';
export {
  absoluteModelSpec,
  chooseModel,
  EMBED_MODEL_KIND,
  isRemoteSpec,
  type ModelChoice,
  type ModelKind,
  type ModelSource,
} from './model-choice.js';
export {
  DEFAULT_EMBED_MODEL,
  type DownloadProgress,
  defaultModelsDir,
  hfEndpoint,
  modelFingerprint,
} from './model-file.js';
export { type PulledModel, pullModel } from './pull.js';
