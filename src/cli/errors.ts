import { errorMessage, isQmdError } from '../errors.js';
import type { Log } from '../log.js';
import { isUnsafePathError } from '../private-file.js';

/** Exit codes of one-shot commands: a user error (1) differs from a usage error (2) and a bug (70). */
export const EXIT_USER_ERROR = 1;
export const EXIT_USAGE = 2;
export const EXIT_INTERNAL = 70;

/**
 * One line on stderr, no stack unless `--debug`: `qmd: <what went wrong>`. Errors that are not
 * QmdErrors (or a refused path, `private-file.ts`) are bugs and say so.
 */
export function reportError(error: unknown, log: Log, debug: boolean): number {
  if (isQmdError(error) || isUnsafePathError(error)) {
    log.line(`qmd: ${error.message}`);
    if (debug && error.stack) log.line(error.stack);
    return EXIT_USER_ERROR;
  }
  const message = errorMessage(error);
  log.line(`qmd: internal error: ${message}${debug ? '' : ' (run with --debug for details)'}`);
  if (debug && error instanceof Error && error.stack) log.line(error.stack);
  return EXIT_INTERNAL;
}
