import picomatch from 'picomatch';
import { QmdError } from '../errors.js';
import { type CollectionRoot, type DocumentRef, type InCollection, parseRef } from './refs.js';
import type { Sqlite } from './sqlite.js';
import { closestFiles } from './suggest.js';

export interface DocumentRow {
  collection: string;
  path: string;
  docid: string;
  title: string;
  /** The SHA-256 its text was indexed under (`src/text/content-hash.ts`). */
  hash: string;
  body: string;
}

/**
 * Rows that matched. Found by a qmd 2.x docid (`byContentHash`), only the first few are read:
 * `total` says how many there are in all.
 */
export type Matches = DocumentRow[] & { byContentHash?: true; total?: number };

const columns =
  'd.collection, d.path, d.docid, d.title, d.hash, c.body FROM documents d JOIN content c ON c.hash = d.hash';
const bareDocid = /^[0-9a-f]{6,64}$/i;
/** Candidates named in an ambiguity error: enough to choose from, short enough for one line. */
const MAX_LISTED_CANDIDATES = 5;
/**
 * The notes whose content hash starts with the first parameter (the second is it followed by
 * `g`, which sorts after every hex digit): a range the `documents_by_hash` index answers
 * (`test/store/peer-docids.test.ts` checks the plan), as many as an ambiguity error lists, and one.
 */
export const BY_CONTENT_HASH_SQL = `SELECT ${columns} WHERE d.hash >= ? AND d.hash < ? ORDER BY d.collection, d.path LIMIT ${MAX_LISTED_CANDIDATES + 1}`;

/**
 * References → indexed documents, after `parseRef` (the authority) let them
 * through. Every answer is a row of the index: nothing here reads a file.
 *
 * A relative reference is tried, in order, as `collection/path`; as a path inside a
 * collection, in any collection (`readme.md`, `notes/a.md`); as a path suffix that starts at
 * a `/` (`meeting-2024-01.md` → `2024/meeting-2024-01.md`, never `a.md` → `data.md`). The
 * first form that matches decides; two matches of one form are an AMBIGUOUS error that
 * lists them, never a silent pick. Last, hex digits alone are tried as a docid. A miss is
 * NOT_FOUND with the closest indexed paths.
 *
 * A docid is ours (`#1a2b3c4d`, assigned once when a file is first indexed: `index-writer.ts`)
 * or qmd 2.x's (`#40271e`: the first 6 hex digits of the note's content hash, which this index
 * keeps as `documents.hash`): ours is tried first, exactly; then the digits as the start of a
 * content hash, through the `documents_by_hash` index (a range, `hash >= p AND hash < p || 'g'`,
 * never a LIKE). Several notes with that start (two with the same text, or hashes that share 6
 * digits: docs/design.md §6) are an AMBIGUOUS error that lists them with their own docids.
 */
export class DocumentLookup {
  private readonly byPath;
  private readonly byDocid;
  private readonly byHashStart;
  private readonly countHashStart;
  private readonly byRelativePath;
  private readonly bySuffix;
  private readonly names;
  private readonly collectionRoots;

  constructor(db: Sqlite) {
    this.byPath = db.prepare<[string, string], DocumentRow>(`SELECT ${columns} WHERE d.collection = ? AND d.path = ?`);
    this.byDocid = db.prepare<[string], DocumentRow>(`SELECT ${columns} WHERE d.docid = ?`);
    this.byHashStart = db.prepare<[string, string], DocumentRow>(BY_CONTENT_HASH_SQL);
    this.countHashStart = db.column<[string, string], number>(
      'SELECT count(*) FROM documents WHERE hash >= ? AND hash < ?',
    );
    this.byRelativePath = db.prepare<[string], DocumentRow>(`SELECT ${columns} WHERE d.path = ? ORDER BY d.collection`);
    this.bySuffix = db.prepare<{ suffix: string }, DocumentRow>(
      `SELECT ${columns} WHERE length(d.path) > length(@suffix)
         AND substr(d.path, length(d.path) - length(@suffix) + 1) = @suffix
       ORDER BY d.collection, d.path`,
    );
    this.names = db.prepare<[], InCollection>('SELECT collection, path FROM documents ORDER BY collection, path');
    this.collectionRoots = db.prepare<[], CollectionRoot>('SELECT name, root FROM collections');
  }

  /** `parseRef` against this index's collection roots. */
  parse(input: string): DocumentRef {
    return parseRef(input, this.collectionRoots.all());
  }

  /** The one document `input` names; NOT_FOUND (with suggestions) or AMBIGUOUS otherwise. */
  find(input: string): DocumentRow {
    const ref = this.parse(input);
    return this.only(this.matches(ref), ref, input);
  }

  /** What a parsed reference matches, at the first form that matches anything (see above). */
  matches(ref: DocumentRef): Matches {
    if (ref.kind === 'docid') return this.byEitherDocid(ref.docid);
    if (ref.kind === 'rooted') {
      for (const place of ref.places) {
        const row = this.byPath.get(place.collection, place.path);
        if (row !== undefined) return [row];
      }
      return [];
    }
    const slash = ref.path.indexOf('/');
    if (slash > 0) {
      const row = this.byPath.get(ref.path.slice(0, slash), ref.path.slice(slash + 1));
      if (row !== undefined) return [row];
    }
    const exact = this.byRelativePath.all(ref.path);
    if (exact.length > 0) return exact;
    const suffixed = this.bySuffix.all({ suffix: `/${ref.path}` });
    if (suffixed.length > 0 || !bareDocid.test(ref.path)) return suffixed;
    // Last: a docid without its `#`, as qmd 2.8 takes it (prompts often drop the `#`).
    return this.byEitherDocid(ref.path.toLowerCase());
  }

  /** Ours exactly, else qmd 2.x's: the notes whose content hash starts with `hex` (lower case). */
  private byEitherDocid(hex: string): Matches {
    const ours = this.byDocid.get(hex);
    if (ours !== undefined) return [ours];
    const end = `${hex}g`; // after every hex digit: the range is exactly the hashes that start with `hex`
    const rows: Matches = Object.assign(this.byHashStart.all(hex, end), { byContentHash: true as const });
    if (rows.length > MAX_LISTED_CANDIDATES) rows.total = this.countHashStart.get(hex, end) ?? rows.length;
    return rows;
  }

  /** The single row of `rows`, or the error that says why there is not one. */
  only(rows: Matches, ref: DocumentRef, input: string): DocumentRow {
    const [first] = rows;
    if (first !== undefined && rows.length === 1) return first;
    if (rows.length > 1) throw rows.byContentHash ? ambiguousDocid(input, rows) : ambiguous(input, rows);
    throw this.notFound(ref, input);
  }

  /** True when the reference is a glob (`*`, `?`, `[…]`, `{a,b}`, …) rather than one document. */
  isGlob(ref: DocumentRef): boolean {
    if (ref.kind === 'docid') return false;
    const paths = ref.kind === 'rooted' ? ref.places.map((place) => place.path) : [ref.path];
    return paths.some((path) => picomatch.scan(path).isGlob);
  }

  /**
   * The documents a glob matches, in collection/path order. A relative glob is matched both
   * against `collection/path` and against the path inside each collection, so `*.md` and
   * `**\/2025-*.md` reach every collection and `notes/*.md` still means collection notes.
   */
  glob(ref: DocumentRef): DocumentRow[] {
    const tests: Array<(name: InCollection) => boolean> = [];
    if (ref.kind === 'relative') {
      const isMatch = picomatch(ref.path, { dot: true });
      tests.push((name) => isMatch(`${name.collection}/${name.path}`) || isMatch(name.path));
    } else if (ref.kind === 'rooted') {
      for (const place of ref.places) {
        const isMatch = picomatch(place.path, { dot: true });
        tests.push((name) => name.collection === place.collection && isMatch(name.path));
      }
    }
    const rows: DocumentRow[] = [];
    for (const name of this.names.all()) {
      if (!tests.some((test) => test(name))) continue;
      const row = this.byPath.get(name.collection, name.path);
      if (row !== undefined) rows.push(row);
    }
    return rows;
  }

  private notFound(ref: DocumentRef, input: string): QmdError {
    if (ref.kind === 'docid') return new QmdError('NOT_FOUND', docidNotFound(ref.docid));
    const wanted = ref.kind === 'rooted' ? `${ref.places[0]?.collection}/${ref.places[0]?.path}` : ref.path;
    const files = this.names.all().map((name) => `${name.collection}/${name.path}`);
    const close = closestFiles(wanted, files);
    const hint = close.length > 0 ? `. Did you mean: ${close.join(', ')}?` : '';
    return new QmdError('NOT_FOUND', `No indexed document "${input}"${hint}`);
  }
}

/**
 * Our docids have 8 hex digits or more; 6 or 7 can only be qmd 2.x's, and the line says what
 * they were looked up as, and why one saved a while ago may name nothing now.
 */
function docidNotFound(hex: string): string {
  if (hex.length >= 8) return `No indexed document has the id #${hex}`;
  return (
    `No indexed document has the id #${hex}: looked up as a qmd 2.x docid, no indexed note's content hash ` +
    'starts with it (it changes when a note is edited; search again for the note)'
  );
}

function ambiguous(input: string, rows: Matches): QmdError {
  const total = rows.total ?? rows.length;
  const listed = rows.slice(0, MAX_LISTED_CANDIDATES).map((row) => `${row.collection}/${row.path}`);
  const more = total > listed.length ? ` and ${total - listed.length} more` : '';
  return new QmdError(
    'AMBIGUOUS',
    `"${input}" matches ${total} indexed documents: ${listed.join(', ')}${more}; give one of these paths`,
  );
}

/** A qmd 2.x docid several notes share: each with its path and our docid, either of which names it alone. */
function ambiguousDocid(input: string, rows: Matches): QmdError {
  const total = rows.total ?? rows.length;
  const listed = rows.slice(0, MAX_LISTED_CANDIDATES).map((row) => `${row.collection}/${row.path} (#${row.docid})`);
  const more = total > listed.length ? ` and ${total - listed.length} more` : '';
  return new QmdError(
    'AMBIGUOUS',
    `"${input}" is the qmd 2.x docid of ${total} indexed documents: ${listed.join(', ')}${more}; give one of these paths or docids`,
  );
}
