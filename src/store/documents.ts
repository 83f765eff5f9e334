import { isQmdError, QmdError } from '../errors.js';
import { textMatchesHash } from '../text/content-hash.js';
import { lineStarts } from '../text/markdown.js';
import { indexProblem } from './index-problems.js';
import { DocumentLookup, type DocumentRow } from './lookup.js';
import { type DocumentRef, splitLineRange } from './refs.js';
import type { Sqlite } from './sqlite.js';
import {
  DEFAULT_MULTI_GET_MAX_BYTES,
  type DocumentSlice,
  type MultiGetOptions,
  type MultiGetResult,
  type ReadOptions,
} from './types.js';

/**
 * A list item that gave no document: `not found` (with the lookup's suggestions, as qmd 2.8's
 * `(did you mean: …?)`) when it names nothing, else the lookup's own words (ambiguous, malformed).
 */
function skippedFor(item: string, error: QmdError): MultiGetResult['skipped'][number] {
  if (error.code !== 'NOT_FOUND') return { file: item, reason: error.message, kind: 'refused' };
  const suggestions = /Did you mean: (.*)\?$/.exec(error.message)?.[1];
  return { file: item, reason: `not found${suggestions ? ` (did you mean: ${suggestions}?)` : ''}`, kind: 'not-found' };
}

/**
 * `get` and `multi_get`: text always comes from the index, never from the filesystem, and is
 * checked against the hash it was indexed under before it is served: a text that no longer
 * matches (a flipped bit that SQLite's page checks do not see, a row edited by hand) is a
 * damaged index (INDEX_CORRUPT), never served as the note. The check costs one SHA-256 of the
 * text served (docs/design.md §6, "A damaged index").
 */
export class DocumentReader {
  private readonly lookup;
  private readonly body;

  /** `indexPath` names the file in the damaged-index line. */
  constructor(
    db: Sqlite,
    private readonly indexPath: string,
  ) {
    this.lookup = new DocumentLookup(db);
    this.body = db.column<[string, string], string>(
      'SELECT c.body FROM documents d JOIN content c ON c.hash = d.hash WHERE d.collection = ? AND d.path = ?',
    );
  }

  /** The indexed text of each document, by `collection/path` (one indexed lookup each; absent when gone). */
  bodies(documents: ReadonlyArray<{ collection: string; path: string }>): Map<string, string> {
    const found = new Map<string, string>();
    for (const { collection, path } of documents) {
      const text = this.body.get(collection, path);
      if (text !== undefined) found.set(`${collection}/${path}`, text);
    }
    return found;
  }

  get(ref: string, options: ReadOptions = {}): DocumentSlice {
    const { row, range } = this.locate(ref);
    this.check(row);
    const fromLine = options.fromLine ?? range?.fromLine;
    const maxLines = options.maxLines ?? range?.maxLines;
    const part = slice(row, { fromLine, maxLines, lineNumbers: options.lineNumbers });
    // A range is exactly its lines: `a.md:2:2` is two lines, not two and an empty third for a
    // client that splits on newlines. A whole document stays as indexed.
    return fromLine === undefined && maxLines === undefined ? part : { ...part, text: withoutFinalLineEnd(part.text) };
  }

  /**
   * A glob or a comma list (each item a reference or a glob). Each document is whole, or its
   * first `maxLines`; one whose text is over `maxBytes` is skipped with the reason (qmd 2.8's
   * per-file cap), and so is every one past `totalBytes` in all.
   */
  multiGet(pattern: string, options: MultiGetOptions = {}): MultiGetResult {
    const maxBytes = positive(options.maxBytes ?? DEFAULT_MULTI_GET_MAX_BYTES, 'maxBytes');
    const totalBytes = options.totalBytes === undefined ? Infinity : positive(options.totalBytes, 'totalBytes');
    if (options.maxLines !== undefined) positive(options.maxLines, 'maxLines');
    const result: MultiGetResult = { documents: [], skipped: [] };
    let left = totalBytes;
    for (const row of this.matchAll(pattern, result.skipped)) {
      const file = `${row.collection}/${row.path}`;
      const raw = slice(row, { maxLines: options.maxLines });
      const bytes = Buffer.byteLength(raw.text, 'utf8');
      if (bytes > maxBytes) {
        result.skipped.push({
          file,
          reason: `too large: ${bytes} bytes > maxBytes ${maxBytes}; use get with maxLines`,
          kind: 'too-large',
        });
        continue;
      }
      const doc = options.lineNumbers ? { ...raw, text: numberLines(raw.text, 1) } : raw;
      const size = Buffer.byteLength(doc.text, 'utf8');
      if (size > left) {
        result.skipped.push({ file, reason: `the reply is full (${totalBytes} bytes in all)`, kind: 'full' });
        continue;
      }
      this.check(row);
      left -= size;
      result.documents.push({ ...doc, truncated: doc.lines < doc.totalLines });
    }
    return result;
  }

  /** The row's text is the text its hash was taken of, or the index is damaged. */
  private check(row: DocumentRow): void {
    if (textMatchesHash(row.body, row.hash)) return;
    throw indexProblem.damaged(
      this.indexPath,
      `the stored text of ${row.collection}/${row.path} does not match its content hash ${row.hash.slice(0, 12)}…`,
    );
  }

  /**
   * The document and the range a `:LINE` / `:FROM:COUNT` suffix asks for. The reference as
   * written is tried first, so a file whose name really ends in `:digits` stays readable.
   */
  private locate(input: string): { row: DocumentRow; range?: { fromLine: number; maxLines?: number } } {
    const range = splitLineRange(input);
    if (range === undefined) return { row: this.lookup.find(input) };
    const ref = this.parsedOrUndefined(input);
    const literal = ref === undefined ? [] : this.lookup.matches(ref);
    if (ref !== undefined && literal.length > 0) return { row: this.lookup.only(literal, ref, input) };
    return { row: this.lookup.find(range.ref), range };
  }

  /** `#docid:12` is no valid reference as it is (BAD_ARGUMENT); a traversal attempt still throws. */
  private parsedOrUndefined(input: string): DocumentRef | undefined {
    try {
      return this.lookup.parse(input);
    } catch (error) {
      if (isQmdError(error) && error.code === 'BAD_ARGUMENT') return undefined;
      throw error;
    }
  }

  /**
   * Every document the items of `pattern` name, each once, in the order named. Every item goes
   * through the authority before anything is looked up: a traversal attempt anywhere refuses
   * the whole call. An item that names nothing (or several, or is malformed) is listed in
   * `skipped` with why — unless it is the only item, when its error is the answer.
   */
  private matchAll(pattern: string, skipped: MultiGetResult['skipped']): DocumentRow[] {
    const items = splitList(pattern);
    if (items.length === 0) throw new QmdError('BAD_ARGUMENT', 'Empty pattern: use a glob or a comma list of paths');
    const parsed = items.map((item): { item: string; ref: DocumentRef } | { item: string; error: QmdError } => {
      try {
        return { item, ref: this.lookup.parse(item) };
      } catch (error) {
        if (items.length === 1 || !isQmdError(error) || error.code === 'OUTSIDE_COLLECTIONS') throw error;
        return { item, error };
      }
    });
    const seen = new Set<string>();
    const rows: DocumentRow[] = [];
    for (const entry of parsed) {
      if ('error' in entry) {
        skipped.push(skippedFor(entry.item, entry.error));
        continue;
      }
      let found: DocumentRow[];
      try {
        found = this.lookup.isGlob(entry.ref)
          ? this.lookup.glob(entry.ref)
          : [this.lookup.only(this.lookup.matches(entry.ref), entry.ref, entry.item)];
      } catch (error) {
        if (items.length === 1 || !isQmdError(error)) throw error;
        skipped.push(skippedFor(entry.item, error));
        continue;
      }
      if (found.length === 0) skipped.push({ file: entry.item, reason: 'no files matched', kind: 'no-match' });
      for (const row of found) {
        const file = `${row.collection}/${row.path}`;
        if (seen.has(file)) continue;
        seen.add(file);
        rows.push(row);
      }
    }
    return rows;
  }
}

function slice(
  row: DocumentRow,
  options: { fromLine?: number | undefined; maxLines?: number | undefined; lineNumbers?: boolean | undefined },
): DocumentSlice {
  const fromLine = options.fromLine ?? 1;
  if (!Number.isInteger(fromLine) || fromLine < 1) throw new QmdError('BAD_ARGUMENT', 'fromLine must be 1 or more');
  const maxLines = options.maxLines;
  if (maxLines !== undefined) positive(maxLines, 'maxLines');
  const starts = row.body === '' ? [] : lineStarts(row.body);
  const totalLines = starts.length;
  const file = `${row.collection}/${row.path}`;
  if (fromLine > Math.max(totalLines, 1)) {
    throw new QmdError('BAD_ARGUMENT', `fromLine ${fromLine} is past the end of ${file} (${totalLines} lines)`);
  }
  const first = fromLine - 1;
  const end = maxLines === undefined ? totalLines : Math.min(totalLines, first + maxLines);
  const text = row.body.slice(starts[first] ?? 0, starts[end] ?? row.body.length);
  return {
    file,
    docid: `#${row.docid}`,
    title: row.title,
    fromLine,
    lines: Math.max(0, end - first),
    totalLines,
    text: options.lineNumbers ? numberLines(text, fromLine) : text,
  };
}

/**
 * `12: text` for each line, numbered from `fromLine` (qmd 2.8's `N: ` format). Line ends are
 * kept as they are (`\r\n` too), and a final newline does not make a numbered empty line.
 */
export function numberLines(text: string, fromLine: number): string {
  if (text === '') return '';
  const starts = lineStarts(text);
  let numbered = '';
  for (let i = 0; i < starts.length; i++) {
    numbered += `${fromLine + i}: ${text.slice(starts[i], starts[i + 1] ?? text.length)}`;
  }
  return numbered;
}

function withoutFinalLineEnd(text: string): string {
  if (text.endsWith('\r\n')) return text.slice(0, -2);
  return text.endsWith('\n') ? text.slice(0, -1) : text;
}

function positive(value: number, name: string): number {
  if (!Number.isInteger(value) || value < 1) throw new QmdError('BAD_ARGUMENT', `${name} must be a whole number ≥ 1`);
  return value;
}

/** Splits on commas outside `{}` and `[]`, so `notes/{a,b}.md` stays one glob. */
function splitList(pattern: string): string[] {
  const items: string[] = [];
  let depth = 0;
  let current = '';
  for (const char of pattern) {
    if (char === '{' || char === '[') depth++;
    else if ((char === '}' || char === ']') && depth > 0) depth--;
    if (char === ',' && depth === 0) {
      items.push(current);
      current = '';
    } else {
      current += char;
    }
  }
  items.push(current);
  return items.map((item) => item.trim()).filter((item) => item !== '');
}
