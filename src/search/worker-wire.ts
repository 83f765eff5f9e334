import { QmdError, type QmdErrorCode } from '../errors.js';
import { sqliteCode, sqliteError } from '../store/sqlite.js';

/** What the query worker is started with (`new Worker(…, { workerData })`). */
export interface WorkerData {
  path: string;
  busyTimeoutMs: number;
  vectorExtension: boolean;
}

/** An error as it crosses from the worker: enough to rebuild the one the store maps. */
export interface WireError {
  message: string;
  /** A QmdError's code. */
  qmd?: QmdErrorCode;
  /** A SQLite error's name (`SQLITE_BUSY`…: `sqliteCode`), which `fromSqliteError` maps. */
  sqlite?: string;
}

/** The worker's messages: one answer per call (by id), or a line for the store's log. */
export type WorkerReply =
  | { id: number; value: unknown }
  | { id: number; error: WireError }
  | { log: 'line' | 'warn'; text: string };

export function wireError(error: unknown): WireError {
  if (error instanceof QmdError) return { message: error.message, qmd: error.code };
  const message = error instanceof Error ? error.message : String(error);
  const sqlite = sqliteCode(error);
  return sqlite === undefined ? { message } : { message, sqlite };
}

/** The error again, on the main thread: a QmdError, a SQLite error (`sqliteCode` names it), or a plain Error. */
export function fromWire(wire: WireError): Error {
  if (wire.qmd !== undefined) return new QmdError(wire.qmd, wire.message);
  if (wire.sqlite !== undefined) return sqliteError(wire.message, wire.sqlite);
  return new Error(wire.message);
}
