import { QmdError } from '../errors.js';
import type { LlmRuntime, ModelChoice } from '../llm/index.js';
import type { Log } from '../log.js';
import type { Searcher } from '../search/bm25.js';
import { checkCollections, checkLimit } from '../search/bm25.js';
import { runQuery, type VectorText } from '../search/query.js';
import type { QueryReads } from '../search/query-reads.js';
import type { Collections } from '../store/collections.js';
import type { Contexts } from '../store/contexts.js';
import type { DocumentReader } from '../store/documents.js';
import { checkFolder } from '../store/folder.js';
import type { IndexGuard } from '../store/guard.js';
import { quickCheck } from '../store/integrity.js';
import { listDocuments } from '../store/maintenance.js';
import type { Sqlite } from '../store/sqlite.js';
import type { StatusReader } from '../store/status.js';
import type { Vectors } from '../store/vectors/vectors.js';
import { chunkTitle, promptFormat } from '../text/chunks.js';
import type { IndexParts } from './compose.js';
import type { EmbeddingModel } from './embedding-model.js';
import { type GivenAs, modelMismatch, rememberedModelGone } from './model-problems.js';
import type { QueryModels } from './query-models.js';
import type {
  CollectionInfo,
  ContextInfo,
  DocumentEntry,
  DocumentSlice,
  ModelsReport,
  MultiGetOptions,
  MultiGetResult,
  QueryOptions,
  QueryResult,
  Reader,
  ReadOptions,
  SearchHit,
  SearchOptions,
  StatusReport,
  SubSearch,
} from './reader-types.js';

/** What only the read side uses, built for it by `compose`. */
export interface ReaderParts {
  searcher: Searcher;
  documents: DocumentReader;
  status: StatusReader;
  /** BM25, vector nearest and multiGet: in the query worker for `qmd mcp`, else inline (§8.4). */
  reads: QueryReads;
  queryModels: QueryModels;
  runtime: LlmRuntime;
  givenAs: GivenAs;
}

/**
 * The read side of the index (`Reader`): searches, documents, contexts and counts. It is
 * given its parts finished (`compose.ts`): the rankings of `src/search/`, the rows of
 * `src/store/`, and the models, which it hands to the query pipeline (`runQuery`) as
 * functions; it builds nothing itself and holds no indexer.
 */
export class SqliteReader implements Reader {
  readonly path: string;
  private readonly db: Sqlite;
  private readonly log: Log;
  private readonly guardian: IndexGuard;
  private readonly collections: Collections;
  private readonly searcher: Searcher;
  private readonly reader: DocumentReader;
  private readonly vectors: Vectors;
  private readonly model: EmbeddingModel;
  private readonly runtime: LlmRuntime;
  private readonly queryModels: QueryModels;
  private readonly contexts: Contexts;
  private readonly statusReader: StatusReader;
  private readonly reads: QueryReads;
  private warnedUnavailable = false;
  private readonly givenAs: GivenAs;
  private readonly warnedModels = new Set<string>();
  private readonly closeAll: () => Promise<void>;

  constructor(parts: IndexParts, own: ReaderParts) {
    this.path = parts.path;
    this.db = parts.db;
    this.log = parts.log;
    this.guardian = parts.guard;
    this.collections = parts.collections;
    this.contexts = parts.contexts;
    this.vectors = parts.vectors;
    this.model = parts.model;
    this.closeAll = parts.close;
    this.searcher = own.searcher;
    this.reader = own.documents;
    this.statusReader = own.status;
    this.reads = own.reads;
    this.queryModels = own.queryModels;
    this.runtime = own.runtime;
    this.givenAs = own.givenAs;
  }

  listCollections(): CollectionInfo[] {
    return this.guard(() => this.collections.info());
  }

  listDocuments(collection: string, prefix?: string): DocumentEntry[] {
    return this.guard(() => {
      checkCollections([collection], { knownCollections: () => this.collections.names() });
      return listDocuments(this.db, collection, prefix);
    });
  }

  search(query: string, options: SearchOptions = {}): SearchHit[] {
    return this.guard(() => {
      const scoped = this.withDefaultCollections(options);
      return scoped === undefined ? [] : this.contexts.attach(this.bm25(query, scoped));
    });
  }

  /**
   * A search that names no collection searches those included by default (`qmd collection
   * exclude` leaves one out, as qmd 2.x's `includeByDefault: false` does); undefined when every
   * collection is excluded, so the search has nothing to look in.
   */
  private withDefaultCollections<T extends SearchOptions>(options: T): T | undefined {
    if (options.collections !== undefined) return options;
    const names = this.collections.defaultNames();
    if (names === undefined) return options;
    return names.length === 0 ? undefined : { ...options, collections: names };
  }

  private bm25(query: string, options: SearchOptions): SearchHit[] {
    return this.guard(() =>
      this.searcher.search(query, { ...options, knownCollections: () => this.collections.names() }),
    );
  }

  /**
   * The one place that searches by meaning and keywords together: `runQuery` (`query.ts`)
   * runs the sub-searches over BM25 and the vectors and fuses them (`hybrid.ts`); this
   * gives it the index's rankings and the model.
   */
  async query(query: string | readonly SubSearch[], asked: QueryOptions = {}): Promise<QueryResult> {
    if (asked.signal?.aborted) throw new QmdError('ABORTED', 'The query was cancelled');
    const options = this.guard(() => this.withDefaultCollections(asked));
    if (options === undefined)
      return { mode: 'bm25', hits: [], note: 'every collection is excluded', searches: [], reranked: false };
    const filter = this.guard(() => this.collectionFilter(options));
    const folder = this.guard(() => checkFolder(options.folder));
    const { collections, highlight, signal } = options;
    let fingerprint = '';
    const result = await runQuery(query, options, {
      lexical: (text, depth) =>
        this.read(() => this.reads.lexical(text, { collections, folder, highlight, limit: depth }, signal)),
      embed: async (texts, signal) => {
        const ready = await this.embedForSearch(texts, signal);
        if ('fingerprint' in ready) fingerprint = ready.fingerprint;
        return ready;
      },
      nearest: (vector, depth) =>
        this.read(() => this.reads.nearest(vector, fingerprint, depth, filter, folder, signal)),
      ...(this.queryModels.expandSpec !== undefined && {
        expand: (text: string, signal: AbortSignal | undefined) =>
          this.withModel(this.queryModels.expandSpec as string, 'query expansion model', async () => ({
            lines: (await this.queryModels.expand(text, signal)).map((line) => ({ type: line.type, query: line.text })),
          })),
      }),
      ...(this.queryModels.rerankSpec !== undefined && {
        rerank: (text: string, texts: readonly string[], signal: AbortSignal | undefined) =>
          this.withModel(this.queryModels.rerankSpec as string, 'reranking model', async () => ({
            scores: await this.queryModels.rank(text, texts, signal),
          })),
      }),
      bodies: async (hits) => this.guard(() => this.reader.bodies(hits)),
    });
    return { ...result, hits: this.guard(() => this.contexts.attach(result.hits)) };
  }

  /**
   * A model's answer, or why there is none: an unavailable model is a note in the result
   * (and one warning per model and process, unless it is only an `hf:` model not downloaded
   * yet, which `qmd pull` fetches: the normal state of a fresh install).
   */
  private async withModel<T>(spec: string, what: string, work: () => Promise<T>): Promise<T | { note: string }> {
    try {
      return await work();
    } catch (error) {
      if (!(error instanceof QmdError) || error.code !== 'MODEL_UNAVAILABLE') throw error;
      const remote = /^(hf|huggingface|https?):/i.test(spec);
      // resolveModelPath's "not downloaded yet (searches never download)": the message says how
      // to get it; the note keeps to the point.
      if (remote && /not downloaded yet/.test(error.message)) {
        return { note: `the ${what} ${spec} is not downloaded (qmd pull fetches it)` };
      }
      if (!this.warnedModels.has(spec)) {
        this.warnedModels.add(spec);
        this.log.warn(`${error.message}; answering without it`);
      }
      return { note: `the ${what} is unavailable (${error.message})` };
    }
  }

  async models(options: { probe?: boolean } = {}): Promise<ModelsReport> {
    const configured = {
      embed: this.guard(() => this.model.choice()?.spec ?? null),
      rerank: this.queryModels.rerankSpec ?? null,
      expand: this.queryModels.expandSpec ?? null,
    };
    if (!options.probe) return { ...(await this.runtime.report()), configured };
    try {
      return { ...(await this.runtime.probe()), configured };
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      return { ...(await this.runtime.report()), configured, error: message };
    }
  }

  async vsearch(query: string, asked: SearchOptions = {}): Promise<QueryResult> {
    if (asked.signal?.aborted) throw new QmdError('ABORTED', 'The search was cancelled');
    const options = this.guard(() => this.withDefaultCollections(asked));
    if (options === undefined)
      return { mode: 'vector', hits: [], note: 'every collection is excluded', searches: [], reranked: false };
    const limit = this.guard(() => checkLimit(options.limit));
    const filter = this.guard(() => this.collectionFilter(options));
    const folder = this.guard(() => checkFolder(options.folder));
    const searches: QueryResult['searches'] = [{ type: 'vec', query, ran: 'skipped', candidates: 0 }];
    const ready = await this.embedForSearch([{ type: 'vec', text: query }], options.signal, {
      throwUnavailable: true,
      without: 'vsearch has no vectors to search',
    });
    const vector = 'vectors' in ready ? ready.vectors[0] : undefined;
    if ('note' in ready || vector === undefined) {
      return { mode: 'vector', hits: [], ...('note' in ready && { note: ready.note }), searches, reranked: false };
    }
    const hits = await this.read(() =>
      this.reads.nearest(vector, ready.fingerprint, limit, filter, folder, options.signal),
    );
    return {
      mode: 'vector',
      hits: this.guard(() => this.contexts.attach(hits.filter((hit) => hit.score >= (options.minScore ?? 0)))),
      searches: [{ type: 'vec', query, ran: 'vector', candidates: hits.length }],
      reranked: false,
    };
  }

  /**
   * The vectors of vector sub-searches, or why there are none. Nothing touches the model
   * unless the index has vectors; an unavailable model is one warning and a note (vsearch:
   * the error). A `vec` text is embedded in the model's query prompt; a `hyde` passage in its
   * document prompt, titled as a chunk of a note would be, so it meets the notes' chunks on
   * their own terms (EmbeddingGemma's prompts differ; other models get the raw text either way).
   */
  private async embedForSearch(
    texts: VectorText[],
    signal: AbortSignal | undefined,
    options: { throwUnavailable?: boolean; without?: string } = {},
  ): Promise<{ vectors: Float32Array[]; fingerprint: string } | { note: string }> {
    // What the caller does without vectors: `query` falls back to BM25; `vsearch` has nothing.
    const without = options.without ?? 'BM25 only';
    const choice = this.model.choice();
    if (choice === undefined) return { note: `no embedding model is configured: ${without}` };
    const state = this.guard(() => this.vectors.state());
    if (state.fingerprint === null || !this.guard(() => this.vectors.hasEmbeddings(state.fingerprint as string))) {
      return {
        note: `nothing is embedded yet: ${without} (run qmd embed${options.without ? '; qmd search works without them' : ''})`,
      };
    }
    try {
      const fingerprint = await this.model.fingerprint(signal);
      const chosen = this.model.choice() ?? choice;
      if (fingerprint !== state.fingerprint) throw modelMismatch(chosen, state.model, this.givenAs);
      const format = promptFormat(chosen.spec);
      const vectors: Float32Array[] = [];
      for (const { type, text } of texts) {
        const prompt = type === 'vec' ? format.query(text) : format.document(chunkTitle(text), text);
        vectors.push(await this.model.embed(prompt, signal));
      }
      return { vectors, fingerprint };
    } catch (caught) {
      const unavailable = caught instanceof QmdError && caught.code === 'MODEL_UNAVAILABLE';
      const error = unavailable ? (rememberedModelGone(this.model.choice() ?? choice) ?? caught) : caught;
      const mismatch = error instanceof QmdError && error.code === 'MODEL_MISMATCH';
      if (!(unavailable || mismatch) || options.throwUnavailable) throw error;
      const message = (error as QmdError).message;
      if (!this.warnedUnavailable) {
        this.warnedUnavailable = true;
        this.log.warn(`${message}; searching with BM25 only`);
      }
      const why = mismatch ? 'the index is embedded with another model' : 'the embedding model is unavailable';
      return { note: `${why}: BM25 only (${message})` };
    }
  }

  private collectionFilter(options: SearchOptions): string | undefined {
    if (options.collections === undefined) return undefined;
    return checkCollections(options.collections, { knownCollections: () => this.collections.names() });
  }

  get(ref: string, options: ReadOptions = {}): DocumentSlice {
    return this.guard(() => {
      const [slice] = this.contexts.attachToDocuments([this.reader.get(ref, options)]);
      return slice as DocumentSlice;
    });
  }

  async multiGet(pattern: string, options: MultiGetOptions = {}): Promise<MultiGetResult> {
    const { signal, ...rest } = options;
    const result = await this.read(() => this.reads.multiGet(pattern, rest, signal));
    return { ...result, documents: this.guard(() => this.contexts.attachToDocuments(result.documents)) };
  }

  status(): StatusReport {
    return this.guard(() => this.statusReader.report());
  }

  readStatus(options: { signal?: AbortSignal } = {}): Promise<StatusReport> {
    return this.read(() => this.reads.status(options.signal));
  }

  embeddingModel(): ModelChoice | undefined {
    return this.model.choice();
  }

  listContexts(): ContextInfo[] {
    return this.guard(() => this.contexts.list());
  }

  verify(): void {
    this.guard(() => quickCheck(this.db, this.path));
  }

  /**
   * Closes the index: the models, the query worker, then the database (`compose.ts`). The
   * reader owns the teardown of what it was given, whoever else shares it. Idempotent.
   */
  close(): Promise<void> {
    return this.closeAll();
  }

  /** `guard` for the read calls, which may run in the query worker. */
  private read<T>(work: () => Promise<T>): Promise<T> {
    return this.guardian.runAsync(work);
  }

  /** Refuses calls after close, and turns SQLite's errors into QmdErrors with codes. */
  private guard<T>(work: () => T): T {
    return this.guardian.run(work);
  }
}
