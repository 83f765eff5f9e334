import { QmdError } from '../errors.js';

/**
 * Document references as clients send them. The store is the authority on what may be read
 * (only indexed documents); these checks refuse, before it is asked, what can never name an
 * indexed document, so a traversal attempt gets the same answer whichever store is behind.
 */

const SCHEME = 'qmd://';

/** `qmd://notes/a%20b.md` → `notes/a b.md`; anything else is returned as it is. */
export function stripScheme(ref: string): string {
  return ref.startsWith(SCHEME) ? decodePath(ref.slice(SCHEME.length)) : ref;
}

/** Percent-decodes each segment; a malformed escape is the client's error, not ours. */
export function decodePath(path: string): string {
  try {
    return path
      .split('/')
      .map((segment) => decodeURIComponent(segment))
      .join('/');
  } catch {
    throw new QmdError('BAD_ARGUMENT', `malformed percent-encoding in "${path}"`);
  }
}

/** The resource URI of an indexed document: segments encoded, slashes kept (as the peer does). */
export function documentUri(file: string): string {
  return SCHEME + file.split('/').map(encodeURIComponent).join('/');
}

/**
 * Refuses absolute paths, `..` segments, backslashes, NUL and other URI schemes in a reference,
 * glob or list item. `#docid` references pass (the store resolves them).
 */
export function assertInsideCollections(ref: string): void {
  const trimmed = ref.trim();
  if (trimmed.startsWith('#')) return;
  const outside =
    trimmed.includes('\0') ||
    trimmed.includes('\\') ||
    trimmed.startsWith('/') ||
    /^[A-Za-z]:[\\/]/.test(trimmed) ||
    trimmed.split('/').includes('..') ||
    /^[a-z][a-z0-9+.-]*:\/\//i.test(trimmed);
  if (outside) {
    throw new QmdError(
      'OUTSIDE_COLLECTIONS',
      `"${trimmed}" is not inside an indexed collection: use collection/path.md or #docid`,
    );
  }
}

/** `notes/a.md:120` → `{ ref: 'notes/a.md', line: 120 }`: the peer's `get` accepts that form. */
export function splitLineSuffix(ref: string): { ref: string; line: number } | undefined {
  const match = /^(.+):([1-9]\d{0,8})$/.exec(ref);
  if (match?.[1] === undefined || match[2] === undefined) return undefined;
  return { ref: match[1], line: Number(match[2]) };
}
