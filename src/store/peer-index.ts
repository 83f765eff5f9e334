import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { errorMessage, QmdError } from '../errors.js';
import { isPeerIndex } from './schema/schema.js';
import { Sqlite } from './sqlite.js';

/** A collection as qmd 2.x's index keeps it (`store_collections`, its copy of `index.yml`). */
export interface PeerIndexCollection {
  name: string;
  path: string;
  pattern: string;
  ignore: string[];
  update?: string;
  includeByDefault: boolean;
  /** Path prefix as stored (`''`, `/`, `/work`, `work`) → text. */
  context: Record<string, string>;
}

/** What `qmd migrate` reads from qmd 2.x's index. */
export interface PeerIndex {
  file: string;
  /** Empty for an index older than 2.x's `store_collections` (then the YAML alone says). */
  collections: PeerIndexCollection[];
  globalContext?: string;
  /** Active documents (files that still existed at its last update) per collection. */
  documents: Record<string, number>;
  /** Chunks it embedded, and with which model (the most used), for the one line about vectors. */
  embedded: { chunks: number; model?: string };
}

/**
 * Reads qmd 2.x's index at `file` and leaves it exactly as it was: the file (and its `-wal`,
 * which holds its last commits until a checkpoint) is copied into a temporary folder and the
 * copy is read. Opening the original, even read-only, would make SQLite create `-shm` (and
 * `-wal`) files beside it and take its locks. NOT_FOUND when there is no file; BAD_ARGUMENT
 * when it is not qmd 2.x's.
 */
export function readPeerIndex(file: string): PeerIndex {
  if (!fs.existsSync(file)) throw new QmdError('NOT_FOUND', `No qmd 2.x index at ${file}`);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'qmd-migrate-'));
  try {
    const copy = path.join(dir, 'peer.sqlite');
    fs.copyFileSync(file, copy);
    if (fs.existsSync(`${file}-wal`)) fs.copyFileSync(`${file}-wal`, `${copy}-wal`);
    let db: Sqlite;
    try {
      db = new Sqlite(copy);
    } catch (error) {
      throw new QmdError('BAD_ARGUMENT', `${file} cannot be read as SQLite: ${errorMessage(error)}`);
    }
    try {
      return read(db, file);
    } catch (error) {
      if (error instanceof QmdError) throw error;
      throw new QmdError('BAD_ARGUMENT', `${file} cannot be read as a qmd 2.x index: ${errorMessage(error)}`);
    } finally {
      db.close();
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function read(db: Sqlite, file: string): PeerIndex {
  if (!isPeerIndex(db)) throw new QmdError('BAD_ARGUMENT', `${file} is not an index of qmd 2.x`);
  const has = (table: string) =>
    db.value<number>("SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = ?", table) === 1;
  const collections = has('store_collections')
    ? db
        .prepare<
          [],
          {
            name: string;
            path: string;
            pattern: string | null;
            ignore_patterns: string | null;
            include_by_default: number | null;
            update_command: string | null;
            context: string | null;
          }
        >(
          'SELECT name, path, pattern, ignore_patterns, include_by_default, update_command, context FROM store_collections ORDER BY name',
        )
        .all()
        .map((row) => ({
          name: row.name,
          path: row.path,
          pattern: row.pattern ?? '**/*.md',
          ignore: strings(row.ignore_patterns),
          ...(row.update_command !== null && row.update_command.trim() !== '' && { update: row.update_command }),
          includeByDefault: row.include_by_default !== 0,
          context: texts(row.context),
        }))
    : [];
  const global = has('store_config')
    ? db.value<string>("SELECT value FROM store_config WHERE key = 'global_context'")
    : undefined;
  const documents: Record<string, number> = {};
  for (const row of db
    .prepare<[], { collection: string; n: number }>(
      'SELECT collection, count(*) AS n FROM documents WHERE active = 1 GROUP BY collection',
    )
    .all())
    documents[row.collection] = row.n;
  const embedded = has('content_vectors')
    ? (db
        .prepare<[], { chunks: number; model: string | null }>(
          'SELECT count(*) AS chunks, (SELECT model FROM content_vectors GROUP BY model ORDER BY count(*) DESC LIMIT 1) AS model FROM content_vectors',
        )
        .get() ?? { chunks: 0, model: null })
    : { chunks: 0, model: null };
  return {
    file,
    collections,
    ...(typeof global === 'string' && global.trim() !== '' && { globalContext: global }),
    documents,
    embedded: { chunks: embedded.chunks, ...(embedded.model !== null && { model: embedded.model }) },
  };
}

function strings(json: string | null): string[] {
  const parsed = parseJson(json);
  return Array.isArray(parsed) ? parsed.filter((item): item is string => typeof item === 'string') : [];
}

function texts(json: string | null): Record<string, string> {
  const parsed = parseJson(json);
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return {};
  return Object.fromEntries(
    Object.entries(parsed).filter((entry): entry is [string, string] => typeof entry[1] === 'string'),
  );
}

function parseJson(json: string | null): unknown {
  if (json === null) return undefined;
  try {
    return JSON.parse(json);
  } catch {
    return undefined;
  }
}
