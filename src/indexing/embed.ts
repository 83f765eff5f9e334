import { QmdError } from '../errors.js';
import type { Sqlite } from '../store/sqlite.js';
import type { NewVector, Vectors } from '../store/vectors/vectors.js';
import { chunkerId, chunkNote, chunkTitle, type PromptFormat, promptFormat } from '../text/chunks.js';
import type { EmbedOptions, EmbedReport, ModelChange } from './types.js';

/** Chunks per write transaction: a SIGKILL loses at most this many embeddings. */
export const DEFAULT_EMBED_BATCH = 32;
/** Notes chunked per write transaction. */
const CHUNK_PAGE = 200;

/**
 * The embedding model `embedIndex` is given: `src/core/` wraps `src/llm/`'s embedder in one
 * (`EmbeddingModel`), tests may pass their own. Its errors are QmdErrors (MODEL_UNAVAILABLE,
 * ABORTED, CLOSED).
 */
export interface ChunkEmbedder {
  /** The model's spec, as the index remembers it; undefined when none is configured. */
  readonly spec: string | undefined;
  /** The model file's fingerprint (no llama.cpp); stops waiting when `signal` fires. */
  fingerprint(signal?: AbortSignal): Promise<string>;
  dimensions(): Promise<number>;
  maxTokens(): Promise<number>;
  /** The normalized vector of `text`; ABORTED at once when `signal` fires. */
  embed(text: string, signal?: AbortSignal): Promise<Float32Array>;
}

interface Pending {
  hash: string;
  contentHash: string;
  start: number;
  end: number;
}

/**
 * `qmd embed`: chunk what is not chunked yet, then embed every chunk that has no
 * vector for the model's fingerprint, in batches, each batch one write transaction. Nothing
 * is held open while llama.cpp computes (the write lock is taken only to store a finished
 * batch), so searches and `qmd update` in other processes go on, and a kill at any point
 * loses at most the batch in flight: the next run picks up where this one stopped.
 *
 * The signal is checked between chunks; when it fires, the vectors already computed are
 * stored and the run rejects with ABORTED. `stop` is checked there too, but lets the chunk in
 * flight finish: its batch is stored and the run resolves with `stopped` (Ctrl-C keeps the work done).
 */
export async function embedIndex(
  db: Sqlite,
  vectors: Vectors,
  model: ChunkEmbedder,
  options: EmbedOptions,
): Promise<EmbedReport> {
  const started = performance.now();
  const { signal, stop } = options;
  const batchSize = options.batchSize ?? DEFAULT_EMBED_BATCH;
  if (!Number.isInteger(batchSize) || batchSize < 1)
    throw new QmdError('BAD_ARGUMENT', 'batchSize must be a positive integer');
  const spec = model.spec;
  if (spec === undefined) throw new QmdError('MODEL_UNAVAILABLE', 'no embedding model is configured');
  throwIfAborted(signal);

  // With the signal: Ctrl-C during a download stops waiting at once (closing the store ends it).
  // `stop` too: a download is no unit to finish; it rejects with ABORTED, nothing embedded yet.
  const fingerprint = await model.fingerprint(anyOf(signal, stop));
  // Ctrl-C before the model is loaded: it never is (loading is seconds of native work that
  // nothing could stop), and nothing is embedded: ABORTED, as during a download.
  throwIfAborted(anyOf(signal, stop));
  // The same model file as last time: its shape is known, and llama.cpp is loaded only if
  // something needs embedding (a run with nothing to do reads the file's fingerprint only).
  const known = vectors.state();
  const same = known.fingerprint === fingerprint && known.dims !== null && known.max_tokens !== null;
  const dims = same ? (known.dims as number) : await model.dimensions();
  const maxTokens = same ? (known.max_tokens as number) : await model.maxTokens();
  // Pressed while it loaded: nothing was embedded or changed yet.
  throwIfAborted(anyOf(signal, stop));
  const format = promptFormat(spec);
  const chunker = chunkerId(maxTokens, format);
  const previousModel: ModelChange | undefined =
    known.model !== null && (known.model !== spec || known.fingerprint !== fingerprint)
      ? { from: known.model, to: spec, reembed: known.fingerprint !== fingerprint }
      : undefined;
  if (previousModel !== undefined) options.onModelChange?.(previousModel);
  db.transaction(() => vectors.adopt({ spec, fingerprint, dims, maxTokens, chunker }));

  if (options.force) db.transaction(() => vectors.forget(fingerprint));
  const documents = await chunkPending(db, maxTokens, format, options);
  const removed = db.transaction(() => {
    const collected = vectors.collectOrphans(fingerprint);
    // Brings the codes in step even when nothing is left to embed (another writer may have
    // run without the extension); a no-op when they are.
    vectors.syncCodes();
    return collected;
  });

  const todo = plan(db, fingerprint);
  // Counted as `status()` counts: the two must never disagree on one index.
  const { chunks } = vectors.chunkCounts(fingerprint);
  let embedded = 0;
  let done = 0;
  const bodies = new BodyCache(db);
  const store = (rows: NewVector[]): void => {
    if (rows.length === 0) return;
    const now = new Date().toISOString();
    embedded += db.transaction(() => vectors.write(fingerprint, dims, rows, now));
  };
  options.onProgress?.({ done: 0, total: todo.length });
  let stopped = stop?.aborted ?? false;
  for (let i = 0; i < todo.length && !stopped; i += batchSize) {
    const batch: NewVector[] = [];
    try {
      for (const chunk of todo.slice(i, i + batchSize)) {
        throwIfAborted(signal);
        if (stop?.aborted) {
          stopped = true;
          break;
        }
        const body = bodies.get(chunk.contentHash);
        // `qmd update` in another process may have replaced the text since the plan.
        if (body !== undefined) {
          const text = format.document(chunkTitle(body), body.slice(chunk.start, chunk.end));
          batch.push({ chunkHash: chunk.hash, vector: await embedChunk(model, text, signal) });
        }
        options.onProgress?.({ done: ++done, total: todo.length });
      }
    } finally {
      // Also when cancelled or failing: what was computed is kept.
      if (db.isOpen) store(batch);
    }
  }
  return {
    model: spec,
    ...(previousModel !== undefined && { previousModel }),
    documents,
    chunks,
    embedded,
    skipped: chunks - todo.length,
    removed,
    ms: Math.round(performance.now() - started),
    vectorBackend: vectors.backend(),
    ...(stopped && { stopped }),
  };
}

/**
 * Chunks every text that has none yet (a page of notes per transaction, then a turn of the event
 * loop, so progress and Ctrl-C are heard). Returns how many; `stop` ends it after a page.
 */
async function chunkPending(
  db: Sqlite,
  maxTokens: number,
  format: PromptFormat,
  options: Pick<EmbedOptions, 'signal' | 'stop' | 'onChunked'>,
): Promise<number> {
  const pending = db.prepare<{ after: string }, { hash: string; body: string }>(
    `SELECT hash, body FROM content
     WHERE hash > @after AND length(trim(body, ' \n\r\t')) > 0
       AND NOT EXISTS (SELECT 1 FROM chunks c WHERE c.content_hash = content.hash)
     ORDER BY hash LIMIT ${CHUNK_PAGE}`,
  );
  const insert = db.prepare<[string, number, string, number, number, number]>(
    `INSERT OR IGNORE INTO chunks (content_hash, seq, hash, start_offset, end_offset, line) VALUES (?, ?, ?, ?, ?, ?)`,
  );
  const page = (after: string) => {
    const rows = pending.all({ after });
    for (const row of rows) {
      for (const chunk of chunkNote(row.body, maxTokens, format)) {
        insert.run(row.hash, chunk.seq, chunk.hash, chunk.start, chunk.end, chunk.line);
      }
    }
    return rows;
  };
  let after = '';
  let count = 0;
  for (;;) {
    throwIfAborted(options.signal);
    if (options.stop?.aborted) return count;
    const rows = db.transaction(() => page(after));
    count += rows.length;
    if (rows.length > 0) options.onChunked?.(count);
    const last = rows.at(-1);
    if (last === undefined || rows.length < CHUNK_PAGE) return count;
    after = last.hash;
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}

/** The distinct chunks without a vector for `fingerprint`, in note order. */
function plan(db: Sqlite, fingerprint: string): Pending[] {
  const rows = db
    .prepare<[string], { hash: string; content_hash: string; start_offset: number; end_offset: number }>(
      `SELECT c.hash, c.content_hash, c.start_offset, c.end_offset FROM chunks c
       WHERE NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.model = ? AND e.chunk_hash = c.hash)
       ORDER BY c.content_hash, c.seq`,
    )
    .all(fingerprint);
  const seen = new Set<string>();
  const todo: Pending[] = [];
  for (const row of rows) {
    if (seen.has(row.hash)) continue;
    seen.add(row.hash);
    todo.push({ hash: row.hash, contentHash: row.content_hash, start: row.start_offset, end: row.end_offset });
  }
  return todo;
}

/** The body of the last text asked for (chunks come in note order, so one is enough). */
class BodyCache {
  private hash: string | undefined;
  private body: string | undefined;
  private readonly select;

  constructor(db: Sqlite) {
    this.select = db.column<[string], string>('SELECT body FROM content WHERE hash = ?');
  }

  get(hash: string): string | undefined {
    if (hash !== this.hash) {
      this.hash = hash;
      this.body = this.select.get(hash);
    }
    return this.body;
  }
}

const cancelled = (): QmdError =>
  new QmdError('ABORTED', 'Embedding was cancelled; the vectors computed so far are saved');

function anyOf(...signals: Array<AbortSignal | undefined>): AbortSignal | undefined {
  const given = signals.filter((s): s is AbortSignal => s !== undefined);
  return given.length <= 1 ? given[0] : AbortSignal.any(given);
}

function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw cancelled();
}

async function embedChunk(model: ChunkEmbedder, text: string, signal: AbortSignal | undefined): Promise<Float32Array> {
  try {
    return await model.embed(text, signal);
  } catch (error) {
    throw error instanceof QmdError && error.code === 'ABORTED' ? cancelled() : error;
  }
}

/** Why `embedTexts` embedded nothing: the index has no vectors, or of another model or chunker. */
export type FollowRefusal = 'no-vectors' | 'other-model' | 'other-chunker';

/**
 * A watcher's vectors: the chunks of the texts named (content hashes just indexed) chunked if
 * they are not yet, and embedded if they have no vector of the index's model. One chunk at a
 * time through `model` (so a query's embedding waits behind one chunk at most: the model's
 * queue is first come, first served), each text's vectors written in one small transaction.
 * Only indexed lookups: no plan over the whole index (`embedIndex`'s) and no sweep. Nothing is
 * embedded when the index has no vectors yet, or has them of another model or chunker than
 * `model` would make (a whole `qmd embed` is for that): the refusal is returned.
 * `write` wraps each write transaction (a watcher retries on a busy index without blocking).
 */
export async function embedTexts(
  db: Sqlite,
  vectors: Vectors,
  model: ChunkEmbedder,
  hashes: readonly string[],
  options: { signal?: AbortSignal; write: <T>(work: () => T) => Promise<T>; onText?: (hash: string) => void },
): Promise<{ embedded: number } | { refused: FollowRefusal }> {
  const { signal, write } = options;
  const state = vectors.state();
  if (state.fingerprint === null || state.dims === null || state.max_tokens === null) return { refused: 'no-vectors' };
  const spec = model.spec;
  if (spec === undefined) return { refused: 'other-model' };
  const fingerprint = await model.fingerprint(signal);
  if (fingerprint !== state.fingerprint) return { refused: 'other-model' };
  const format = promptFormat(spec);
  if (chunkerId(state.max_tokens, format) !== state.chunker) return { refused: 'other-chunker' };
  const dims = state.dims;
  const maxTokens = state.max_tokens;
  const body = db.column<[string], string>('SELECT body FROM content WHERE hash = ?');
  const chunked = db.column<[string], number>('SELECT EXISTS (SELECT 1 FROM chunks WHERE content_hash = ?)');
  const insert = db.prepare<[string, number, string, number, number, number]>(
    `INSERT OR IGNORE INTO chunks (content_hash, seq, hash, start_offset, end_offset, line) VALUES (?, ?, ?, ?, ?, ?)`,
  );
  const missing = db.prepare<[string, string], { hash: string; start_offset: number; end_offset: number }>(
    `SELECT c.hash, c.start_offset, c.end_offset FROM chunks c WHERE c.content_hash = ?
     AND NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.model = ? AND e.chunk_hash = c.hash) ORDER BY c.seq`,
  );
  let embedded = 0;
  for (const hash of hashes) {
    throwIfAborted(signal);
    const text = body.get(hash);
    // Replaced again since it was indexed: the newer text is named in a later batch.
    if (text === undefined) {
      options.onText?.(hash);
      continue;
    }
    if (chunked.get(hash) === 0) {
      await write(() => {
        for (const chunk of chunkNote(text, maxTokens, format)) {
          insert.run(hash, chunk.seq, chunk.hash, chunk.start, chunk.end, chunk.line);
        }
      });
    }
    const rows: NewVector[] = [];
    const seen = new Set<string>();
    for (const chunk of missing.all(hash, fingerprint)) {
      if (seen.has(chunk.hash)) continue;
      seen.add(chunk.hash);
      const prompt = format.document(chunkTitle(text), text.slice(chunk.start_offset, chunk.end_offset));
      rows.push({ chunkHash: chunk.hash, vector: await embedChunk(model, prompt, signal) });
    }
    if (rows.length > 0) {
      const now = new Date().toISOString();
      embedded += await write(() => vectors.write(fingerprint, dims, rows, now));
    }
    options.onText?.(hash);
  }
  return { embedded };
}
