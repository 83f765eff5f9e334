import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { QmdError } from '../errors.js';
import type { CollectionRow } from './collections.js';
import { isInside } from './paths.js';
import type { Sqlite } from './sqlite.js';
import type { ContextInfo } from './types.js';

/** A context is a few words for a model's prompt, not a document. */
export const MAX_CONTEXT_CHARS = 2_000;

/** Where a context applies: a collection and a prefix in it, or (collection null) everywhere. */
export interface Place {
  collection: string | null;
  prefix: string;
}

interface ContextRow {
  collection: string | null;
  prefix: string;
  text: string;
  updated_at: string;
}

/**
 * The contexts table (schema in `schema-contexts.ts`): setting, listing and
 * removing contexts, and attaching them to search hits. Rows are read on every call, never
 * cached: another process (`qmd context add` beside a running server) may change them.
 */
export class Contexts {
  private readonly all;
  private readonly find;
  private readonly insert;
  private readonly update;
  private readonly remove;

  constructor(private readonly db: Sqlite) {
    // The global context first, then by collection, then shorter (wider) prefixes first.
    this.all = db.prepare<[], ContextRow>(
      `SELECT collection, prefix, text, updated_at FROM contexts
       ORDER BY collection IS NOT NULL, collection, prefix`,
    );
    this.find = db.prepare<[string, string], ContextRow>(
      `SELECT collection, prefix, text, updated_at FROM contexts WHERE ifnull(collection, '') = ? AND prefix = ?`,
    );
    this.insert = db.prepare<[string | null, string, string, string]>(
      'INSERT INTO contexts (collection, prefix, text, updated_at) VALUES (?, ?, ?, ?)',
    );
    this.update = db.prepare<[string, string, string, string]>(
      `UPDATE contexts SET text = ?, updated_at = ? WHERE ifnull(collection, '') = ? AND prefix = ?`,
    );
    this.remove = db.prepare<[string, string]>(`DELETE FROM contexts WHERE ifnull(collection, '') = ? AND prefix = ?`);
  }

  list(): ContextInfo[] {
    return this.all.all().map(toInfo);
  }

  /** Sets the context of `place` in one write transaction; says whether one was replaced. */
  set(place: Place, text: string): { context: ContextInfo; replaced: boolean } {
    const clean = checkText(text);
    const now = new Date().toISOString();
    const key = place.collection ?? '';
    const replaced = this.db.transaction(() => {
      if (this.update.run(clean, now, key, place.prefix).changes > 0) return true;
      this.insert.run(place.collection, place.prefix, clean, now);
      return false;
    });
    return {
      context: toInfo({ collection: place.collection, prefix: place.prefix, text: clean, updated_at: now }),
      replaced,
    };
  }

  delete(place: Place): ContextInfo {
    const key = place.collection ?? '';
    const removed = this.db.transaction(() => {
      const row = this.find.get(key, place.prefix);
      if (row !== undefined) this.remove.run(key, place.prefix);
      return row;
    });
    if (removed === undefined) {
      const known = this.list().map((c) => c.path);
      throw new QmdError('NOT_FOUND', `No context for ${placePath(place)}; contexts: ${known.join(', ') || '(none)'}`);
    }
    return toInfo(removed);
  }

  /**
   * Each hit with the contexts that cover it, widest first (global, collection, then each
   * folder down to the document), joined by a blank line, as qmd 2.8 joins them. A prefix
   * covers whole path segments: `talks` covers `talks/2024/x.md`, not `talkshow/x.md`.
   */
  attach<T extends { collection: string; path: string; context?: string }>(hits: T[]): T[] {
    if (hits.length === 0) return hits;
    const rows = this.all.all();
    if (rows.length === 0) return hits;
    return hits.map((hit) => {
      const context = coveringText(rows, hit);
      return context === undefined ? hit : { ...hit, context };
    });
  }

  /**
   * Each read document (`get`, `multi_get`, a `qmd://` resource) with the contexts that cover
   * it, as `attach` gives them to hits: a model that opens a note by path learns what its folder
   * is (qmd 2.8 puts them at the top of the text).
   */
  attachToDocuments<T extends { file: string; context?: string }>(docs: T[]): T[] {
    if (docs.length === 0) return docs;
    const rows = this.all.all();
    if (rows.length === 0) return docs;
    return docs.map((doc) => {
      // A collection name never holds a `/` (checkCollectionName): the first one ends it.
      const slash = doc.file.indexOf('/');
      const context = coveringText(rows, { collection: doc.file.slice(0, slash), path: doc.file.slice(slash + 1) });
      return context === undefined ? doc : { ...doc, context };
    });
  }
}

function coveringText(rows: ContextRow[], doc: { collection: string; path: string }): string | undefined {
  const texts = rows.filter((row) => covers(row, doc)).map((row) => row.text);
  return texts.length === 0 ? undefined : texts.join('\n\n');
}

function covers(row: ContextRow, doc: { collection: string; path: string }): boolean {
  if (row.collection === null) return true;
  if (row.collection !== doc.collection) return false;
  return row.prefix === '' || doc.path === row.prefix || doc.path.startsWith(`${row.prefix}/`);
}

function toInfo(row: ContextRow): ContextInfo {
  return {
    path: placePath(row),
    collection: row.collection,
    prefix: row.prefix,
    text: row.text,
    updatedAt: row.updated_at,
  };
}

/** `/`, `collection` or `collection/sub/dir`: how a place is shown and typed back. */
export function placePath(place: Place): string {
  if (place.collection === null) return '/';
  return place.prefix === '' ? place.collection : `${place.collection}/${place.prefix}`;
}

function checkText(text: string): string {
  const clean = text.trim();
  if (clean === '')
    throw new QmdError('BAD_ARGUMENT', 'A context needs some text: qmd context add PATH "what is there"');
  if (clean.length > MAX_CONTEXT_CHARS) {
    throw new QmdError(
      'BAD_ARGUMENT',
      `A context is at most ${MAX_CONTEXT_CHARS} characters (this one has ${clean.length})`,
    );
  }
  return clean;
}

/**
 * What PATH names (the forms `qmd context add` takes, qmd 2.8's among them):
 * - `/`: the global context;
 * - `collection` or `collection/sub/dir` (a path as `query` returns them), or the same as
 *   `qmd://collection/sub/dir`; the place need not exist yet (notes may come later);
 * - a directory or note on disk: absolute, `.`, `./x`, `../x`, `~/x`, or a relative path whose
 *   first segment is not a collection name; it must exist and lie inside a collection's root
 *   (the deepest root wins when roots nest).
 * A collection name wins over a folder of the same name in the current directory: `./name`
 * says the folder.
 */
export function resolvePlace(input: string, collections: CollectionRow[], cwd: string): Place {
  const typed = input.trim();
  if (typed === '')
    throw new QmdError('BAD_ARGUMENT', 'A context needs a PATH: /, a collection, collection/dir or a folder');
  if (typed === '/') return { collection: null, prefix: '' };
  if (/^qmd:\/\//i.test(typed)) return inCollection(decode(typed.slice('qmd://'.length)), collections, typed);
  if (looksLikeFilesystem(typed)) return onDisk(typed, collections, cwd);
  const first = typed.split('/')[0] ?? '';
  if (collections.some((c) => c.name === first)) return inCollection(typed, collections, typed);
  // qmd 2.8 reads a bare relative path as a folder under the current directory: so do we,
  // when there is such a folder and no collection of that name.
  const local = path.resolve(cwd, typed);
  if (fs.existsSync(local)) return onDisk(local, collections, cwd);
  throw new QmdError(
    'UNKNOWN_COLLECTION',
    `No collection named "${first}" (known: ${collections.map((c) => c.name).join(', ') || '(none)'}), ` +
      `and no folder ${local}; a PATH is /, a collection, collection/dir, or a folder inside a collection`,
  );
}

function looksLikeFilesystem(typed: string): boolean {
  return path.isAbsolute(typed) || typed === '.' || typed === '..' || typed === '~' || /^(\.{1,2}|~)\//.test(typed);
}

function inCollection(rest: string, collections: CollectionRow[], typed: string): Place {
  const [name = '', ...segments] = rest.split('/');
  if (!collections.some((c) => c.name === name)) {
    throw new QmdError(
      'UNKNOWN_COLLECTION',
      `No collection named "${name}" in ${typed}; known: ${collections.map((c) => c.name).join(', ') || '(none)'}`,
    );
  }
  return { collection: name, prefix: cleanPrefix(segments, typed) };
}

function onDisk(typed: string, collections: CollectionRow[], cwd: string): Place {
  const expanded = typed === '~' || typed.startsWith('~/') ? path.join(os.homedir(), typed.slice(1)) : typed;
  let real: string;
  try {
    real = fs.realpathSync.native(path.resolve(cwd, expanded));
  } catch (error) {
    throw new QmdError('NO_SUCH_DIRECTORY', `No such folder or file: ${typed}`, { cause: error });
  }
  const owner = collections.filter((c) => isInside(c.root, real)).sort((a, b) => b.root.length - a.root.length)[0];
  if (owner === undefined) {
    const roots = collections.map((c) => `${c.name} (${c.root})`).join(', ') || '(none)';
    throw new QmdError('OUTSIDE_COLLECTIONS', `${real} is not inside any collection; collections: ${roots}`);
  }
  const relative = path.relative(owner.root, real);
  return { collection: owner.name, prefix: relative === '' ? '' : relative.split(path.sep).join('/') };
}

/** Segments without empty ones and `.`; `..` is refused rather than resolved. */
function cleanPrefix(segments: string[], typed: string): string {
  const kept = segments.filter((s) => s !== '' && s !== '.');
  if (kept.includes('..')) throw new QmdError('BAD_ARGUMENT', `A context path may not contain "..": ${typed}`);
  return kept.join('/');
}

function decode(text: string): string {
  try {
    return text.split('/').map(decodeURIComponent).join('/');
  } catch {
    throw new QmdError('BAD_ARGUMENT', `Invalid percent-encoding in qmd://${text}`);
  }
}
