import type { Migration } from './schema.js';

/**
 * Version 3: contexts, a few words that say what a collection or a folder in it
 * holds ("Weekly team meeting notes"), returned with the results they describe and summarised
 * in the MCP server's instructions, as qmd 2.8 does.
 *
 * - A context belongs to a collection and a path prefix inside it (`''` is the whole
 *   collection), or to no collection at all (`collection IS NULL`, prefix `''`): the global
 *   context, qmd 2.8's `/`. One row per place: a unique index over the pair, NULL read as `''`
 *   (no collection can be named `''`).
 * - It goes with its collection (ON DELETE CASCADE): a context left pointing at a removed
 *   collection would describe nothing, or, after a new collection took the name, the wrong notes.
 * - The prefix is stored without leading or trailing `/`; matching is by whole segments
 *   (`talks` describes `talks/2024/x.md`, not `talkshow/x.md`; `contexts.ts`).
 */
const schemaV3 = `
CREATE TABLE contexts (
  id INTEGER PRIMARY KEY,
  collection TEXT REFERENCES collections(name) ON DELETE CASCADE,
  prefix TEXT NOT NULL,
  text TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  CHECK (collection IS NOT NULL OR prefix = '')
) STRICT;

CREATE UNIQUE INDEX contexts_by_place ON contexts(ifnull(collection, ''), prefix);
`;

export const contextsMigration: Migration = { version: 3, up: (db) => db.exec(schemaV3) };
