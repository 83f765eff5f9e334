/**
 * The query worker (docs/design.md §8.4): a `worker_threads` entry, bundled as
 * `dist/query-worker.mjs`, that answers `qmd mcp`'s heavy read-only calls (`query-reads.ts`)
 * on its own read-only connection, so a long query never holds the main thread's event loop,
 * where the lifecycle hears stdin, signals and its deadlines. Started and stopped by
 * `QueryWorker` (`query-worker-client.ts`); it writes nothing to stdout or stderr itself.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { FailpointAction } from '../failpoints.js';
import type { Log } from '../log.js';
import { Collections } from '../store/collections.js';
import { Contexts } from '../store/contexts.js';
import { DocumentReader } from '../store/documents.js';
import { Sqlite } from '../store/sqlite.js';
import { StatusReader } from '../store/status.js';
import { Vectors } from '../store/vectors/vectors.js';
import { Searcher } from './bm25.js';
import { answer, type ReadCall, type ReadParts } from './query-reads.js';
import { VectorSearcher } from './vector-search.js';
import { type WorkerData, type WorkerReply, wireError } from './worker-wire.js';

const port = parentPort;
if (port === null) throw new Error('query-worker.ts runs only as a worker thread');
const data = workerData as WorkerData;

// Read-only: this connection can never write, lock or checkpoint the index; the main
// thread's connection (opened first, closed last) keeps doing that.
const db = new Sqlite(data.path, { readOnly: true, timeoutMs: data.busyTimeoutMs, allowExtension: true });
db.pragma('cache_size = -16000');
const log: Log = {
  line: (text) => port.postMessage({ log: 'line', text } satisfies WorkerReply),
  warn: (text) => port.postMessage({ log: 'warn', text } satisfies WorkerReply),
};
const vectors = new Vectors(db, { extension: data.vectorExtension, log });
const collections = new Collections(db);
const parts: ReadParts = {
  searcher: new Searcher(db),
  vectorSearcher: new VectorSearcher(db, vectors),
  documents: new DocumentReader(db, data.path),
  collections,
  status: new StatusReader(db, { path: data.path, collections, vectors, contexts: new Contexts(db) }),
};

port.on('message', (message: { id: number; call: ReadCall; failpoint?: FailpointAction } | { close: true }) => {
  if ('close' in message) {
    db.close();
    port.close();
    return;
  }
  let reply: WorkerReply;
  try {
    reply = { id: message.id, value: answer(parts, message.call, message.failpoint) };
  } catch (error) {
    reply = { id: message.id, error: wireError(error) };
  }
  port.postMessage(reply);
});
