import { QmdError, type QmdErrorCode } from '../errors.js';

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
  /** node:sqlite's numeric code, which `fromSqliteError` names (`sqliteCode`). */
  errcode?: number;
}

/** The worker's messages: one answer per call (by id), or a line for the store's log. */
export type WorkerReply =
  | { id: number; value: unknown }
  | { id: number; error: WireError }
  | { log: 'line' | 'warn'; text: string };

export function wireError(error: unknown): WireError {
  if (error instanceof QmdError) return { message: error.message, qmd: error.code };
  const message = error instanceof Error ? error.message : String(error);
  const { code, errcode } = (typeof error === 'object' && error !== null ? error : {}) as {
    code?: unknown;
    errcode?: unknown;
  };
  return code === 'ERR_SQLITE_ERROR' && typeof errcode === 'number' ? { message, errcode } : { message };
}

/** The error again, on the main thread: a QmdError, node:sqlite's shape, or a plain Error. */
export function fromWire(wire: WireError): Error {
  if (wire.qmd !== undefined) return new QmdError(wire.qmd, wire.message);
  const error = new Error(wire.message);
  if (wire.errcode !== undefined) Object.assign(error, { code: 'ERR_SQLITE_ERROR', errcode: wire.errcode });
  return error;
}
