import * as os from 'node:os';
import { QmdError } from '../errors.js';

/** A collection as references see it: its name and its root (absolute, real path). */
export interface CollectionRoot {
  name: string;
  root: string;
}

/** A place in one collection: the collection's name and a path relative to its root. */
export interface InCollection {
  collection: string;
  path: string;
}

/**
 * A reference the authority let through. Nothing in it can name a file outside the
 * collections, and it is only ever looked up in the index (see `lookup.ts`):
 * - `docid`: `#1a2b3c4d`;
 * - `rooted`: an absolute path inside a collection's root, as the places it can be (deepest
 *   root first: collections may nest);
 * - `relative`: `collection/path.md`, a path inside a collection without its name
 *   (`readme.md`, `notes/a.md`), a suffix of one (`meeting-2024-01.md`), or a glob of those.
 */
export type DocumentRef =
  | { kind: 'docid'; docid: string }
  | { kind: 'rooted'; places: InCollection[] }
  | { kind: 'relative'; path: string };

const docidPattern = /^#([0-9a-f]{6,64})$/i;
const percentEscape = /%[0-9a-f]{2}/i;
const uriScheme = /^([a-z][a-z0-9+.-]*):\/\//i;
const windowsDrive = /^[A-Za-z]:/;

/**
 * THE authority on what a document reference may name: `get`, `multi_get` (each
 * item and each glob), the `qmd://` resource read and the CLI all come through here, so a
 * traversal attempt gets the same answer wherever it is sent. Nothing here touches the
 * filesystem; what it lets through is looked up in the index, which holds only what a scan
 * found inside a collection root (symlinks that leave the root are never indexed).
 *
 * Refused as OUTSIDE_COLLECTIONS, rather than reported as not found:
 * - a `..` segment anywhere (also spaced, ` .. `, or behind percent escapes, `%2e%2e`);
 * - an absolute path (`/…`, `~/…`) that is not inside a collection's root; `~user/…`;
 * - Windows paths (`C:\…`, `\\server\…`) and URI schemes other than `qmd://` (`file://`).
 * Refused as BAD_ARGUMENT (not a path `query` returns): empty input, NUL, backslashes, empty
 * or `.` segments, an invalid `#docid`, a malformed `qmd://` escape.
 *
 * `qmd://…` is percent-decoded once, as a URI is; a plain reference is taken literally (a
 * file may be called `100%.md`), except that its decoded form must not climb either.
 */
export function parseRef(input: string, roots: readonly CollectionRoot[], home = os.homedir()): DocumentRef {
  let ref = input.trim();
  if (ref === '') throw new QmdError('BAD_ARGUMENT', 'Empty document reference: use collection/path.md or #docid');
  if (uriScheme.exec(ref)?.[1]?.toLowerCase() === 'qmd') ref = decodeUri(ref.slice('qmd://'.length), input);
  if (ref.startsWith('#')) return docid(ref);
  if (ref.includes('\0')) throw new QmdError('BAD_ARGUMENT', 'A document reference cannot contain NUL');
  if (climbs(ref) || climbs(decodedOrSelf(ref))) throw outside(input);
  if (windowsDrive.test(ref) || ref.startsWith('\\') || uriScheme.test(ref)) throw outside(input);
  if (ref.includes('\\')) throw new QmdError('BAD_ARGUMENT', `Use forward slashes in "${input}"`);
  if (ref === '~' || ref.startsWith('~/')) ref = home + ref.slice(1);
  else if (ref.startsWith('~')) throw outside(input);
  if (ref.startsWith('/')) return { kind: 'rooted', places: placesOf(ref, roots, input) };
  checkSegments(ref, input);
  return { kind: 'relative', path: ref };
}

/**
 * True when a `/`- or `\`-separated text has a `..` segment. Segments are trimmed: ` .. ` is
 * not the parent on any filesystem, but nothing indexed is called that, and refusing it
 * leaves no doubt. Collection masks are checked with it too (`paths.ts`).
 */
export function climbs(text: string): boolean {
  return text.split(/[\\/]/).some((segment) => segment.trim() === '..');
}

/**
 * `notes/a.md:120` → from line 120; `notes/a.md:120:40` → 40 lines from line 120 (the peer's
 * `get` forms). Undefined when there is no such suffix.
 */
export function splitLineRange(ref: string): { ref: string; fromLine: number; maxLines?: number } | undefined {
  const match = /^(.+?):(\d{1,9})(?::(\d{1,9}))?$/.exec(ref.trim());
  if (match?.[1] === undefined || match[2] === undefined) return undefined;
  const fromLine = Number(match[2]);
  return match[3] === undefined ? { ref: match[1], fromLine } : { ref: match[1], fromLine, maxLines: Number(match[3]) };
}

function docid(ref: string): DocumentRef {
  const id = docidPattern.exec(ref)?.[1];
  if (id === undefined) throw new QmdError('BAD_ARGUMENT', `Invalid docid "${ref}": expected # and hex digits`);
  return { kind: 'docid', docid: id.toLowerCase() };
}

function decodeUri(text: string, input: string): string {
  try {
    return decodeURIComponent(text).trim();
  } catch {
    throw new QmdError('BAD_ARGUMENT', `Invalid qmd:// URI "${input}": bad percent-encoding`);
  }
}

/** `ref` percent-decoded, or as it is when it has no escape or a malformed one. */
export function decodedOrSelf(ref: string): string {
  if (!percentEscape.test(ref)) return ref;
  try {
    return decodeURIComponent(ref);
  } catch {
    return ref;
  }
}

/** Where an absolute path is in the collections, deepest root first; refused if nowhere. */
function placesOf(absolute: string, roots: readonly CollectionRoot[], input: string): InCollection[] {
  const places: Array<InCollection & { depth: number }> = [];
  for (const { name, root } of roots) {
    const prefix = root.endsWith('/') ? root : `${root}/`;
    if (absolute === root || absolute === prefix) {
      throw new QmdError('BAD_ARGUMENT', `"${input}" is the root of collection ${name}, not a document`);
    }
    if (absolute.startsWith(prefix))
      places.push({ collection: name, path: absolute.slice(prefix.length), depth: prefix.length });
  }
  if (places.length === 0) throw outside(input);
  for (const place of places) checkSegments(place.path, input);
  return places.sort((a, b) => b.depth - a.depth).map(({ collection, path }) => ({ collection, path }));
}

function checkSegments(path: string, input: string): void {
  if (path.split('/').some((segment) => segment === '' || segment === '.')) {
    throw new QmdError(
      'BAD_ARGUMENT',
      `"${input}" is not a document path: use collection/path.md as query returns it (no empty or "." segments)`,
    );
  }
}

function outside(input: string): QmdError {
  return new QmdError(
    'OUTSIDE_COLLECTIONS',
    `"${input}" is outside the indexed collections: only indexed documents can be read ` +
      '(collection/path.md, #docid, or a path inside a collection folder)',
  );
}
