/**
 * Errors a user can act on. The CLI prints `message` on one line (no stack unless `--debug`)
 * and exits non-zero; the MCP server returns it as an error result. Anything that is not a
 * QmdError is a bug and is reported as one.
 */
export type QmdErrorCode =
  | 'BAD_ARGUMENT'
  | 'NOT_FOUND'
  | 'AMBIGUOUS'
  | 'NO_SUCH_DIRECTORY'
  | 'UNKNOWN_COLLECTION'
  | 'COLLECTION_EXISTS'
  | 'OUTSIDE_COLLECTIONS'
  | 'INDEX_LOCKED'
  | 'INDEX_CORRUPT'
  | 'INDEX_READ_ONLY'
  | 'INDEX_MISSING'
  | 'INDEX_FULL'
  | 'INDEX_UNREADABLE'
  | 'MODEL_UNAVAILABLE'
  /** The model named is not the one the index's vectors were made with (they are never mixed). */
  | 'MODEL_MISMATCH'
  | 'UPDATE_FAILED'
  | 'ABORTED'
  | 'CLOSED';

export class QmdError extends Error {
  constructor(
    readonly code: QmdErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'QmdError';
  }
}

export function isQmdError(error: unknown): error is QmdError {
  return error instanceof QmdError;
}

/** The one way to print an error we caught: its message, or what it is when it is not an Error. */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
