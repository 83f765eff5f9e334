import type { ModelChoice } from '../llm/index.js';
import type { SqliteReader } from './reader.js';
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
  QueryOptions,
  QueryResult,
  ReadOptions,
  SearchHit,
  SearchOptions,
  StatusReport,
  Store,
  SubSearch,
} from './types.js';
import type { SqliteWriter } from './writer.js';

/**
 * A `Store`: the reader and the writer of one index, built over the same parts (`compose.ts`),
 * each call handed to the side it belongs to. The CLI opens one (`openStore`); `qmd mcp` opens
 * only a reader (`openReader`).
 */
export class SqliteStore implements Store {
  readonly path: string;

  constructor(
    private readonly reader: SqliteReader,
    private readonly writer: SqliteWriter,
  ) {
    this.path = reader.path;
  }

  listCollections(): CollectionInfo[] {
    return this.reader.listCollections();
  }

  listContexts(): ContextInfo[] {
    return this.reader.listContexts();
  }

  listDocuments(collection: string, prefix?: string): DocumentEntry[] {
    return this.reader.listDocuments(collection, prefix);
  }

  verify(): void {
    this.reader.verify();
  }

  search(query: string, options?: SearchOptions): SearchHit[] {
    return this.reader.search(query, options);
  }

  query(query: string | readonly SubSearch[], options?: QueryOptions): Promise<QueryResult> {
    return this.reader.query(query, options);
  }

  vsearch(query: string, options?: SearchOptions): Promise<QueryResult> {
    return this.reader.vsearch(query, options);
  }

  get(ref: string, options?: ReadOptions): DocumentSlice {
    return this.reader.get(ref, options);
  }

  multiGet(pattern: string, options?: MultiGetOptions): Promise<MultiGetResult> {
    return this.reader.multiGet(pattern, options);
  }

  status(): StatusReport {
    return this.reader.status();
  }

  readStatus(options?: { signal?: AbortSignal }): Promise<StatusReport> {
    return this.reader.readStatus(options);
  }

  models(options?: { probe?: boolean }): Promise<ModelsReport> {
    return this.reader.models(options);
  }

  embeddingModel(): ModelChoice | undefined {
    return this.reader.embeddingModel();
  }

  addCollection(root: string, options?: Parameters<Store['addCollection']>[1]): Promise<IndexReport> {
    return this.writer.addCollection(root, options);
  }

  removeCollection(name: string): void {
    this.writer.removeCollection(name);
  }

  renameCollection(from: string, to: string): void {
    this.writer.renameCollection(from, to);
  }

  configureCollection(name: string, settings: Parameters<Store['configureCollection']>[1]): void {
    this.writer.configureCollection(name, settings);
  }

  update(options?: IndexOptions): Promise<IndexReport> {
    return this.writer.update(options);
  }

  cleanup(options?: { dryRun?: boolean }): CleanupReport {
    return this.writer.cleanup(options);
  }

  embed(options?: EmbedOptions): Promise<EmbedReport> {
    return this.writer.embed(options);
  }

  setContext(path: string, text: string, options?: { cwd?: string }): { context: ContextInfo; replaced: boolean } {
    return this.writer.setContext(path, text, options);
  }

  removeContext(path: string, options?: { cwd?: string }): ContextInfo {
    return this.writer.removeContext(path, options);
  }

  /** One teardown for both sides (`compose.ts`): the models, the query worker, the database. */
  close(): Promise<void> {
    return this.reader.close();
  }
}
