import type { Migration } from './schema.js';

/**
 * Version 6: what qmd 2.x keeps per collection besides its folder and mask, so that
 * `qmd migrate` carries it over and `qmd collection include|exclude|update-cmd` set it:
 *
 * - `ignore`: a JSON array of globs, relative to the root, whose files are not indexed (qmd
 *   2.x's `ignore:`, YAML-only there; `[]` for none). `scan.ts` hands them to tinyglobby
 *   beside the built-in `**\/node_modules/**`.
 * - `update_command`: a shell command `qmd update` runs in the collection's root before it
 *   scans (qmd 2.x's `update:`, e.g. `git pull`); NULL for none.
 * - `include_by_default`: 0 keeps the collection out of searches that name no collection
 *   (qmd 2.x's `includeByDefault: false`); a search that names it still searches it.
 *
 * Columns on `collections` rather than a table of their own: a rename carries them with the
 * row, and a removed collection takes them with it.
 */
const schemaV6 = `
ALTER TABLE collections ADD COLUMN ignore TEXT NOT NULL DEFAULT '[]';
ALTER TABLE collections ADD COLUMN update_command TEXT;
ALTER TABLE collections ADD COLUMN include_by_default INTEGER NOT NULL DEFAULT 1;
`;

export const collectionSettingsMigration: Migration = { version: 6, up: (db) => db.exec(schemaV6) };
