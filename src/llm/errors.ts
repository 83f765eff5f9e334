/**
 * The errors the models (embedder, reranker, query expander) reject with. `src/llm/` imports
 * nothing of ours, so this is its own class; the store maps `code` onto its `QmdError` codes (`MODEL_UNAVAILABLE` →
 * `MODEL_UNAVAILABLE`, `DISPOSED` → `CLOSED`, `ABORTED` → `ABORTED`).
 */
export type LlmErrorCode =
  /** No model to run: a missing file, an `hf:` model not cached and no network, a file
   * llama.cpp cannot load, or no usable llama.cpp binary. Callers keep BM25 working. */
  | 'MODEL_UNAVAILABLE'
  /** `dispose()` has begun: the call was queued, not started, or came after it. */
  | 'DISPOSED'
  /** The caller's abort signal fired before the native call started. */
  | 'ABORTED'
  /** An empty text has no tokens, so no embedding. */
  | 'EMPTY_INPUT';

export class LlmError extends Error {
  constructor(
    readonly code: LlmErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'LlmError';
  }
}

export function isLlmError(error: unknown, code?: LlmErrorCode): error is LlmError {
  return error instanceof LlmError && (code === undefined || error.code === code);
}

export function disposedError(): LlmError {
  return new LlmError('DISPOSED', 'the models were disposed (the store is closing): the call was not run');
}

export function abortedError(signal: AbortSignal): LlmError {
  return new LlmError('ABORTED', 'the call was cancelled', { cause: signal.reason });
}
