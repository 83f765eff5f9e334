import { QmdError } from '../errors.js';
import { fromSqliteError } from './sqlite-errors.js';

/**
 * What every call on an open index runs through, whoever makes it (the reader, the writer,
 * the indexing steps they hand work to): after `close()` a call is refused with CLOSED, and
 * SQLite's errors come out as QmdErrors with codes (`fromSqliteError`). A reader and a writer
 * on one connection share one guard, so closing either closes both.
 */
export class IndexGuard {
  private isClosed = false;

  constructor(
    readonly path: string,
    readonly busyTimeoutMs: number,
  ) {}

  get closed(): boolean {
    return this.isClosed;
  }

  /** From now on every call is refused (CLOSED). */
  close(): void {
    this.isClosed = true;
  }

  run<T>(work: () => T): T {
    if (this.isClosed) throw new QmdError('CLOSED', 'The index is closed');
    try {
      return work();
    } catch (error) {
      throw fromSqliteError(error, this.path, this.busyTimeoutMs);
    }
  }

  /** `run` for work that yields: a read in the query worker, the write phase of an update. */
  async runAsync<T>(work: () => Promise<T>): Promise<T> {
    if (this.isClosed) throw new QmdError('CLOSED', 'The index is closed');
    try {
      return await work();
    } catch (error) {
      throw fromSqliteError(error, this.path, this.busyTimeoutMs);
    }
  }

  /** A SQLite error as this index's QmdError (work that ran outside `run`, such as `embed`). */
  fromSqlite(error: unknown): unknown {
    return fromSqliteError(error, this.path, this.busyTimeoutMs);
  }
}
