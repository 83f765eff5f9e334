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
  body: string;
}

const columns = 'd.collection, d.path, d.docid, d.title, c.body FROM documents d JOIN content c ON c.hash = d.hash';
const bareDocid = /^[0-9a-f]{6,64}$/i;
/** Candidates named in an ambiguity error: enough to choose from, short enough for one line. */
const MAX_LISTED_CANDIDATES = 5;

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
 */
export class DocumentLookup {
  private readonly byPath;
  private readonly byDocid;
  private readonly byRelativePath;
  private readonly bySuffix;
  private readonly names;
  private readonly collectionRoots;

  constructor(db: Sqlite) {
    this.byPath = db.prepare<[string, string], DocumentRow>(`SELECT ${columns} WHERE d.collection = ? AND d.path = ?`);
    this.byDocid = db.prepare<[string], DocumentRow>(`SELECT ${columns} WHERE d.docid = ?`);
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
  matches(ref: DocumentRef): DocumentRow[] {
    if (ref.kind === 'docid') return present(this.byDocid.get(ref.docid));
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
    return present(this.byDocid.get(ref.path.toLowerCase()));
  }

  /** The single row of `rows`, or the error that says why there is not one. */
  only(rows: DocumentRow[], ref: DocumentRef, input: string): DocumentRow {
    const [first] = rows;
    if (first !== undefined && rows.length === 1) return first;
    if (rows.length > 1) throw ambiguous(input, rows);
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
    if (ref.kind === 'docid') return new QmdError('NOT_FOUND', `No indexed document has the id #${ref.docid}`);
    const wanted = ref.kind === 'rooted' ? `${ref.places[0]?.collection}/${ref.places[0]?.path}` : ref.path;
    const files = this.names.all().map((name) => `${name.collection}/${name.path}`);
    const close = closestFiles(wanted, files);
    const hint = close.length > 0 ? `. Did you mean: ${close.join(', ')}?` : '';
    return new QmdError('NOT_FOUND', `No indexed document "${input}"${hint}`);
  }
}

function present(row: DocumentRow | undefined): DocumentRow[] {
  return row === undefined ? [] : [row];
}

function ambiguous(input: string, rows: DocumentRow[]): QmdError {
  const listed = rows.slice(0, MAX_LISTED_CANDIDATES).map((row) => `${row.collection}/${row.path}`);
  const more = rows.length > listed.length ? ` and ${rows.length - listed.length} more` : '';
  return new QmdError(
    'AMBIGUOUS',
    `"${input}" matches ${rows.length} indexed documents: ${listed.join(', ')}${more}; give one of these paths`,
  );
}
