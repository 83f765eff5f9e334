import { type FailpointAction, holdThread } from '../failpoints.js';
import type { Collections } from '../store/collections.js';
import type { DocumentReader } from '../store/documents.js';
import type { StatusReader } from '../store/status.js';
import type { MultiGetOptions, MultiGetResult, StatusReport } from '../store/types.js';
import type { Searcher } from './bm25.js';
import type { SearchHit } from './types.js';
import type { VectorSearcher } from './vector-search.js';

/**
 * The heavy read-only calls of a query (docs/design.md §8.4): each is one synchronous run of
 * SQL (and, for vectors, a scan in JS) that can hold its thread for seconds on a large index.
 * `qmd mcp` runs them in the query worker (`query-worker.ts`), so its lifecycle stays awake;
 * one-shot commands run them inline. Everything in a call crosses a thread by structured clone.
 */
export type ReadCall =
  | { kind: 'lexical'; query: string; options: LexicalOptions }
  | {
      kind: 'nearest';
      vector: Float32Array;
      fingerprint: string;
      depth: number;
      collections?: string | undefined;
      folder?: string | undefined;
    }
  | { kind: 'multiGet'; pattern: string; options: MultiGetOptions }
  | { kind: 'status' };

/** BM25's options that cross a thread: the abort signal stays on the caller's side. */
export interface LexicalOptions {
  limit?: number | undefined;
  collections?: string[] | undefined;
  folder?: string | undefined;
  highlight?: { open: string; close: string } | undefined;
}

/** Runs each call without contexts attached (the store attaches them on its own connection). */
export interface QueryReads {
  lexical(query: string, options: LexicalOptions, signal?: AbortSignal): Promise<SearchHit[]>;
  nearest(
    vector: Float32Array,
    fingerprint: string,
    depth: number,
    collections: string | undefined,
    folder: string | undefined,
    signal?: AbortSignal,
  ): Promise<SearchHit[]>;
  multiGet(pattern: string, options: MultiGetOptions, signal?: AbortSignal): Promise<MultiGetResult>;
  /** `status()`'s counts, which read every chunk (0.35 s at 10k notes, 10 s at 100k: §8.4). */
  status(signal?: AbortSignal): Promise<StatusReport>;
  /** Stops running calls (the worker's: `close`, then `terminate()`); later calls are refused. */
  close(): Promise<void>;
}

/** The failpoint every read call passes first, wherever it runs (docs/design.md §6). */
export const QUERY_FAILPOINT = 'store.worker.query';

/** The readers one connection answers the calls with; the store's own, or the worker's. */
export interface ReadParts {
  searcher: Searcher;
  vectorSearcher: VectorSearcher;
  documents: DocumentReader;
  collections: Collections;
  status: StatusReader;
}

/** Answers one call on this thread, synchronously: the worker's loop and `InlineReads` both run this. */
export function answer(parts: ReadParts, call: ReadCall, failpoint?: FailpointAction): unknown {
  if (failpoint !== undefined) holdThread(QUERY_FAILPOINT, failpoint);
  switch (call.kind) {
    case 'lexical':
      return parts.searcher.search(call.query, {
        ...call.options,
        knownCollections: () => parts.collections.names(),
      });
    case 'nearest':
      return parts.vectorSearcher.search(call.vector, call.fingerprint, call.depth, call.collections, call.folder);
    case 'multiGet':
      return parts.documents.multiGet(call.pattern, call.options);
    case 'status':
      return parts.status.report();
  }
}

/** The calls on the caller's own connection and thread (one-shot commands). */
export class InlineReads implements QueryReads {
  constructor(
    private readonly parts: ReadParts,
    private readonly failpoint: () => FailpointAction | undefined,
  ) {}

  lexical(query: string, options: LexicalOptions): Promise<SearchHit[]> {
    return this.run({ kind: 'lexical', query, options });
  }

  nearest(
    vector: Float32Array,
    fingerprint: string,
    depth: number,
    collections?: string,
    folder?: string,
  ): Promise<SearchHit[]> {
    return this.run({ kind: 'nearest', vector, fingerprint, depth, collections, folder });
  }

  multiGet(pattern: string, options: MultiGetOptions): Promise<MultiGetResult> {
    return this.run({ kind: 'multiGet', pattern, options });
  }

  status(): Promise<StatusReport> {
    return this.run({ kind: 'status' });
  }

  close(): Promise<void> {
    return Promise.resolve();
  }

  private async run<T>(call: ReadCall): Promise<T> {
    return answer(this.parts, call, this.failpoint()) as T;
  }
}
