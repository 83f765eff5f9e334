import { QmdError } from '../errors.js';

/** A document reference after validation: an id, or a collection and a relative path. */
export type DocumentRef = { kind: 'docid'; docid: string } | { kind: 'path'; collection: string; path: string };

const docidPattern = /^#([0-9a-f]{6,64})$/i;
const percentEscape = /%[0-9a-f]{2}/i;

/**
 * Validates what `get` receives: `collection/relative/path.md`, `#docid`, or
 * `qmd://collection/relative/path.md` (the MCP resource form, percent-decoded once as a URI
 * is). Nothing here touches the filesystem: a valid reference is only ever looked up in the
 * index. What could mean "somewhere else" is refused outright with a clear error rather than
 * reported as not found:
 * - absolute paths (`/etc/passwd`, `C:\…`, `~/…`) and `..` segments: OUTSIDE_COLLECTIONS;
 * - `..` hidden behind percent escapes (`%2e%2e/`): OUTSIDE_COLLECTIONS (a plain reference
 *   is otherwise taken literally: a file may be called `100%.md`);
 * - empty or `.` segments, backslashes, NUL: BAD_ARGUMENT (not a path `query` returns).
 */
export function parseRef(input: string): DocumentRef {
  let ref = input.trim();
  if (ref === '') throw new QmdError('BAD_ARGUMENT', 'Empty document reference: use collection/path.md or #docid');
  if (ref.startsWith('#')) {
    const id = docidPattern.exec(ref)?.[1];
    if (id === undefined) throw new QmdError('BAD_ARGUMENT', `Invalid docid "${ref}": expected # and hex digits`);
    return { kind: 'docid', docid: id.toLowerCase() };
  }
  if (/^qmd:\/\//i.test(ref)) {
    try {
      ref = decodeURIComponent(ref.slice('qmd://'.length));
    } catch {
      throw new QmdError('BAD_ARGUMENT', `Invalid qmd:// URI "${input}": bad percent-encoding`);
    }
    if (ref.startsWith('#')) return parseRef(ref);
  }
  if (ref.includes('\0')) throw new QmdError('BAD_ARGUMENT', 'A document reference cannot contain NUL');
  refuseOutside(ref, input);
  if (percentEscape.test(ref)) {
    let decoded: string | undefined;
    try {
      decoded = decodeURIComponent(ref);
    } catch {
      decoded = undefined;
    }
    if (decoded !== undefined) refuseOutside(decoded, input);
  }
  if (ref.includes('\\')) throw new QmdError('BAD_ARGUMENT', `Use forward slashes in "${input}"`);
  const segments = ref.split('/');
  if (segments.some((segment) => segment === '' || segment === '.')) {
    throw new QmdError(
      'BAD_ARGUMENT',
      `"${input}" is not a document path: use collection/path.md as search returns it`,
    );
  }
  const [collection, ...rest] = segments;
  if (collection === undefined || rest.length === 0) {
    throw new QmdError('BAD_ARGUMENT', `"${input}" has no collection: use collection/path.md or #docid`);
  }
  return { kind: 'path', collection, path: rest.join('/') };
}

function refuseOutside(ref: string, input: string): void {
  const absolute = ref.startsWith('/') || ref.startsWith('\\') || ref.startsWith('~') || /^[A-Za-z]:/.test(ref);
  const climbs = ref.split(/[\\/]/).some((segment) => segment.trim() === '..');
  if (absolute || climbs) {
    throw new QmdError(
      'OUTSIDE_COLLECTIONS',
      `"${input}" is outside the indexed collections: only indexed documents can be read (collection/path.md or #docid)`,
    );
  }
}
