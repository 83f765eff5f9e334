/**
 * The LLM wrapper the store owns. Importing this does not load node-llama-cpp (~1 s of
 * import and binary self-test): each model loads it on the first call that needs it, so
 * BM25-only commands and `qmd mcp` start-up never pay for it. Imports nothing of ours but
 * the neutral log, settle and env.
 */
export {
  createEmbedder,
  type EmbedBatchOptions,
  type Embedder,
  type EmbedderOptions,
  type EmbedOptions,
} from './embedder.js';
export { isLlmError, LlmError, type LlmErrorCode } from './errors.js';
export {
  createExpander,
  DEFAULT_EXPAND_MODEL,
  type Expander,
  type ExpanderOptions,
  type Expansion,
  type ExpansionType,
  MAX_EXPANSION_LINES,
} from './expander.js';
export { GPU_CHOICES, GPU_OFF_HINT, type GpuBackend, type GpuChoice, parseGpuChoice } from './gpu.js';
export type { Backend } from './llama.js';
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
export { EXPAND_MODEL_KIND, RERANK_MODEL_KIND } from './model-defaults.js';
export {
  DEFAULT_EMBED_MODEL,
  type DownloadProgress,
  defaultModelsDir,
  hfEndpoint,
  modelFingerprint,
} from './model-file.js';
export { type PulledModel, pullModel } from './pull.js';
export { createReranker, DEFAULT_RERANK_MODEL, type Reranker, type RerankerOptions } from './reranker.js';
export {
  defaultThreads,
  type LlamaModule,
  LlmRuntime,
  type ModelReport,
  type ModelRole,
  type RuntimeOptions,
  type RuntimeReport,
} from './runtime.js';
