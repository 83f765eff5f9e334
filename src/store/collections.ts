import * as fs from 'node:fs';
import * as path from 'node:path';
import { QmdError } from '../errors.js';
import type { Sqlite } from './sqlite.js';
import type { CollectionInfo } from './types.js';

export interface CollectionRow {
  name: string;
  root: string;
  mask: string;
  /** Globs relative to the root whose files are not indexed (schema 6). */
  ignore: string[];
}

/** What `qmd collection add` and `qmd migrate` may set besides the folder and the mask (schema 6). */
export interface CollectionSettings {
  ignore?: string[];
  /** A shell command `qmd update` runs in the root first; null clears it. */
  update?: string | null;
  includeByDefault?: boolean;
}

interface StoredRow {
  name: string;
  root: string;
  mask: string;
  ignore: string;
  update_command: string | null;
  include_by_default: number;
  updated_at: string;
  documents: number;
}

const columns = 'name, root, mask, ignore';

/** The collections table: listing, lookups, and the checks `addCollection` needs. */
export class Collections {
  private readonly list;
  private readonly rows;
  private readonly byName;
  private readonly byRoot;
  private readonly insert;
  private readonly remove;
  private readonly setUpdate;
  private readonly setInclude;
  private readonly setMask;
  private readonly renameRows;
  private readonly inclusion;

  constructor(private readonly db: Sqlite) {
    this.list = db.prepare<[], StoredRow>(
      `SELECT c.name, c.root, c.mask, c.ignore, c.update_command, c.include_by_default, c.updated_at,
         (SELECT count(*) FROM documents d WHERE d.collection = c.name) AS documents
       FROM collections c ORDER BY c.name`,
    );
    this.rows = db.prepare<[], StoredRow>(`SELECT ${columns} FROM collections ORDER BY name`);
    this.byName = db.prepare<[string], StoredRow>(`SELECT ${columns} FROM collections WHERE name = ?`);
    this.byRoot = db.prepare<[string], StoredRow>(`SELECT ${columns} FROM collections WHERE root = ?`);
    this.insert = db.prepare<[string, string, string, string, string | null, number, string]>(
      `INSERT INTO collections (name, root, mask, ignore, update_command, include_by_default, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?)`,
    );
    this.remove = db.prepare<[string]>('DELETE FROM collections WHERE name = ?');
    this.setUpdate = db.prepare<[string | null, string]>('UPDATE collections SET update_command = ? WHERE name = ?');
    this.setInclude = db.prepare<[number, string]>('UPDATE collections SET include_by_default = ? WHERE name = ?');
    this.setMask = db.prepare<[string, string]>('UPDATE collections SET mask = ? WHERE name = ?');
    // Read by every search that names no collection: names and flags only, no document count.
    this.inclusion = db.prepare<[], { name: string; include_by_default: number }>(
      'SELECT name, include_by_default FROM collections ORDER BY name',
    );
    // A document's collection is copied into `vector_rows` by trigger (schema 4), so the
    // rename reaches the vectors' partition too; `Vectors.syncCodes` follows before COMMIT.
    this.renameRows = [
      db.prepare<[string, string]>('UPDATE collections SET name = ? WHERE name = ?'),
      db.prepare<[string, string]>('UPDATE documents SET collection = ? WHERE collection = ?'),
      db.prepare<[string, string]>('UPDATE contexts SET collection = ? WHERE collection = ?'),
    ];
  }

  info(): CollectionInfo[] {
    return this.list.all().map((row) => ({
      name: row.name,
      root: row.root,
      mask: row.mask,
      ignore: parseIgnore(row.ignore),
      ...(row.update_command !== null && { update: row.update_command }),
      includeByDefault: row.include_by_default !== 0,
      documents: row.documents,
      updatedAt: row.updated_at,
    }));
  }

  all(): CollectionRow[] {
    return this.rows.all().map(toRow);
  }

  /**
   * The names searched when a search names none: every collection but those excluded
   * (`qmd collection exclude`), or undefined when none is, so that such a search needs no
   * filter at all.
   */
  defaultNames(): string[] | undefined {
    const all = this.inclusion.all();
    if (all.every((row) => row.include_by_default !== 0)) return undefined;
    return all.filter((row) => row.include_by_default !== 0).map((row) => row.name);
  }

  names(): string[] {
    return this.rows.all().map((row) => row.name);
  }

  get(name: string): CollectionRow | undefined {
    const row = this.byName.get(name);
    return row === undefined ? undefined : toRow(row);
  }

  /** A free name: `base`, else `base-2`, `base-3`… */
  freeName(base: string): string {
    if (this.byName.get(base) === undefined) return base;
    for (let n = 2; ; n++) {
      const candidate = `${base.slice(0, 60)}-${n}`;
      if (this.byName.get(candidate) === undefined) return candidate;
    }
  }

  refuseDuplicate(name: string, root: string): void {
    const sameRoot = this.byRoot.get(root);
    if (sameRoot !== undefined) {
      throw new QmdError('COLLECTION_EXISTS', `${root} is already indexed as collection "${sameRoot.name}"`);
    }
    if (this.byName.get(name) !== undefined) {
      throw new QmdError('COLLECTION_EXISTS', `A collection named "${name}" already exists; pick another --name`);
    }
  }

  add(row: Omit<CollectionRow, 'ignore'>, settings: CollectionSettings, now: string): void {
    this.insert.run(
      row.name,
      row.root,
      row.mask,
      JSON.stringify(settings.ignore ?? []),
      settings.update ?? null,
      settings.includeByDefault === false ? 0 : 1,
      now,
    );
  }

  /** Sets the update command (null clears it), whether unscoped searches include it, its mask (the next scan applies it). */
  configure(name: string, settings: Pick<CollectionSettings, 'update' | 'includeByDefault'> & { mask?: string }): void {
    this.require(name);
    if (settings.mask !== undefined) this.setMask.run(settings.mask, name);
    if (settings.update !== undefined) this.setUpdate.run(settings.update, name);
    if (settings.includeByDefault !== undefined) this.setInclude.run(settings.includeByDefault ? 1 : 0, name);
  }

  /**
   * Renames a collection with everything that names it: its documents (whose docids stay),
   * its contexts and its vectors' rows. In the caller's transaction; foreign keys are checked
   * at its COMMIT (`defer_foreign_keys`), when every row names the new collection.
   */
  rename(from: string, to: string): void {
    this.require(from);
    if (this.byName.get(to) !== undefined) {
      throw new QmdError('COLLECTION_EXISTS', `A collection named "${to}" already exists; pick another name`);
    }
    this.db.pragma('defer_foreign_keys = ON');
    for (const statement of this.renameRows) statement.run(to, from);
  }

  private require(name: string): void {
    if (this.byName.get(name) === undefined) {
      throw new QmdError(
        'UNKNOWN_COLLECTION',
        `No collection named "${name}"; known: ${this.names().join(', ') || '(none)'}`,
      );
    }
  }

  /** Removes the collection; its documents go by cascade (their FTS rows by trigger). */
  delete(name: string): void {
    if (this.remove.run(name).changes === 0) {
      throw new QmdError(
        'UNKNOWN_COLLECTION',
        `No collection named "${name}"; known: ${this.names().join(', ') || '(none)'}`,
      );
    }
  }
}

function toRow(row: Pick<StoredRow, 'name' | 'root' | 'mask' | 'ignore'>): CollectionRow {
  return { name: row.name, root: row.root, mask: row.mask, ignore: parseIgnore(row.ignore) };
}

function parseIgnore(json: string): string[] {
  const parsed: unknown = JSON.parse(json);
  return Array.isArray(parsed) ? parsed.filter((item): item is string => typeof item === 'string') : [];
}

/** An update command is what `bash -c` runs; a blank one is none (`update-cmd NAME` clears it). */
export function checkUpdateCommand(command: string): string | null {
  const trimmed = command.trim();
  if (trimmed === '') return null;
  if (trimmed.includes('\0')) throw new QmdError('BAD_ARGUMENT', 'An update command cannot contain NUL');
  return trimmed;
}

/** The real path of an existing directory, or NO_SUCH_DIRECTORY. */
export function realDirectory(dir: string): string {
  let real: string;
  try {
    real = fs.realpathSync.native(path.resolve(dir));
  } catch (error) {
    throw new QmdError('NO_SUCH_DIRECTORY', `No such directory: ${dir}`, { cause: error });
  }
  if (!fs.statSync(real).isDirectory()) throw new QmdError('NO_SUCH_DIRECTORY', `Not a directory: ${dir}`);
  return real;
}
