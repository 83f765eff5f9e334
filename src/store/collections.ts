import * as fs from 'node:fs';
import * as path from 'node:path';
import { QmdError } from '../errors.js';
import type { Sqlite } from './sqlite.js';
import type { CollectionInfo } from './types.js';

export interface CollectionRow {
  name: string;
  root: string;
  mask: string;
}

/** The collections table: listing, lookups, and the checks `addCollection` needs. */
export class Collections {
  private readonly list;
  private readonly rows;
  private readonly byName;
  private readonly byRoot;
  private readonly insert;
  private readonly remove;

  constructor(db: Sqlite) {
    this.list = db.prepare<[], { name: string; root: string; mask: string; updated_at: string; documents: number }>(
      `SELECT c.name, c.root, c.mask, c.updated_at,
         (SELECT count(*) FROM documents d WHERE d.collection = c.name) AS documents
       FROM collections c ORDER BY c.name`,
    );
    this.rows = db.prepare<[], CollectionRow>('SELECT name, root, mask FROM collections ORDER BY name');
    this.byName = db.prepare<[string], CollectionRow>('SELECT name, root, mask FROM collections WHERE name = ?');
    this.byRoot = db.prepare<[string], CollectionRow>('SELECT name, root, mask FROM collections WHERE root = ?');
    this.insert = db.prepare<[string, string, string, string]>(
      'INSERT INTO collections (name, root, mask, updated_at) VALUES (?, ?, ?, ?)',
    );
    this.remove = db.prepare<[string]>('DELETE FROM collections WHERE name = ?');
  }

  info(): CollectionInfo[] {
    return this.list.all().map((row) => ({
      name: row.name,
      root: row.root,
      mask: row.mask,
      documents: row.documents,
      updatedAt: row.updated_at,
    }));
  }

  all(): CollectionRow[] {
    return this.rows.all();
  }

  names(): string[] {
    return this.rows.all().map((row) => row.name);
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

  add(row: CollectionRow, now: string): void {
    this.insert.run(row.name, row.root, row.mask, now);
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
