import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import { QmdError } from '../errors.js';
import type { Log } from '../log.js';
import { type BearerAuth, createBearerAuth } from '../mcp/http/auth.js';
import { writePrivateFile } from '../private-file.js';

/**
 * The bearer token of `qmd mcp --http` (README: HTTP). It is never on a command line, where
 * every local user reads it (`ps`): it comes from a file (`<index>.mcp-token` by default, made on
 * first start; `--token-file FILE`), or from the `QMD_HTTP_TOKEN` variable (a process's
 * environment is readable by its own user only). The file is one line, the token and a newline;
 * `qmd mcp config` reads it with `readTokenFile` to write a client's configuration.
 */
export { tokenPath } from './token-path.js';

/** 32 random bytes, base64url: 43 characters, no padding, safe in a header and a shell. */
function newToken(): string {
  return randomBytes(32).toString('base64url');
}

/**
 * The token in `file`, made now if there is none. Created as a temporary 0600 file and linked
 * into place, so two servers started at once agree on one token and nobody reads a half-written
 * one. An existing file must pass `readTokenFile`'s checks.
 */
export function loadOrCreateToken(file: string): { token: string; created: boolean } {
  const existing = readTokenFile(file);
  if (existing !== undefined) return { token: existing, created: false };
  const temp = `${file}.${process.pid}.tmp`;
  try {
    writePrivateFile(temp, `${newToken()}\n`, 'exclusive');
    fs.linkSync(temp, file);
    return { token: readTokenFile(file) ?? '', created: true };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // Another server linked its token first: use that one.
    if (code === 'EEXIST') {
      const raced = readTokenFile(file);
      if (raced !== undefined) return { token: raced, created: false };
    }
    throw new QmdError(
      'BAD_ARGUMENT',
      `cannot write the HTTP token file ${file} (${code ?? (error as Error).message}); pass --token-file FILE, or --no-auth`,
      { cause: error },
    );
  } finally {
    fs.rmSync(temp, { force: true });
  }
}

/**
 * The token in `file`, or undefined when there is no such file. The file must be a regular
 * file of this user that no one else can read (a token others can read protects nothing) and
 * hold a usable token; otherwise a QmdError says what to do.
 */
export function readTokenFile(file: string): string | undefined {
  const stat = tokenFileStat(file);
  if (stat === undefined) return undefined;
  const problem = unsafeTokenFile(file, stat);
  if (problem !== undefined) throw new QmdError('BAD_ARGUMENT', problem);
  const token = fs.readFileSync(file, 'utf8').trim();
  if (!isUsableToken(token)) {
    throw new QmdError(
      'BAD_ARGUMENT',
      `the HTTP token file ${file} holds no usable token (at least 16 visible characters, no spaces)`,
    );
  }
  return token;
}

/** At least 16 visible ASCII characters with no space: something a header carries as it is. */
export function isUsableToken(token: string): boolean {
  return /^[\x21-\x7e]{16,}$/.test(token);
}

function tokenFileStat(file: string): fs.BigIntStats | undefined {
  try {
    return fs.lstatSync(file, { bigint: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new QmdError(
      'BAD_ARGUMENT',
      `cannot read the HTTP token file ${file} (${(error as NodeJS.ErrnoException).code})`,
    );
  }
}

function unsafeTokenFile(file: string, stat: fs.BigIntStats): string | undefined {
  if (!stat.isFile()) return `the HTTP token file ${file} is not a regular file; remove it`;
  const uid = process.getuid?.();
  if (uid !== undefined && Number(stat.uid) !== uid) {
    return `the HTTP token file ${file} belongs to another user (uid ${stat.uid}); remove it`;
  }
  if ((stat.mode & 0o077n) !== 0n) {
    const mode = (stat.mode & 0o777n).toString(8);
    return `the HTTP token file ${file} is readable by others (mode ${mode}): chmod 600 ${file}`;
  }
  return undefined;
}

/**
 * Bearer access checked against the token in `file` as it is now: each request stats the file
 * (about 10–13 µs, `bench/experiments/token-recheck.mjs`, against 31–35 µs to read it and
 * 6–12 µs for the SHA-256 comparison every request pays anyway) and reads it again when it
 * changed, or when a second has passed since the last read (a rewrite in place within the file
 * system's timestamp granularity keeps size and times). So a token rewritten on disk takes
 * effect at once, at worst within a second, with no restart. While the file is gone, unsafe or
 * unusable, every request is refused: the old token never outlives its file. Each change of
 * outcome is one line on the log (never the token).
 */
export function fileTokenAuth(file: string, log: Log, clock: () => number = () => performance.now()): BearerAuth {
  let seen = '';
  let readAt = Number.NEGATIVE_INFINITY;
  /** The token in use, or why every request is refused. */
  let current: { token: string; auth: BearerAuth } | { refused: string } = { refused: 'not read yet' };
  const describe = (state: typeof current) => ('token' in state ? `token:${state.token}` : `refused:${state.refused}`);
  const refresh = (quiet = false): void => {
    let stat: fs.BigIntStats | undefined;
    let unreadable: string | undefined;
    try {
      stat = tokenFileStat(file);
    } catch (error) {
      unreadable = (error as Error).message;
    }
    const now = unreadable ?? identity(stat);
    if (now === seen && clock() - readAt < REREAD_MS) return;
    seen = now;
    readAt = clock();
    let next: typeof current;
    if (unreadable !== undefined) next = { refused: unreadable };
    else if (stat === undefined) next = { refused: `the HTTP token file ${file} is gone` };
    else {
      try {
        const token = readTokenFile(file) ?? '';
        next = 'token' in current && current.token === token ? current : { token, auth: createBearerAuth(token) };
      } catch (error) {
        next = { refused: (error as Error).message };
      }
    }
    const changed = describe(next) !== describe(current);
    current = next;
    if (quiet || !changed) return;
    if ('refused' in current) log.warn(`${current.refused}: every request is refused until it is fixed`);
    else log.line(`HTTP access: the token file ${file} changed; its new token is in use`);
  };
  refresh(true);
  return {
    check(authorization) {
      refresh();
      if ('refused' in current) return "Unauthorized: the server's token file is missing or unusable (see its log)";
      return current.auth.check(authorization);
    },
  };
}

/** The longest a token file is trusted unread, whatever its times say. */
const REREAD_MS = 1000;

/** What tells one version of the file from another: a rewrite in place or a new file renamed over it. */
function identity(stat: fs.BigIntStats | undefined): string {
  if (stat === undefined) return 'none';
  return `${stat.dev}:${stat.ino}:${stat.size}:${stat.mtimeNs}:${stat.ctimeNs}:${stat.mode}:${stat.uid}`;
}
