import * as fs from 'node:fs';
import { QmdError } from '../errors.js';
import type { ModelChoice } from '../llm/index.js';
import { indexProblem } from '../store/index-problems.js';
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

/**
 * A reader for an index that does not exist yet: `qmd mcp` started before the first
 * `qmd collection add` (a client configured on a fresh machine must find a live server, not a
 * dead one that it will not restart until the person restarts the client). Nothing is created: until the file appears, every read says
 * `No index yet at PATH: qmd collection add DIR` (INDEX_MISSING), and the lists are empty.
 * Each call looks for the file (one `stat`), and the first that finds it opens the real reader
 * with `open` — quick_check, schema check and the query worker included, as at a server's
 * start — and hands every later call to it: the first `collection add` is served without a
 * restart. If the file is there but will not open (damaged, another program's, still locked),
 * that call gets the error and the next one tries again. `model` is the embedding model
 * searches would use until then (one named, else the default: there is no index to remember
 * one), what `embeddingModel()` reports; `models` is what `models()` reports meanwhile.
 */
export function awaitIndex(
  file: string,
  open: () => Reader,
  options: { model?: ModelChoice; models?: ModelsReport } = {},
): AwaitingIndex {
  return new AwaitingReader(file, open, options.model, options.models);
}

/** A reader awaiting its index, and a way to ask for the real one (the watcher waits for it). */
export interface AwaitingIndex extends Reader {
  /**
   * The real reader if the file is there and opens (opening it now if no call has yet), else
   * undefined; never throws. `qmd mcp` starts watching the index once this gives one.
   */
  openedNow(): Reader | undefined;
}

/**
 * The real reader behind one `awaitIndex` made, once the index exists (opening it if it just
 * appeared); undefined before, and for any other reader.
 */
export function awaitedReader(reader: Reader): Reader | undefined {
  return reader instanceof AwaitingReader ? reader.openedNow() : undefined;
}

class AwaitingReader implements AwaitingIndex {
  private opened: Reader | undefined;
  private closed = false;

  constructor(
    readonly path: string,
    private readonly open: () => Reader,
    private readonly model: ModelChoice | undefined,
    private readonly modelsReport: ModelsReport | undefined,
  ) {}

  /** The real store once the file exists, else undefined. */
  private current(): Reader | undefined {
    if (this.opened !== undefined) return this.opened;
    if (this.closed) throw new QmdError('CLOSED', 'The index is closed');
    if (!fs.existsSync(this.path)) return undefined;
    this.opened = this.open();
    return this.opened;
  }

  private ready(): Reader {
    const store = this.current();
    if (store === undefined) throw indexProblem.notYet(this.path);
    return store;
  }

  /**
   * The real store if it can be had now, without throwing: what the server's instructions, the
   * resource list and the shared server's status read. A file that is there but will not open
   * reads as no index here; the tool call that meets it reports why.
   */
  private quietly(): Reader | undefined {
    try {
      return this.current();
    } catch {
      return undefined;
    }
  }

  openedNow(): Reader | undefined {
    return this.quietly();
  }

  private listed<T>(read: (store: Reader) => T[]): T[] {
    const store = this.quietly();
    return store === undefined ? [] : read(store);
  }

  embeddingModel(): ModelChoice | undefined {
    const store = this.quietly();
    return store === undefined ? this.model : store.embeddingModel();
  }

  /** The real store's, once there is one; before, what was configured (nothing is loaded). */
  async models(options?: { probe?: boolean }): Promise<ModelsReport> {
    const store = this.quietly();
    if (store !== undefined) return store.models(options);
    if (this.modelsReport === undefined) throw indexProblem.notYet(this.path);
    return this.modelsReport;
  }

  listCollections(): CollectionInfo[] {
    return this.listed((store) => store.listCollections());
  }

  listContexts(): ContextInfo[] {
    return this.listed((store) => store.listContexts());
  }

  listDocuments(collection: string, prefix?: string): DocumentEntry[] {
    return this.ready().listDocuments(collection, prefix);
  }

  search(query: string, options?: SearchOptions): SearchHit[] {
    return this.ready().search(query, options);
  }

  query(query: string | readonly SubSearch[], options?: QueryOptions): Promise<QueryResult> {
    return this.later((store) => store.query(query, options));
  }

  vsearch(query: string, options?: SearchOptions): Promise<QueryResult> {
    return this.later((store) => store.vsearch(query, options));
  }

  get(ref: string, options?: ReadOptions): DocumentSlice {
    return this.ready().get(ref, options);
  }

  multiGet(pattern: string, options?: MultiGetOptions): Promise<MultiGetResult> {
    return this.later((store) => store.multiGet(pattern, options));
  }

  status(): StatusReport {
    return this.ready().status();
  }

  readStatus(options?: { signal?: AbortSignal }): Promise<StatusReport> {
    return this.later((store) => store.readStatus(options));
  }

  /** The real store's check once there is one (it was checked as it opened); nothing before. */
  verify(): void {
    this.opened?.verify();
  }

  /** Idempotent; after it no call opens the index, even if it has appeared. */
  async close(): Promise<void> {
    this.closed = true;
    await this.opened?.close();
  }

  /** An async call: its refusal is a rejection, as the real store's are. */
  private async later<T>(call: (store: Reader) => Promise<T>): Promise<T> {
    return call(this.ready());
  }
}
