/**
 * The peer's default reranking and query expansion models (qmd 2.8.3, `@tobilu/qmd`), as
 * `hf:` URIs: a user of the peer already has the files, under the names node-llama-cpp gives
 * them in the shared models directory; and how messages name each kind (`ModelKind`: the flag,
 * the variable and the command that downloads it). Plain constants, so the command line reads
 * them without loading any of src/llm/.
 */
import type { ModelKind } from './model-choice.js';

/**
 * Qwen3-Reranker-0.6B, Q8_0, as published by ggml-org (639 MB, Apache-2.0); cached as
 * `hf_ggml-org_qwen3-reranker-0.6b-q8_0.gguf`.
 */
export const DEFAULT_RERANK_MODEL = 'hf:ggml-org/Qwen3-Reranker-0.6B-Q8_0-GGUF/qwen3-reranker-0.6b-q8_0.gguf';

/**
 * qmd-query-expansion-1.7B (a Qwen3-1.7B fine-tune by the peer's author, Q4_K_M, ~1.1 GB);
 * cached as `hf_tobil_qmd-query-expansion-1.7B-q4_k_m.gguf`.
 */
export const DEFAULT_EXPAND_MODEL = 'hf:tobil/qmd-query-expansion-1.7B-gguf/qmd-query-expansion-1.7B-q4_k_m.gguf';

export const RERANK_MODEL_KIND: ModelKind = {
  noun: 'reranking model',
  flag: '--rerank-model',
  env: 'QMD_RERANK_MODEL',
  downloadCommand: 'qmd pull',
  meanwhile: 'Search works meanwhile, without reranking (BM25 and vectors, fused)',
};

export const EXPAND_MODEL_KIND: ModelKind = {
  noun: 'query expansion model',
  flag: '--expand-model',
  env: 'QMD_EXPAND_MODEL',
  downloadCommand: 'qmd pull',
  meanwhile: 'Search works meanwhile, without query expansion (the query as typed, BM25 and vectors)',
};
