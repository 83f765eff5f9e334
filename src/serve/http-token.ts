import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import { QmdError } from '../errors.js';

/**
 * The bearer token of `qmd mcp --http`: `<index>.mcp-token`, beside the index (as the
 * daemon's pidfile is), created on first start with mode 0600 so only this user can read it.
 * Clients put it in `Authorization: Bearer …` (README: HTTP).
 */
export function tokenPath(indexPath: string): string {
  return `${indexPath}.mcp-token`;
}

/** 32 random bytes, base64url: 43 characters, no padding, safe in a header and a shell. */
function newToken(): string {
  return randomBytes(32).toString('base64url');
}

/**
 * The token in `file`, made now if there is none. Created as a temporary 0600 file and linked
 * into place, so two servers started at once agree on one token and nobody reads a half-written
 * one. An existing file must be a regular file of this user that no one else can read: a token
 * others can read protects nothing, so the server refuses to start and says how to fix it.
 */
export function loadOrCreateToken(file: string): { token: string; created: boolean } {
  const existing = readToken(file);
  if (existing !== undefined) return { token: existing, created: false };
  const temp = `${file}.${process.pid}.tmp`;
  try {
    fs.writeFileSync(temp, `${newToken()}\n`, { mode: 0o600, flag: 'wx' });
    fs.linkSync(temp, file);
    return { token: readToken(file) ?? '', created: true };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // Another server linked its token first: use that one.
    if (code === 'EEXIST') {
      const raced = readToken(file);
      if (raced !== undefined) return { token: raced, created: false };
    }
    throw new QmdError(
      'BAD_ARGUMENT',
      `cannot write the HTTP token file ${file} (${code ?? (error as Error).message}); or pass --token, or --no-auth`,
      {
        cause: error,
      },
    );
  } finally {
    fs.rmSync(temp, { force: true });
  }
}

function readToken(file: string): string | undefined {
  let stat: fs.Stats;
  try {
    stat = fs.lstatSync(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new QmdError(
      'BAD_ARGUMENT',
      `cannot read the HTTP token file ${file} (${(error as NodeJS.ErrnoException).code})`,
    );
  }
  if (!stat.isFile())
    throw new QmdError('BAD_ARGUMENT', `the HTTP token file ${file} is not a regular file; remove it`);
  const uid = process.getuid?.();
  if (uid !== undefined && stat.uid !== uid) {
    throw new QmdError(
      'BAD_ARGUMENT',
      `the HTTP token file ${file} belongs to another user (uid ${stat.uid}); remove it`,
    );
  }
  if ((stat.mode & 0o077) !== 0) {
    const mode = (stat.mode & 0o777).toString(8);
    throw new QmdError(
      'BAD_ARGUMENT',
      `the HTTP token file ${file} is readable by others (mode ${mode}): chmod 600 ${file}`,
    );
  }
  const token = fs.readFileSync(file, 'utf8').trim();
  if (!isUsableToken(token)) {
    throw new QmdError(
      'BAD_ARGUMENT',
      `the HTTP token file ${file} holds no usable token; remove it and a new one is made`,
    );
  }
  return token;
}

/** At least 16 visible ASCII characters with no space: something a header carries as it is. */
export function isUsableToken(token: string): boolean {
  return /^[\x21-\x7e]{16,}$/.test(token);
}
