import { type Failpoints, noFailpoints } from '../failpoints.js';
import { absoluteModelSpec, LlmRuntime } from '../llm/index.js';
import { type Log, silentLog } from '../log.js';
import { Searcher } from '../search/bm25.js';
import { openReads } from '../search/query-worker-client.js';
import { VectorSearcher } from '../search/vector-search.js';
import { runEvery } from '../settle.js';
import { Collections } from '../store/collections.js';
import { Contexts } from '../store/contexts.js';
import { closeDatabase, type OpenedDatabase } from '../store/database.js';
import { DocumentReader } from '../store/documents.js';
import { IndexGuard } from '../store/guard.js';
import type { Sqlite } from '../store/sqlite.js';
import { StatusReader } from '../store/status.js';
import { Vectors } from '../store/vectors/vectors.js';
import { EmbeddingModel } from './embedding-model.js';
import { QueryModels } from './query-models.js';
import { SqliteReader } from './reader.js';
import type { StoreOptions } from './types.js';

/**
 * What the reader and the writer of one index share, built once by `compose`: the connection
 * and its guard, the tables both touch, the one embedding model of the process (a second
 * llama.cpp instance is unsafe: `src/llm/llama.ts`), and the one ordered teardown.
 */
export interface IndexParts {
  /** Absolute path of the index file. */
  path: string;
  db: Sqlite;
  readonly: boolean;
  log: Log;
  failpoints: Failpoints;
  guard: IndexGuard;
  collections: Collections;
  contexts: Contexts;
  vectors: Vectors;
  model: EmbeddingModel;
  /** Closes everything `compose` built, once, in order (idempotent). */
  close: () => Promise<void>;
}

/**
 * The composition root of the index: the one place that reads `StoreOptions`, builds the
 * models (`src/llm/`) and hands them, finished, to the read side (`src/search/` through the
 * reader) and the write side (`src/indexing/` through the writer). Nothing below it is
 * given an options object to pass on. The reader is built here because every open index has
 * one (the writer's `Store` is a reader too); a writer is one more constructor over `parts`.
 */
export function compose(
  path: string,
  opened: OpenedDatabase,
  options: StoreOptions & { busyTimeoutMs: number },
): { parts: IndexParts; reader: SqliteReader } {
  const { db } = opened;
  const readonly = options.readonly ?? false;
  const log = options.log ?? silentLog;
  const failpoints = options.failpoints ?? noFailpoints;
  const vectorExtension = options.vectorExtension ?? true;
  const guard = new IndexGuard(path, options.busyTimeoutMs);
  // In the order the statements were always prepared: a damaged schema fails the first.
  const collections = new Collections(db);
  const searcher = new Searcher(db);
  const documents = new DocumentReader(db, path);
  const vectors = new Vectors(db, { extension: vectorExtension, log });
  const vectorSearcher = new VectorSearcher(db, vectors);
  const contexts = new Contexts(db);
  const status = new StatusReader(db, { path, collections, vectors, contexts });
  const givenAs = options.embedModelGivenAs ?? '--embed-model';
  // The one llama.cpp runtime of the store's three models: one ordered teardown (`src/llm/runtime.ts`).
  const runtime = new LlmRuntime({
    ...(options.gpu !== undefined && { gpu: options.gpu }),
    ...(options.embedThreads !== undefined && { threads: options.embedThreads }),
    log,
  });
  const model = new EmbeddingModel({
    given:
      options.embedModel === undefined
        ? undefined
        : {
            // Absolute: the index stores it, and is read from other directories.
            spec: absoluteModelSpec(options.embedModel),
            source: givenAs === 'QMD_EMBED_MODEL' ? 'env' : 'flag',
          },
    remembered: () => guard.run(() => vectors.state().model),
    fallback: options.defaultEmbedModel,
    onDownloadProgress: options.onModelDownload,
    log,
    failpoints,
    trace: options.trace,
    createEmbedder: options.createEmbedder,
    runtime,
    download: !readonly,
  });
  const queryModels = new QueryModels({
    runtime,
    rerankSpec: options.rerankModel,
    expandSpec: options.expandModel,
    failpoints,
    trace: options.trace,
    download: !readonly,
    createReranker: options.createReranker,
    createExpander: options.createExpander,
  });
  // Last: nothing after it may throw, or the worker would outlive a store never returned.
  const reads = openReads(
    { searcher, vectorSearcher, documents, collections, status },
    { path, busyTimeoutMs: options.busyTimeoutMs, vectorExtension, log, failpoints, worker: options.queryWorker },
  );
  let closing: Promise<void> | undefined;
  /**
   * The models first (one ordered teardown of all three, which waits for every native call
   * still running: `src/llm/runtime.ts`), then the query worker (its own connection,
   * `QueryWorker.close`), then the database. Each step runs even if the one before failed,
   * then the failures are reported (`runEvery`).
   */
  const shutdown = async (): Promise<void> => {
    guard.close();
    await runEvery('closing the index failed', [
      () => {
        queryModels.traceClosing();
        return model.dispose();
      },
      () => runtime.dispose(),
      () => reads.close(),
      () => closeDatabase(opened, log),
    ]);
  };
  const close = (): Promise<void> => {
    closing ??= shutdown();
    return closing;
  };
  const parts: IndexParts = {
    path,
    db,
    readonly,
    log,
    failpoints,
    guard,
    collections,
    contexts,
    vectors,
    model,
    close,
  };
  const reader = new SqliteReader(parts, { searcher, documents, status, reads, queryModels, runtime, givenAs });
  composed.set(reader, parts);
  return { parts, reader };
}

/** Each reader `compose` built, to its parts: what a watcher beside a served reader shares (its model). */
const composed = new WeakMap<object, IndexParts>();

/** The parts of a reader `compose` built; undefined for any other reader (a test's fake). */
export function composedParts(reader: object): IndexParts | undefined {
  return composed.get(reader);
}
