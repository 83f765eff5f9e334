import { QmdError } from '../errors.js';
import { type Failpoints, noFailpoints } from '../failpoints.js';
import { absoluteModelSpec, LlmRuntime, type ModelChoice } from '../llm/index.js';
import { type Log, silentLog } from '../log.js';
import { runEvery } from '../settle.js';
import { chunkTitle, promptFormat } from './chunks.js';
import { type CollectionSettings, Collections, checkUpdateCommand, realDirectory } from './collections.js';
import { Contexts, resolvePlace } from './contexts.js';
import { closeDatabase, type OpenedDatabase } from './database.js';
import { DocumentReader } from './documents.js';
import { embedIndex } from './embed.js';
import { EmbeddingModel } from './embedding-model.js';
import { checkFolder } from './folder.js';
import { addIgnored, noneIgnored } from './ignore.js';
import { IndexWriter, type WriteCounts } from './indexing.js';
import { cleanupIndex, listDocuments } from './maintenance.js';
import { type GivenAs, modelMismatch, rememberedModelGone } from './model-problems.js';
import { checkCollectionName, checkMask, nameFromDirectory } from './paths.js';
import { runQuery, type VectorText } from './query.js';
import { QueryModels } from './query-models.js';
import type { QueryReads } from './query-reads.js';
import { openReads } from './query-worker-client.js';
import { type CollectionScan, scanCollection } from './scan.js';
import { checkCollections, checkLimit, Searcher } from './search.js';
import { fromSqliteError } from './sqlite-errors.js';
import { StatusReader } from './status.js';
import type {
  CleanupReport,
  CollectionInfo,
  ContextInfo,
  DocumentEntry,
  DocumentSlice,
  EmbedOptions,
  EmbedReport,
  IndexOptions,
  IndexReport,
  ModelsReport,
  MultiGetOptions,
  MultiGetResult,
  ProgressFn,
  QueryOptions,
  QueryResult,
  ReadOptions,
  SearchHit,
  SearchOptions,
  StatusReport,
  Store,
  StoreOptions,
  SubSearch,
} from './types.js';
import { VectorSearcher } from './vector-search.js';
import { Vectors } from './vectors.js';

export const defaultMask = '**/*.md';
const updateFailpoint = 'store.update.write';

export class SqliteStore implements Store {
  private readonly db;
  private readonly readonly: boolean;
  private readonly busyTimeoutMs: number;
  private readonly log: Log;
  private readonly failpoints: Failpoints;
  private readonly collections: Collections;
  private readonly searcher: Searcher;
  private readonly reader: DocumentReader;
  private readonly vectors: Vectors;
  private readonly vectorSearcher: VectorSearcher;
  private readonly model: EmbeddingModel;
  /** The one llama.cpp runtime of the store's three models: one ordered teardown (`src/llm/runtime.ts`). */
  private readonly runtime: LlmRuntime;
  private readonly queryModels: QueryModels;
  private readonly contexts: Contexts;
  private readonly statusReader: StatusReader;
  /** BM25, vector nearest and multiGet: in the query worker for `qmd mcp`, else inline (§8.4). */
  private readonly reads: QueryReads;
  private warnedUnavailable = false;
  private readonly givenAs: GivenAs;
  private readonly warnedModels = new Set<string>();
  private writerCache: IndexWriter | undefined;
  private closed = false;
  private closing: Promise<void> | undefined;

  constructor(
    readonly path: string,
    private readonly opened: OpenedDatabase,
    options: StoreOptions & { busyTimeoutMs: number },
  ) {
    this.db = opened.db;
    this.readonly = options.readonly ?? false;
    this.busyTimeoutMs = options.busyTimeoutMs;
    this.log = options.log ?? silentLog;
    this.failpoints = options.failpoints ?? noFailpoints;
    this.collections = new Collections(this.db);
    this.searcher = new Searcher(this.db);
    this.reader = new DocumentReader(this.db);
    this.vectors = new Vectors(this.db, { extension: options.vectorExtension ?? true, log: this.log });
    this.vectorSearcher = new VectorSearcher(this.db, this.vectors);
    this.contexts = new Contexts(this.db);
    this.statusReader = new StatusReader(this.db, {
      path: this.path,
      collections: this.collections,
      vectors: this.vectors,
      contexts: this.contexts,
    });
    this.givenAs = options.embedModelGivenAs ?? '--embed-model';
    this.runtime = new LlmRuntime({
      ...(options.gpu !== undefined && { gpu: options.gpu }),
      ...(options.embedThreads !== undefined && { threads: options.embedThreads }),
      log: this.log,
    });
    this.model = new EmbeddingModel({
      given:
        options.embedModel === undefined
          ? undefined
          : {
              // Absolute: the index stores it, and is read from other directories.
              spec: absoluteModelSpec(options.embedModel),
              source: this.givenAs === 'QMD_EMBED_MODEL' ? 'env' : 'flag',
            },
      remembered: () => this.guard(() => this.vectors.state().model),
      fallback: options.defaultEmbedModel,
      onDownloadProgress: options.onModelDownload,
      log: this.log,
      failpoints: this.failpoints,
      trace: options.trace,
      createEmbedder: options.createEmbedder,
      runtime: this.runtime,
      download: !this.readonly,
    });
    this.queryModels = new QueryModels({
      runtime: this.runtime,
      rerankSpec: options.rerankModel,
      expandSpec: options.expandModel,
      failpoints: this.failpoints,
      trace: options.trace,
      download: !this.readonly,
      createReranker: options.createReranker,
      createExpander: options.createExpander,
    });
    // Last: nothing after it may throw, or the worker would outlive a store never returned.
    this.reads = openReads(
      {
        searcher: this.searcher,
        vectorSearcher: this.vectorSearcher,
        documents: this.reader,
        collections: this.collections,
        status: this.statusReader,
      },
      {
        path,
        busyTimeoutMs: this.busyTimeoutMs,
        vectorExtension: options.vectorExtension ?? true,
        log: this.log,
        failpoints: this.failpoints,
        worker: options.queryWorker,
      },
    );
  }

  listCollections(): CollectionInfo[] {
    return this.guard(() => this.collections.info());
  }

  async addCollection(
    root: string,
    options: {
      name?: string;
      mask?: string;
      ignore?: string[];
      update?: string;
      includeByDefault?: boolean;
    } & IndexOptions = {},
  ): Promise<IndexReport> {
    const started = performance.now();
    const { real, name, mask, settings } = this.guard(() => {
      this.requireWritable();
      const real = realDirectory(root);
      const mask = checkMask(options.mask ?? defaultMask);
      const name =
        options.name === undefined
          ? this.collections.freeName(nameFromDirectory(real))
          : checkCollectionName(options.name);
      this.collections.refuseDuplicate(name, real);
      const settings: CollectionSettings = {
        ignore: (options.ignore ?? []).map(checkMask),
        ...(options.update !== undefined && { update: checkUpdateCommand(options.update) }),
        ...(options.includeByDefault !== undefined && { includeByDefault: options.includeByDefault }),
      };
      return { real, name, mask, settings };
    });
    const run = this.guard(() => this.writer.newRun());
    const scan = await this.scan(run, { name, root: real, mask, ignore: settings.ignore ?? [] }, options);
    // Stopped before a file was read: nothing to keep, so the collection is not added.
    if (scan.stopped && scan.found === 0) {
      this.writer.unstage(run);
      return this.report(started, [scan], { added: 0, updated: 0, removed: 0, unchanged: 0 }, []);
    }
    return this.write(run, started, [scan], options.onProgress, (now) => {
      // Checked again under the write lock: another process may have added it meanwhile.
      this.collections.refuseDuplicate(name, real);
      this.collections.add({ name, root: real, mask }, settings, now);
    });
  }

  removeCollection(name: string): void {
    this.guard(() => {
      this.requireWritable();
      this.db.transaction(() => {
        this.collections.delete(name);
        this.writer.collectOrphanContent();
        // Its documents' vector rows went by trigger; their codes go before the commit.
        this.vectors.syncCodes();
      });
    });
  }

  renameCollection(from: string, to: string): void {
    this.guard(() => {
      this.requireWritable();
      const name = checkCollectionName(to);
      this.db.transaction(() => {
        this.collections.rename(from, name);
        this.vectors.syncCodes();
      });
    });
  }

  configureCollection(
    name: string,
    settings: { update?: string | null; includeByDefault?: boolean; mask?: string },
  ): void {
    this.guard(() => {
      this.requireWritable();
      const mask = settings.mask === undefined ? undefined : checkMask(settings.mask);
      const update =
        settings.update === undefined || settings.update === null
          ? settings.update
          : checkUpdateCommand(settings.update);
      this.db.transaction(() =>
        this.collections.configure(name, {
          ...(update !== undefined && { update }),
          ...(settings.includeByDefault !== undefined && { includeByDefault: settings.includeByDefault }),
          ...(mask !== undefined && { mask }),
        }),
      );
    });
  }

  listDocuments(collection: string, prefix?: string): DocumentEntry[] {
    return this.guard(() => {
      checkCollections([collection], { knownCollections: () => this.collections.names() });
      return listDocuments(this.db, collection, prefix);
    });
  }

  cleanup(options: { dryRun?: boolean } = {}): CleanupReport {
    return this.guard(() => {
      if (!options.dryRun) this.requireWritable();
      return cleanupIndex(this.db, this.vectors, this.path, options);
    });
  }

  async update(options: IndexOptions = {}): Promise<IndexReport> {
    const started = performance.now();
    const targets = this.guard(() => {
      this.requireWritable();
      if (options.signal?.aborted) throw new QmdError('ABORTED', 'Indexing was cancelled; the index is unchanged');
      return this.collections.all();
    });
    const run = this.guard(() => this.writer.newRun());
    const scans: CollectionScan[] = [];
    for (const target of targets) {
      if (options.stop?.aborted) break;
      scans.push(await this.scan(run, target, options));
    }
    const untouched = targets.slice(scans.length).map((t) => t.name);
    return this.write(run, started, scans, options.onProgress, () => {}, untouched);
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

  embed(options: EmbedOptions = {}): Promise<EmbedReport> {
    this.guard(() => this.requireWritable());
    return embedIndex(this.db, this.vectors, this.model, options).catch((error: unknown) => {
      throw this.closed && !(error instanceof QmdError)
        ? new QmdError('CLOSED', 'The index is closed')
        : fromSqliteError(error, this.path, this.busyTimeoutMs);
    });
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

  setContext(path: string, text: string, options: { cwd?: string } = {}): { context: ContextInfo; replaced: boolean } {
    return this.guard(() => {
      this.requireWritable();
      return this.contexts.set(resolvePlace(path, this.collections.all(), options.cwd ?? process.cwd()), text);
    });
  }

  removeContext(path: string, options: { cwd?: string } = {}): ContextInfo {
    return this.guard(() => {
      this.requireWritable();
      return this.contexts.delete(resolvePlace(path, this.collections.all(), options.cwd ?? process.cwd()));
    });
  }

  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  /**
   * The models first (one ordered teardown of all three, which waits for every native call
   * still running: `src/llm/runtime.ts`), then the query worker (its own connection,
   * `QueryWorker.close`), then the database. Each step runs even if the one before failed,
   * then the failures are reported (`runEvery`).
   */
  private async shutdown(): Promise<void> {
    this.closed = true;
    await runEvery('closing the index failed', [
      () => {
        this.queryModels.traceClosing();
        return this.model.dispose();
      },
      () => this.runtime.dispose(),
      () => this.reads.close(),
      () => closeDatabase(this.opened, this.log),
    ]);
  }

  /**
   * The read phase of one collection: its files are staged batch by batch as they are read
   * (`IndexWriter.stage`), so memory holds one batch, not the corpus (docs/design.md §8.5).
   * No lock on the index is held while files are read.
   */
  private async scan(
    run: bigint,
    target: { name: string; root: string; mask: string; ignore: string[] },
    options: IndexOptions,
  ): Promise<CollectionScan> {
    try {
      return await scanCollection({
        collection: target.name,
        root: target.root,
        mask: target.mask,
        ignore: target.ignore,
        known: (path) => this.guard(() => this.writer.known(target.name, path)),
        onBatch: (files, seen) => this.guard(() => this.writer.stage(run, target.name, files, seen)),
        onProgress: options.onProgress,
        signal: options.signal,
        stop: options.stop,
      });
    } catch (error) {
      this.writer.unstage(run);
      throw error;
    }
  }

  /**
   * The write phase: one `BEGIN IMMEDIATE` transaction for every collection scanned, so an
   * update is all or nothing — a crash or SIGKILL before COMMIT leaves the previous index
   * (WAL frames of an uncommitted transaction are ignored on the next open). The staged files
   * are streamed in from the TEMP table; SQLite spills a large transaction's pages to the WAL,
   * so its memory is the page cache, not the corpus. It is a manual transaction rather than
   * `db.transaction()` so that it can yield inside: to the failpoint, and between pages of
   * staged files (`IndexWriter.apply`), where progress is drawn and a second Ctrl-C can exit
   * (leaving the transaction uncommitted: the index as it was).
   */
  private async write(
    run: bigint,
    started: number,
    scans: CollectionScan[],
    onProgress: ProgressFn | undefined,
    before: (now: string) => void,
    untouched: string[] = [],
  ): Promise<IndexReport> {
    const counts: WriteCounts = { added: 0, updated: 0, removed: 0, unchanged: 0 };
    try {
      this.guard(() => this.db.exec('BEGIN IMMEDIATE'));
      const now = new Date().toISOString();
      this.guard(() => before(now));
      const progress = this.writeProgress(run, scans, onProgress);
      let applied = 0;
      for (const scan of scans) {
        const base = applied;
        const each = progress && ((n: number) => progress(base + n));
        if (!scan.skipped)
          applied += await this.guardAsync(() => this.writer.apply(run, scan.collection, now, counts, each));
        this.guard(() => this.writer.finish(run, scan, now, counts));
      }
      this.guard(() => {
        if (counts.updated + counts.removed > 0) this.writer.collectOrphanContent();
        // Documents added, changed or gone changed where vectors are found (triggers on
        // `vector_rows`): the codes follow in the same transaction (docs/design.md §8.3).
        this.vectors.syncCodes();
      });
      const pending = this.failpoints.hit(updateFailpoint);
      if (pending !== undefined) {
        this.log.line(`failpoint ${updateFailpoint}: inside the write transaction, before COMMIT`);
        await pending;
      }
      this.guard(() => this.db.exec('COMMIT'));
    } catch (error) {
      if (this.db.isOpen && this.db.inTransaction) this.db.exec('ROLLBACK');
      throw error;
    } finally {
      this.writer.unstage(run);
    }
    return this.report(started, scans, counts, untouched);
  }

  /** The write phase's progress: files applied of those staged, when someone is listening. */
  private writeProgress(
    run: bigint,
    scans: CollectionScan[],
    onProgress: ProgressFn | undefined,
  ): ((applied: number) => void) | undefined {
    if (onProgress === undefined) return undefined;
    const total = this.guard(() => this.writer.stagedCount(run));
    const collection = scans.map((scan) => scan.collection).join(', ');
    onProgress({ stage: 'writing', collection, done: 0, total });
    return (applied) => onProgress({ stage: 'writing', collection, done: applied, total });
  }

  private report(started: number, scans: CollectionScan[], counts: WriteCounts, untouched: string[]): IndexReport {
    const ignored = noneIgnored();
    for (const scan of scans) addIgnored(ignored, scan.ignored, `${scan.collection}/`);
    const stopped = scans.find((scan) => scan.stopped);
    return {
      collections: scans.length,
      scanned: scans.reduce((sum, scan) => sum + scan.listed, 0),
      ...counts,
      errors: scans.flatMap((scan) => scan.errors),
      ignored,
      ...((stopped !== undefined || untouched.length > 0) && {
        stopped: {
          complete: scans.filter((scan) => !scan.stopped).map((scan) => scan.collection),
          ...(stopped !== undefined &&
            stopped.found > 0 && {
              partial: { collection: stopped.collection, read: stopped.found, listed: stopped.listed },
            }),
          untouched: [...(stopped !== undefined && stopped.found === 0 ? [stopped.collection] : []), ...untouched],
        },
      }),
      ms: Math.round(performance.now() - started),
    };
  }

  private get writer(): IndexWriter {
    this.writerCache ??= new IndexWriter(this.db);
    return this.writerCache;
  }

  private requireWritable(): void {
    if (this.readonly) throw new QmdError('INDEX_READ_ONLY', `The index ${this.path} was opened read-only`);
  }

  /** `guard` for the read calls, which may run in the query worker. */
  private async read<T>(work: () => Promise<T>): Promise<T> {
    if (this.closed) throw new QmdError('CLOSED', 'The index is closed');
    try {
      return await work();
    } catch (error) {
      throw fromSqliteError(error, this.path, this.busyTimeoutMs);
    }
  }

  /** `guard` for work that yields (the write phase). */
  private async guardAsync<T>(work: () => Promise<T>): Promise<T> {
    if (this.closed) throw new QmdError('CLOSED', 'The index is closed');
    try {
      return await work();
    } catch (error) {
      throw fromSqliteError(error, this.path, this.busyTimeoutMs);
    }
  }

  /** Refuses calls after close, and turns SQLite's errors into QmdErrors with codes. */
  private guard<T>(work: () => T): T {
    if (this.closed) throw new QmdError('CLOSED', 'The index is closed');
    try {
      return work();
    } catch (error) {
      throw fromSqliteError(error, this.path, this.busyTimeoutMs);
    }
  }
}
