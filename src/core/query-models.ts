import { QmdError } from '../errors.js';
import type { Failpoints } from '../failpoints.js';
import {
  createExpander,
  createReranker,
  type Expander,
  type ExpanderOptions,
  type Expansion,
  isLlmError,
  type LlmRuntime,
  type Reranker,
  type RerankerOptions,
  type RuntimeReport,
} from '../llm/index.js';
import { untilAborted } from '../settle.js';

export const RERANK_FAILPOINT = 'llm.rerank';
export const EXPAND_FAILPOINT = 'llm.expand';

export interface QueryModelsOptions {
  /** The store's runtime, shared with its embedding model (one teardown for all: `runtime.ts`). */
  runtime: LlmRuntime;
  /** The reranker: a `.gguf` path or an `hf:` URI; undefined: none (results are the fusion's). */
  rerankSpec: string | undefined;
  /** The query expansion model; undefined: plain queries are not expanded. */
  expandSpec: string | undefined;
  failpoints: Failpoints;
  trace: ((line: string) => void) | undefined;
  /** Download an `hf:` model that is not cached (a writable store; never inside a search). */
  download: boolean;
  createReranker: ((options: RerankerOptions) => Reranker) | undefined;
  createExpander: ((options: ExpanderOptions) => Expander) | undefined;
}

/**
 * The store's reranker and query expander, made on first need (nothing is imported before),
 * on the store's runtime. Errors come out as QmdErrors (`MODEL_UNAVAILABLE`, `CLOSED`,
 * `ABORTED`); `query` turns an unavailable model into a note and answers without it.
 */
export class QueryModels {
  private reranker: Reranker | undefined;
  private expander: Expander | undefined;

  constructor(private readonly options: QueryModelsOptions) {}

  get rerankSpec(): string | undefined {
    return this.options.rerankSpec;
  }

  get expandSpec(): string | undefined {
    return this.options.expandSpec;
  }

  /**
   * The reranker's score of each document for `query`. When `signal` fires this rejects at
   * once; a document being evaluated runs on, counted, and the teardown waits for it.
   */
  rank(query: string, documents: readonly string[], signal?: AbortSignal): Promise<number[]> {
    return this.call((models) => models.ranker().rank(query, documents, signal ? { signal } : {}), signal);
  }

  /** The typed lines the expansion model writes for `query` (stopped at the next token when `signal` fires). */
  expand(query: string, signal?: AbortSignal): Promise<Expansion[]> {
    return this.call((models) => models.expanderFor().expand(query, signal ? { signal } : {}), signal);
  }

  /** The backend and every model of the runtime, loading nothing. */
  report(): Promise<RuntimeReport> {
    return this.options.runtime.report();
  }

  /**
   * The lines `QMD_DEBUG_EMBED` prints as the store closes, before the runtime's teardown
   * waits: how many ranking and generation calls were running natively then.
   */
  traceClosing(): void {
    const { trace } = this.options;
    if (this.reranker !== undefined)
      trace?.(`closing: ${this.reranker.running} ranking call(s) running natively, ${this.reranker.queued} queued`);
    if (this.expander !== undefined)
      trace?.(`closing: ${this.expander.running} generation call(s) running natively, ${this.expander.queued} queued`);
  }

  private async call<T>(work: (models: QueryModels) => Promise<T>, signal: AbortSignal | undefined): Promise<T> {
    try {
      const result = work(this);
      if (signal === undefined) return await result;
      result.catch(() => {}); // if we stop waiting, its outcome is nobody's business
      return await untilAborted(result, signal, cancelled);
    } catch (error) {
      throw fromLlmError(error);
    }
  }

  private ranker(): Reranker {
    if (this.options.runtime.disposed) throw new QmdError('CLOSED', 'The index is closed');
    const spec = this.options.rerankSpec;
    if (spec === undefined) throw new QmdError('MODEL_UNAVAILABLE', 'no reranking model is configured');
    const { failpoints, trace } = this.options;
    this.reranker ??= (this.options.createReranker ?? createReranker)({
      model: spec,
      runtime: this.options.runtime,
      download: this.options.download,
      beforeRank: async (signal) => {
        const pending = failpoints.hit(RERANK_FAILPOINT, signal);
        if (pending !== undefined) await pending;
        trace?.('ranking call entering llama.cpp');
      },
    });
    return this.reranker;
  }

  private expanderFor(): Expander {
    if (this.options.runtime.disposed) throw new QmdError('CLOSED', 'The index is closed');
    const spec = this.options.expandSpec;
    if (spec === undefined) throw new QmdError('MODEL_UNAVAILABLE', 'no query expansion model is configured');
    const { failpoints, trace } = this.options;
    this.expander ??= (this.options.createExpander ?? createExpander)({
      model: spec,
      runtime: this.options.runtime,
      download: this.options.download,
      beforeExpand: async (signal) => {
        const pending = failpoints.hit(EXPAND_FAILPOINT, signal);
        if (pending !== undefined) await pending;
        trace?.('generation call entering llama.cpp');
      },
    });
    return this.expander;
  }
}

function fromLlmError(error: unknown): unknown {
  if (!isLlmError(error)) return error;
  const message = error.message.replace(/\s+/g, ' ').trim();
  switch (error.code) {
    case 'MODEL_UNAVAILABLE':
      return new QmdError('MODEL_UNAVAILABLE', message, { cause: error });
    case 'DISPOSED':
      return new QmdError('CLOSED', 'The index is closed', { cause: error });
    case 'ABORTED':
      return cancelled();
    case 'EMPTY_INPUT':
      return new QmdError('BAD_ARGUMENT', message, { cause: error });
  }
}

const cancelled = (): QmdError => new QmdError('ABORTED', 'The query was cancelled');
