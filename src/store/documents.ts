import type Database from 'better-sqlite3';
import picomatch from 'picomatch';
import { QmdError } from '../errors.js';
import { lineStarts } from './markdown.js';
import { hasDotDot } from './paths.js';
import { type DocumentRef, parseRef } from './refs.js';
import type { DocumentSlice, MultiGetResult } from './types.js';

interface DocumentRow {
  collection: string;
  path: string;
  docid: string;
  title: string;
  body: string;
}

const columns = 'd.collection, d.path, d.docid, d.title, c.body FROM documents d JOIN content c ON c.hash = d.hash';

export const defaultMaxBytes = 100_000;

/** `get` and `multi_get`: text always comes from the index, never from the filesystem. */
export class DocumentReader {
  private readonly byPath;
  private readonly byDocid;
  private readonly collectionExists;
  private readonly names;
  private readonly namesIn;

  constructor(db: Database.Database) {
    this.byPath = db.prepare<[string, string], DocumentRow>(`SELECT ${columns} WHERE d.collection = ? AND d.path = ?`);
    this.byDocid = db.prepare<[string], DocumentRow>(`SELECT ${columns} WHERE d.docid = ?`);
    this.collectionExists = db.prepare<[string], unknown>('SELECT 1 FROM collections WHERE name = ?').pluck();
    this.names = db.prepare<[], { collection: string; path: string }>(
      'SELECT collection, path FROM documents ORDER BY collection, path',
    );
    this.namesIn = db.prepare<[string], { collection: string; path: string }>(
      'SELECT collection, path FROM documents WHERE collection = ? ORDER BY path',
    );
  }

  get(ref: string, options: { fromLine?: number; maxLines?: number } = {}): DocumentSlice {
    return slice(this.find(parseRef(ref), ref), options);
  }

  /**
   * A glob over `collection/path` or a comma list (each item a path, a `#docid` or a glob).
   * Documents are taken in order, whole, while they fit in `maxBytes` (UTF-8 bytes of text);
   * one that does not fit is skipped with the reason and later smaller ones may still fit.
   * If the very first match alone is larger than `maxBytes`, its head (whole lines) is
   * returned with `truncated: true` so a single large note still gives something.
   */
  multiGet(pattern: string, options: { maxBytes?: number } = {}): MultiGetResult {
    const maxBytes = options.maxBytes ?? defaultMaxBytes;
    if (!Number.isInteger(maxBytes) || maxBytes < 1) {
      throw new QmdError('BAD_ARGUMENT', 'maxBytes must be a positive integer');
    }
    const items = splitList(pattern);
    if (items.length === 0) throw new QmdError('BAD_ARGUMENT', 'Empty pattern: use a glob or a comma list of paths');
    const result: MultiGetResult = { documents: [], skipped: [] };
    const seen = new Set<string>();
    const matches: DocumentRow[] = [];
    for (const item of items) {
      try {
        const rows = picomatch.scan(item).isGlob ? this.glob(item) : [this.find(parseRef(item), item)];
        if (rows.length === 0) result.skipped.push({ file: item, reason: 'no indexed document matches' });
        for (const row of rows) {
          const file = `${row.collection}/${row.path}`;
          if (seen.has(file)) continue;
          seen.add(file);
          matches.push(row);
        }
      } catch (error) {
        if (items.length === 1 || !(error instanceof QmdError)) throw error;
        result.skipped.push({ file: item, reason: error.message });
      }
    }
    let left = maxBytes;
    for (const row of matches) {
      const file = `${row.collection}/${row.path}`;
      const bytes = Buffer.byteLength(row.body, 'utf8');
      if (bytes <= left) {
        result.documents.push({ ...slice(row, {}), truncated: false });
        left -= bytes;
        continue;
      }
      const head = result.documents.length === 0 && left === maxBytes ? headWithin(row.body, maxBytes) : undefined;
      if (head !== undefined && head.lines > 0) {
        result.documents.push({ ...slice(row, { maxLines: head.lines }), truncated: true });
        left -= head.bytes;
      } else {
        result.skipped.push({ file, reason: `maxBytes reached: ${bytes} bytes, ${left} of ${maxBytes} left` });
      }
    }
    return result;
  }

  private find(ref: DocumentRef, input: string): DocumentRow {
    if (ref.kind === 'docid') {
      const row = this.byDocid.get(ref.docid);
      if (row === undefined) throw new QmdError('NOT_FOUND', `No indexed document has the id #${ref.docid}`);
      return row;
    }
    this.requireCollection(ref.collection, input);
    const row = this.byPath.get(ref.collection, ref.path);
    if (row === undefined) throw new QmdError('NOT_FOUND', `No indexed document ${ref.collection}/${ref.path}`);
    return row;
  }

  private requireCollection(collection: string, input: string): void {
    if (this.collectionExists.get(collection) === undefined) {
      throw new QmdError(
        'OUTSIDE_COLLECTIONS',
        `"${input}" is outside the indexed collections (there is no collection "${collection}")`,
      );
    }
  }

  private glob(pattern: string): DocumentRow[] {
    const trimmed = pattern.trim();
    if (trimmed.startsWith('/') || hasDotDot(trimmed)) {
      throw new QmdError('OUTSIDE_COLLECTIONS', `"${pattern}" reaches outside the indexed collections`);
    }
    const isMatch = picomatch(trimmed, { dot: true });
    // A literal first segment names the collection: only its rows are listed.
    const first = trimmed.split('/')[0] ?? '';
    const literal = !picomatch.scan(first).isGlob;
    if (literal) this.requireCollection(first, pattern);
    const names = literal ? this.namesIn.all(first) : this.names.all();
    const rows: DocumentRow[] = [];
    for (const name of names) {
      if (!isMatch(`${name.collection}/${name.path}`)) continue;
      const row = this.byPath.get(name.collection, name.path);
      if (row !== undefined) rows.push(row);
    }
    return rows;
  }
}

function slice(row: DocumentRow, options: { fromLine?: number; maxLines?: number }): DocumentSlice {
  const fromLine = options.fromLine ?? 1;
  if (!Number.isInteger(fromLine) || fromLine < 1) throw new QmdError('BAD_ARGUMENT', 'fromLine must be 1 or more');
  const maxLines = options.maxLines;
  if (maxLines !== undefined && (!Number.isInteger(maxLines) || maxLines < 1)) {
    throw new QmdError('BAD_ARGUMENT', 'maxLines must be 1 or more');
  }
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
    text,
  };
}

/** The most whole lines of `text` that fit in `maxBytes` (none if the first line alone is larger). */
function headWithin(text: string, maxBytes: number): { lines: number; bytes: number } {
  const starts = lineStarts(text);
  let bytes = 0;
  let lines = 0;
  for (let i = 0; i < starts.length; i++) {
    const line = text.slice(starts[i], starts[i + 1] ?? text.length);
    const size = Buffer.byteLength(line, 'utf8');
    if (bytes + size > maxBytes) break;
    bytes += size;
    lines++;
  }
  return { lines, bytes };
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
