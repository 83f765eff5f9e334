import { QmdError } from '../errors.js';
import { embedIndex } from '../indexing/embed.js';
import { IndexWriter } from '../indexing/index-writer.js';
import { defaultMask, indexNewCollection, type UpdateParts, updateCollections } from '../indexing/update.js';
import { type CollectionSettings, checkUpdateCommand, realDirectory } from '../store/collections.js';
import { resolvePlace } from '../store/contexts.js';
import { cleanupIndex } from '../store/maintenance.js';
import { checkCollectionName, checkMask, nameFromDirectory } from '../store/paths.js';
import type { IndexParts } from './compose.js';
import type {
  CleanupReport,
  ContextInfo,
  EmbedOptions,
  EmbedReport,
  IndexOptions,
  IndexReport,
  Writer,
} from './types.js';

/**
 * The write side of the index: what `qmd collection`, `update`, `embed`, `context` and
 * `cleanup` do. Each call checks its arguments and that the index is writable, then hands the
 * work to its room: `src/indexing/` for what gets in (`update.ts`, `embed.ts`), `src/store/`
 * for the rows it changes. It is given its parts finished (`compose.ts`) and builds only the
 * staging writer, on the first call that indexes.
 */
export class SqliteWriter implements Writer {
  readonly path: string;
  private indexWriter: IndexWriter | undefined;

  constructor(private readonly parts: IndexParts) {
    this.path = parts.path;
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
    const { guard, collections } = this.parts;
    const { real, name, mask, settings } = guard.run(() => {
      this.requireWritable();
      const real = realDirectory(root);
      const mask = checkMask(options.mask ?? defaultMask);
      const name =
        options.name === undefined ? collections.freeName(nameFromDirectory(real)) : checkCollectionName(options.name);
      collections.refuseDuplicate(name, real);
      const settings: CollectionSettings = {
        ignore: (options.ignore ?? []).map(checkMask),
        ...(options.update !== undefined && { update: checkUpdateCommand(options.update) }),
        ...(options.includeByDefault !== undefined && { includeByDefault: options.includeByDefault }),
      };
      return { real, name, mask, settings };
    });
    const target = { name, root: real, mask, ignore: settings.ignore ?? [] };
    return indexNewCollection(this.updateParts(), target, options, (now) => {
      // Checked again under the write lock: another process may have added it meanwhile.
      collections.refuseDuplicate(name, real);
      collections.add({ name, root: real, mask }, settings, now);
    });
  }

  removeCollection(name: string): void {
    const { guard, db, collections, vectors } = this.parts;
    guard.run(() => {
      this.requireWritable();
      db.transaction(() => {
        collections.delete(name);
        this.writer().collectOrphanContent();
        // Its documents' vector rows went by trigger; their codes go before the commit.
        vectors.syncCodes();
      });
    });
  }

  renameCollection(from: string, to: string): void {
    const { guard, db, collections, vectors } = this.parts;
    guard.run(() => {
      this.requireWritable();
      const name = checkCollectionName(to);
      db.transaction(() => {
        collections.rename(from, name);
        vectors.syncCodes();
      });
    });
  }

  configureCollection(
    name: string,
    settings: { update?: string | null; includeByDefault?: boolean; mask?: string },
  ): void {
    const { guard, db, collections } = this.parts;
    guard.run(() => {
      this.requireWritable();
      const mask = settings.mask === undefined ? undefined : checkMask(settings.mask);
      const update =
        settings.update === undefined || settings.update === null
          ? settings.update
          : checkUpdateCommand(settings.update);
      db.transaction(() =>
        collections.configure(name, {
          ...(update !== undefined && { update }),
          ...(settings.includeByDefault !== undefined && { includeByDefault: settings.includeByDefault }),
          ...(mask !== undefined && { mask }),
        }),
      );
    });
  }

  cleanup(options: { dryRun?: boolean } = {}): CleanupReport {
    const { guard, db, vectors, path } = this.parts;
    return guard.run(() => {
      if (!options.dryRun) this.requireWritable();
      return cleanupIndex(db, vectors, path, options);
    });
  }

  async update(options: IndexOptions = {}): Promise<IndexReport> {
    const targets = this.parts.guard.run(() => {
      this.requireWritable();
      if (options.signal?.aborted) throw new QmdError('ABORTED', 'Indexing was cancelled; the index is unchanged');
      return this.parts.collections.all();
    });
    return updateCollections(this.updateParts(), targets, options);
  }

  embed(options: EmbedOptions = {}): Promise<EmbedReport> {
    const { guard, db, vectors, model } = this.parts;
    guard.run(() => this.requireWritable());
    return embedIndex(db, vectors, model, options).catch((error: unknown) => {
      throw guard.closed && !(error instanceof QmdError)
        ? new QmdError('CLOSED', 'The index is closed')
        : guard.fromSqlite(error);
    });
  }

  setContext(path: string, text: string, options: { cwd?: string } = {}): { context: ContextInfo; replaced: boolean } {
    const { guard, collections, contexts } = this.parts;
    return guard.run(() => {
      this.requireWritable();
      return contexts.set(resolvePlace(path, collections.all(), options.cwd ?? process.cwd()), text);
    });
  }

  removeContext(path: string, options: { cwd?: string } = {}): ContextInfo {
    const { guard, collections, contexts } = this.parts;
    return guard.run(() => {
      this.requireWritable();
      return contexts.delete(resolvePlace(path, collections.all(), options.cwd ?? process.cwd()));
    });
  }

  close(): Promise<void> {
    return this.parts.close();
  }

  private updateParts(): UpdateParts {
    const { db, guard, vectors, failpoints, log } = this.parts;
    return { db, guard, vectors, failpoints, log, writer: () => this.writer() };
  }

  /** The staging writer, made on the first call that needs it (its TEMP tables are this connection's). */
  private writer(): IndexWriter {
    this.indexWriter ??= new IndexWriter(this.parts.db);
    return this.indexWriter;
  }

  private requireWritable(): void {
    if (this.parts.readonly) throw new QmdError('INDEX_READ_ONLY', `The index ${this.path} was opened read-only`);
  }
}
